"""The main window: sidebar of pages, banners, status bar; remembers geometry and last page.

Pages are built when first needed: right after the first paint, the one shown at start first,
then the others (so every page exists, and listens, a moment after launch). The first frame is
the window itself (toolbar, sidebar, status bar) with the start page's place still empty.

Nothing here touches `PySide6.QtCore.Qt` before the first paint: that namespace makes its ~100
enums at once when first reached, 15-20 ms of a start-up measured against a bare Qt window
(benchmarks/startup.py). tests/ui/shell/test_startup_first_frame.py keeps it so."""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import (
    QByteArray,
    QCoreApplication,
    QEvent,
    QObject,
    QSize,
    QTimer,
    Signal,
)
from PySide6.QtGui import QAction, QCloseEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
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
    from gpu_companion.ui.release.countdown import CountdownBanners
    from gpu_companion.ui.shell.tray import Tray

# Qt.ItemDataRole.UserRole: a sidebar item's page key (the role is a plain int to Qt)
KEY_ROLE = 0x0100


@dataclass(frozen=True)
class LazyPage:
    """A sidebar entry: what the sidebar shows, and where the page class lives."""

    key: str
    title: str  # marked with QT_TRANSLATE_NOOP("Sidebar", ...), translated where shown
    icon_name: str
    path: str  # "package.module:ClassName"

    def load(self) -> type[Page]:
        module, name = self.path.split(":")
        cls = getattr(importlib.import_module(module), name)
        assert issubclass(cls, Page) and cls.key == self.key, self.path
        return cls  # type: ignore[no-any-return]


class _Pages(Mapping[str, Page]):
    """The window's pages by key, in sidebar order; a page is built on first access."""

    def __init__(self, window: MainWindow, specs: Sequence[LazyPage | type[Page]]) -> None:
        self._window = window
        self._specs = {spec.key: spec for spec in specs}
        self._built: dict[str, Page] = {}

    def __getitem__(self, key: str) -> Page:
        page = self._built.get(key)
        if page is None:
            spec = self._specs[key]
            cls = spec.load() if isinstance(spec, LazyPage) else spec
            page = cls(self._window.ctx, self._window)
            self._built[key] = page
            self._window._place(list(self._specs).index(key), page)
        return page

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)

    def built(self, key: str) -> bool:
        return key in self._built


