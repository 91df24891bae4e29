"""The main window: sidebar of pages, banners, status bar; remembers geometry and last page."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QSize, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMessageBox,
    QStackedWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.notifier import Level, Message
from gpu_companion.ui.common.icons import icon
from gpu_companion.ui.common.page import Page
from gpu_companion.ui.common.widgets import BannerArea

if TYPE_CHECKING:
    from gpu_companion.services import Services
    from gpu_companion.ui.shell.tray import Tray


class MainWindow(QMainWindow):
    """The sidebar of pages, and the `Navigator` they use to reach each other, the tray and the
    wizard."""

    message_posted = Signal(object)  # re-posts notifier messages onto the GUI thread

    def __init__(self, ctx: Services, pages: list[type[Page]]) -> None:
        super().__init__()
        self.ctx = ctx
        self.tray: Tray | None = None
        self.wizard: QWidget | None = None  # the open first-rental wizard, if any
        self.quit_app: Callable[[], None] = lambda: None
        self.setWindowTitle("GPU Companion")
        self.setWindowIcon(icon("app"))
        self.setMinimumSize(QSize(720, 480))
        self.keep_in_tray = False  # set by the app when a tray exists and a rental runs
        self._quitting = False  # the user chose to quit: every close from now on is accepted

        toolbar = QToolBar("Main")
        toolbar.setObjectName("mainToolbar")
        toolbar.setMovable(False)
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.wizard_action = QAction(icon("wizard"), "First-rental wizard", self)
        self.wizard_action.setObjectName("wizardAction")
        self.wizard_action.triggered.connect(self.open_wizard)
        toolbar.addAction(self.wizard_action)
        self.addToolBar(toolbar)

        self.sidebar = QListWidget()
        self.sidebar.setObjectName("sidebar")
        self.sidebar.setIconSize(QSize(20, 20))
        self.sidebar.setFixedWidth(170)
        self.stack = QStackedWidget()
        self.pages: dict[str, Page] = {}
        for cls in pages:
            page = cls(ctx, self)
            self.pages[cls.key] = page
            self.stack.addWidget(page)
            item = QListWidgetItem(icon(cls.icon_name), cls.title)
            item.setData(Qt.ItemDataRole.UserRole, cls.key)
            item.setSizeHint(QSize(150, 36))
            self.sidebar.addItem(item)
        self.sidebar.currentRowChanged.connect(self._on_row)

        self.banners = BannerArea()
        central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addWidget(self.banners)
        body = QHBoxLayout()
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(self.sidebar)
        body.addWidget(self.stack, 1)
        outer.addLayout(body, 1)
        self.setCentralWidget(central)
        self.statusBar().showMessage("Ready")

        self.message_posted.connect(self._show_message, Qt.ConnectionType.QueuedConnection)
        self._unsubscribe = ctx.notifier.subscribe(self.message_posted.emit)
        self._restore()

    # navigation
    def current_key(self) -> str:
        item = self.sidebar.currentItem()
        return str(item.data(Qt.ItemDataRole.UserRole)) if item else ""

    def navigate(self, key: str) -> Page:
        keys = list(self.pages)
        self.sidebar.setCurrentRow(keys.index(key))
        return self.pages[key]

    def open_release(self, alias: str) -> None:
        """Open the release checklist of one host (tray menu, rental alerts)."""
        from gpu_companion.ui.release.page import ReleasePage

        page = self.navigate("release")
        if isinstance(page, ReleasePage):
            page.open_host(alias)

    def open_wizard(self) -> None:
        """Open the guided first-rental wizard; its new host shows on the Hosts page after."""
        from gpu_companion.ui.wizard import FirstRentalWizard

        self.wizard = FirstRentalWizard(self.ctx, parent=self)
        self.wizard.finished.connect(lambda _result: self.navigate("hosts").refresh())
        self.wizard.open()

    def refresh_tray(self) -> None:
        if self.tray is not None:
            self.tray.refresh()

    def _on_row(self, row: int) -> None:
        if row < 0:
            return
        self.stack.setCurrentIndex(row)
        page = self.stack.currentWidget()
        if isinstance(page, Page):
            page.refresh()
            self.ctx.store.set_setting("ui.last_page", page.key)

    # messages
    def _show_message(self, message: Message) -> None:
        self.statusBar().showMessage(message.text, 10000)
        if message.level is not Level.INFO:
            if self.tray is not None and self.tray.icon is not None:
                self.tray.deliver(message)
            else:
                self.banners.show_message(message)

    # geometry
    def _restore(self) -> None:
        geometry = self.ctx.store.get_setting("ui.geometry")
        if geometry:
            self.restoreGeometry(QByteArray.fromBase64(geometry.encode()))
        else:
            self.resize(1100, 700)
        last = self.ctx.store.get_setting("ui.last_page", "hosts") or "hosts"
        self.navigate(last if last in self.pages else "hosts")

    def save_state(self) -> None:
        self.ctx.store.set_setting(
            "ui.geometry", bytes(self.saveGeometry().toBase64().data()).decode()
        )

    def bring_forward(self) -> None:
        self.show()
        self.setWindowState(self.windowState() & ~Qt.WindowState.WindowMinimized)
        self.raise_()
        self.activateWindow()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_state()
        if self._quitting:  # Qt closes every window when the application quits
            event.accept()
            return
        if self.keep_in_tray and self.tray is not None and self.tray.icon is not None:
            event.ignore()
            self.hide()
            self.tray.icon.showMessage(
                "GPU Companion", "Still running in the tray: a rental is being metered."
            )
            return
        if not self._confirm_quit("Close GPU Companion?"):  # no tray: closing quits
            event.ignore()
            return
        event.accept()
        self._quit()

    def request_quit(self) -> None:
        """The tray's Quit: quits the app (never only hides it), asking first while a rental
        is metered, since the instance keeps running and costing on the provider."""
        if self._confirm_quit("Quit GPU Companion?"):
            self._quit()

    def _quit(self) -> None:
        if not self._quitting:
            self._quitting = True
            self._unsubscribe()
        self.quit_app()

    def _confirm_quit(self, title: str) -> bool:
        from gpu_companion.core.spend.quitting import still_running_text

        text = still_running_text(self.ctx.ledger)
        if not text:
            return True
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, parent=self)
        box.setObjectName("quitConfirm")
        quit_button = box.addButton("Quit anyway", QMessageBox.ButtonRole.AcceptRole)
        stay = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(stay)
        box.exec()
        return box.clickedButton() is quit_button

    def show_error_dialog(self, text: str) -> None:
        QMessageBox.critical(self, "GPU Companion", text)
