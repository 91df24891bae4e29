"""The window around the pages: main window, tray, single instance, welcome, first paint."""