class _AfterFirstPaint(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self._window and event.type() == QEvent.Type.Paint:
            self._window.removeEventFilter(self)
            QTimer.singleShot(0, self._window.after_first_paint)
        return False


class MainWindow(QMainWindow):
    """The sidebar of pages, and the `Navigator` they use to reach each other, the tray and the
    wizard."""

    message_posted = Signal(object)  # re-posts notifier messages onto the GUI thread

    def __init__(self, ctx: Services, pages: Sequence[LazyPage | type[Page]]) -> None:
        super().__init__()
        self.ctx = ctx
        self.tray: Tray | None = None
        self.wizard: QWidget | None = None  # the open first-rental wizard, if any
        self.make_countdowns: Callable[[], CountdownBanners] | None = None  # ui/shell/build.py
        self._countdowns: CountdownBanners | None = None
        self.quit_app: Callable[[], None] = lambda: None
        self.setWindowTitle("GPU Companion")
        self.setWindowIcon(icon("app"))
        self.setMinimumSize(QSize(720, 480))
        self.keep_in_tray = False  # set by the app when a tray exists and a rental runs
        # messages some feature shows its own way (True: handled), e.g. the auto-release countdown
        self.message_handlers: list[Callable[[Message], bool]] = []
        # the app is quitting (the user chose to, or a smoke test ends): closes are accepted
        self.quitting = False

        toolbar = QToolBar(self.tr("Main"))
        toolbar.setObjectName("mainToolbar")
        toolbar.setMovable(False)
        # Qt.ToolButtonStyle.ToolButtonTextBesideIcon, by its name (see the module's docstring)
        toolbar.setProperty("toolButtonStyle", "ToolButtonTextBesideIcon")
        self.wizard_action = QAction(icon("wizard"), self.tr("First-rental wizard"), self)
        self.wizard_action.setObjectName("wizardAction")
        self.wizard_action.triggered.connect(self.open_wizard)
        toolbar.addAction(self.wizard_action)
        self.addToolBar(toolbar)

        self.sidebar = QListWidget()
        self.sidebar.setObjectName("sidebar")
        self.sidebar.setIconSize(QSize(20, 20))
        self.sidebar.setFixedWidth(170)
        self.stack = QStackedWidget()
        self.pages = _Pages(self, pages)
        for spec in pages:
            self.stack.addWidget(QWidget())  # the page's place until it is built
            item = QListWidgetItem(
                icon(spec.icon_name), QCoreApplication.translate("Sidebar", spec.title)
            )
            item.setData(KEY_ROLE, spec.key)
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
        self.statusBar().showMessage(self.tr("Ready"))

        self._posting = threading.Lock()
        self._posting_connected = False
        self._unsubscribe = ctx.notifier.subscribe(self._post)
        self.first_paint_done = False
        self._deferred_started = False
        self._restoring = False
        self._start_row = 0
        self._restore()
        self.after_first_paint_calls: list[Callable[[], None]] = []  # run once painted
        self.installEventFilter(_AfterFirstPaint(self))
        self._paint_fallback = QTimer(self)  # started in the tray (no paint): do it anyway
        self._paint_fallback.setSingleShot(True)
        self._paint_fallback.timeout.connect(self.after_first_paint)
        self._paint_fallback.start(1000)

    @property
    def countdowns(self) -> CountdownBanners:
        """The auto-release countdowns' banners, made when first needed: by the first message
        or, at the latest, right after the first paint (they load the host registry)."""
        if self._countdowns is None:
            if self.make_countdowns is None:
                raise AttributeError("countdowns: made by ui/shell/build.py's build_window")
            self._countdowns = self.make_countdowns()
        return self._countdowns

    def after_first_paint(self) -> None:
        """Build the other pages and run the deferred start-up work, once: one page or call per
        turn of the event loop, so the window answers between them (built all at once, the
        pages froze it for most of a second right after it appeared). `first_paint_done` is
        True once every step ran."""
        if self._deferred_started or self.first_paint_done:
            return
        self._deferred_started = True
        self._paint_fallback.stop()
        calls, self.after_first_paint_calls = self.after_first_paint_calls, []
        pages = [self._page_builder(key) for key in self.pages]  # a built one is skipped
        self._run_deferred([self._show_start_page, *pages, *calls, _preload_plotting])

    def _show_start_page(self) -> None:
        """The page the window opened on, built (unless something built it meanwhile) and
        refreshed as a click on it does: the first step after the first paint. A page the user
        went to meanwhile was shown by that click."""
        if self.sidebar.currentRow() == self._start_row:
            self._on_row(self._start_row)

    def _page_builder(self, key: str) -> Callable[[], None]:
        def build() -> None:
            self.pages[key]  # built on first access

        return build

    def _run_deferred(self, steps: list[Callable[[], None]]) -> None:
        if self.first_paint_done:  # closing meanwhile: nothing more starts
            return
        if not steps:
            self.first_paint_done = True
            return
        step = steps.pop(0)
        try:  # one failing step (a page, the ledger) does not hold back the others
            step()
        except Exception:  # noqa: BLE001 - reported as any unexpected error is
            sys.excepthook(*sys.exc_info())  # type: ignore[arg-type]
        QTimer.singleShot(0, lambda: self._run_deferred(steps))

    def _place(self, row: int, page: Page) -> None:
        """Put a newly built page where its placeholder stood."""
        placeholder = self.stack.widget(row)
        current = self.stack.currentIndex()
        self.stack.insertWidget(row, page)
        if placeholder is not None:
            self.stack.removeWidget(placeholder)
            placeholder.deleteLater()
        self.stack.setCurrentIndex(current)

    def build_all_pages(self) -> None:
        """Build every page not built yet (right after the first paint)."""
        for key in self.pages:
            self.pages[key]

    # navigation
    def current_key(self) -> str:
        item = self.sidebar.currentItem()
        return str(item.data(KEY_ROLE)) if item else ""

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
        if self._restoring:  # the start row, before the first paint: only its place
            self.stack.setCurrentIndex(row)
            return
        self.pages[list(self.pages)[row]]  # built on first visit
        self.stack.setCurrentIndex(row)
        page = self.stack.currentWidget()
        if isinstance(page, Page):
            page.refresh()
            self.ctx.store.set_setting("ui.last_page", page.key)

    # messages
    def _post(self, message: Message) -> None:
        """The notifier's listener (any thread): re-posted, queued, onto the GUI thread. The
        queued connection is made with the first message (it needs the `Qt` namespace)."""
        with self._posting:
            if not self._posting_connected:
                from PySide6.QtCore import Qt

                self.message_posted.connect(self._show_message, Qt.ConnectionType.QueuedConnection)
                self._posting_connected = True
        self.message_posted.emit(message)

    def _show_message(self, message: Message) -> None:
        self.statusBar().showMessage(message.text, 10000)
        if any(handle(message) for handle in self.message_handlers):
            return
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
        keys = list(self.pages)
        self._start_row = keys.index(last if last in keys else "hosts")
        self._restoring = True  # the page is built right after the first paint
        try:
            self.sidebar.setCurrentRow(self._start_row)
        finally:
            self._restoring = False

    def save_state(self) -> None:
        self.ctx.store.set_setting(
            "ui.geometry", bytes(self.saveGeometry().toBase64().data()).decode()
        )

    def bring_forward(self) -> None:
        from PySide6.QtCore import Qt

        self.show()
        self.setWindowState(self.windowState() & ~Qt.WindowState.WindowMinimized)
        self.raise_()
        self.activateWindow()

    def closeEvent(self, event: QCloseEvent) -> None:
        self.save_state()
        if self.quitting:  # Qt closes every window when the application quits
            self._skip_deferred()
            event.accept()
            return
        if self.keep_in_tray and self.tray is not None and self.tray.icon is not None:
            event.ignore()
            self.hide()
            self.tray.icon.showMessage(
                "GPU Companion", self.tr("Still running in the tray: a rental is being metered.")
            )
            return
        if not self._confirm_quit(self.tr("Close GPU Companion?")):  # no tray: closing quits
            event.ignore()
            return
        self._skip_deferred()
        event.accept()
        self._quit()

    def _skip_deferred(self) -> None:
        """A closing window builds no page and starts no work any more (its services close)."""
        self.first_paint_done = True
        self._paint_fallback.stop()
        self.after_first_paint_calls.clear()

    def request_quit(self) -> None:
        """The tray's Quit: quits the app (never only hides it), asking first while a rental
        is metered, since the instance keeps running and costing on the provider."""
        if self._confirm_quit(self.tr("Quit GPU Companion?")):
            self._quit()

    def _quit(self) -> None:
        if not self.quitting:
            self.quitting = True
            self._unsubscribe()
        self.quit_app()

    def _confirm_quit(self, title: str) -> bool:
        from PySide6.QtWidgets import QMessageBox

        from gpu_companion.core.spend.quitting import still_running_text

        text = still_running_text(self.ctx.ledger)
        if not text:
            return True
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, parent=self)
        box.setObjectName("quitConfirm")
        quit_button = box.addButton(self.tr("Quit anyway"), QMessageBox.ButtonRole.AcceptRole)
        stay = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(stay)
        box.exec()
        return box.clickedButton() is quit_button

    def show_error_dialog(self, text: str) -> None:
        from PySide6.QtWidgets import QMessageBox

        QMessageBox.critical(self, "GPU Companion", text)


def _preload_plotting() -> None:
    """The last step after the first paint: the Monitor's plotting libraries (numpy, pyqtgraph,
    0.25-0.9 s) imported on a worker thread, so the first click on that page does not pay
    them on this one (ui/monitor/preload.py)."""
    from gpu_companion.ui.monitor.preload import preload_plotting

    preload_plotting()
