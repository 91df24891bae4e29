"""Qt widgets, item models, the wizard and the tray: thin, no business rules."""
