"""The tray icon where a system tray exists; otherwise alerts fall back to in-app banners."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from gpu_companion.core.notifier import Level, Message
from gpu_companion.ui.icons import icon


class Tray(QObject):
    """Delivers notifier messages: a tray balloon when a tray exists, else `fallback(message)`."""

    def __init__(
        self,
        show_window: Callable[[], None],
        quit_app: Callable[[], None],
        fallback: Callable[[Message], None],
        parent: QObject | None = None,
        available: bool | None = None,
    ) -> None:
        super().__init__(parent)
        self.fallback = fallback
        self.available = QSystemTrayIcon.isSystemTrayAvailable() if available is None else available
        self.icon: QSystemTrayIcon | None = None
        if self.available:
            self.icon = QSystemTrayIcon(icon("tray-idle"), self)
            self.icon.setToolTip("GPU Companion — nothing running")
            menu = QMenu()
            menu.addAction("Open GPU Companion", show_window)
            menu.addSeparator()
            menu.addAction("Quit", quit_app)
            self.icon.setContextMenu(menu)
            self._menu = menu
            self.icon.activated.connect(lambda _reason: show_window())
            self.icon.show()

    def deliver(self, message: Message) -> None:
        if self.icon is not None and message.level is not Level.INFO:
            kind = (
                QSystemTrayIcon.MessageIcon.Critical
                if message.level is Level.ERROR
                else QSystemTrayIcon.MessageIcon.Warning
            )
            self.icon.showMessage("GPU Companion", message.text, kind)
        else:
            self.fallback(message)

    def hide(self) -> None:
        if self.icon is not None:
            self.icon.hide()
