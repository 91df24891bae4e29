"""The tray: its state, tooltip and menu come from a testable model over the ledger; the real
QSystemTrayIcon shows them where a tray exists, and alerts fall back to in-app banners where not."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon, QWidget

from gpu_companion.core.common.notifier import Level, Message
from gpu_companion.ui.common.icons import icon
from gpu_companion.ui.common.plain_text import tooltip_text

if TYPE_CHECKING:
    from gpu_companion.core.spend.alerts import SpendAlerts
    from gpu_companion.ui.shell.tray_model import TrayEntry, TrayModel

REFRESH_MS = 30_000


def notification_for(message: Message) -> tuple[str, str, QSystemTrayIcon.MessageIcon]:
    """Title, text and icon of the tray balloon for a notifier message."""
    kind = {
        Level.ERROR: QSystemTrayIcon.MessageIcon.Critical,
        Level.WARNING: QSystemTrayIcon.MessageIcon.Warning,
    }.get(message.level, QSystemTrayIcon.MessageIcon.Information)
    if message.source == "providers" and message.key.startswith("orphan:"):
        # billing at a provider, not metered here
        title = QCoreApplication.translate("Tray", "GPU Companion — forgotten instance")
    elif message.source == "spend":
        title = QCoreApplication.translate("Tray", "GPU Companion — spend")
    else:
        title = "GPU Companion"
    return title, message.text, kind


class Tray(QObject):
    """Delivers notifier messages (a tray balloon when a tray exists, else `fallback(message)`)
    and keeps the icon, tooltip and menu current every half minute. The alert rules themselves
    run in the always-on loop (services), never here: the tray only shows them and answers.
    A rental started, ended or changed anywhere (the wizard, a page, another thread) refreshes it
    at once through `ledger_changed`, queued onto the GUI thread."""

    ledger_changed = Signal()

    def __init__(
        self,
        show_window: Callable[[], None],
        quit_app: Callable[[], None],
        fallback: Callable[[Message], object],
        parent: QObject | None = None,
        available: bool | None = None,
        model: TrayModel | None = None,
        navigate: Callable[[str], object] | None = None,
        alerts: SpendAlerts | None = None,
        open_release: Callable[[str], None] | None = None,
        fill_host_menu: Callable[[QMenu, str], None] | None = None,
        answers: Callable[[str], list[tuple[str, Callable[[], object]]]] | None = None,
    ) -> None:
        super().__init__(parent)
        self.fallback = fallback
        self.model = model
        self.alerts = alerts
        self._show_window = show_window
        self._quit = quit_app
        self._navigate = navigate or (lambda _key: None)
        self._open_release = open_release
        self._fill_host_menu = fill_host_menu  # terminal, VS Code, tunnels of the rental's host
        self._answers = answers  # an auto-release countdown's answers, while one waits
        self.available = QSystemTrayIcon.isSystemTrayAvailable() if available is None else available
        self.state = "idle"
        self.tooltip = self.tr("GPU Companion — nothing running")
        self.menu = QMenu()
        self.menu.aboutToShow.connect(self._opening)
        self.menu.aboutToHide.connect(self._closed)
        self._menu_open = False  # signals, not isVisible(): a D-Bus tray's menu is not a Qt popup
        self._entries: list[TrayEntry] = []
        self._submenus: list[QMenu] = []
        self.icon: QSystemTrayIcon | None = None
        if self.available:
            self.icon = QSystemTrayIcon(icon("tray-idle"), self)
            self.icon.setContextMenu(self.menu)
            self.icon.activated.connect(lambda _reason: show_window())
        self.timer = QTimer(self)
        self.timer.setInterval(REFRESH_MS)
        self.timer.timeout.connect(self.tick)
        self._unsubscribe_ledger: Callable[[], None] = lambda: None
        self._queued = False  # ledger_changed -> refresh, connected with the first ledger
        self.refresh()
        if self.icon is not None:
            self.icon.show()
        if model is not None:
            self._listen(model)
            self.timer.start()

    def attach(self, model: TrayModel, alerts: SpendAlerts | None = None) -> None:
        """Start showing the ledger; `alerts` answers the menu's snooze and mute (the app does it
        right after the first paint: until then the tray says "nothing running")."""
        self.model, self.alerts = model, alerts
        self._listen(model)
        self.refresh()
        self.timer.start()

    def _listen(self, model: TrayModel) -> None:
        """Follow the ledger's changes; the listener only emits (any thread), the refresh runs
        queued on the GUI thread (connected here, with the ledger: the window's first frame is
        made without the `Qt` namespace, see ui/shell/main_window.py)."""
        if not self._queued:
            from PySide6.QtCore import Qt

            self.ledger_changed.connect(self.refresh, Qt.ConnectionType.QueuedConnection)
            self._queued = True
        self._unsubscribe_ledger()
        unsubscribe = model.ledger.on_rentals_changed.subscribe(
            lambda _none: self.ledger_changed.emit()
        )
        self._unsubscribe_ledger = unsubscribe
        self.destroyed.connect(lambda *_: unsubscribe())

    # --- state ----------------------------------------------------------------------------
    def tick(self) -> None:
        self.refresh()

    def refresh(self) -> None:
        snap = self.model.snapshot() if self.model is not None else None
        if snap is not None:
            self.state, self.tooltip = snap.state, snap.tooltip
        self._entries = snap.entries if snap is not None else []
        if not self._menu_open:  # an open menu is not pulled from under the pointer; it is built
            self._build_menu(self._entries)  # afresh each time it opens
        if self.icon is not None:
            self.icon.setIcon(icon(f"tray-{self.state}"))
            self.icon.setToolTip(tooltip_text(self.tooltip))

    def _opening(self) -> None:
        self._build_menu(self._entries)
        self._menu_open = True

    def _closed(self) -> None:
        self._menu_open = False

    def _build_menu(self, entries: list[TrayEntry]) -> None:
        self.menu.clear()
        for sub in self._submenus:
            sub.deleteLater()
        self._submenus = []
        self.menu.addAction(self.tr("Open GPU Companion"), self._show_window)
        if entries:
            self.menu.addSeparator()
        for entry in entries:
            answers = self._answers(entry.host_alias) if self._answers and entry.host_alias else []
            title = entry.text
            if answers:
                title = self.tr("{rental} · auto-release pending").format(rental=entry.text)
            sub = self.menu.addMenu(title)
            self._submenus.append(sub)
            for text, act in answers:
                sub.addAction(text, act)
            if answers:
                sub.addSeparator()
            sub.addAction(self.tr("Open the monitor"), lambda: self._open("monitor"))
            sub.addAction(self.tr("Release checklist"), self._releaser(entry.host_alias))
            if self._fill_host_menu is not None and entry.host_alias:
                sub.addSeparator()
                self._fill_host_menu(sub, entry.host_alias)
                sub.addSeparator()
            if self.alerts is not None:
                sub.addAction(
                    self.tr("Snooze its alerts for 1 hour"), self._snoozer(entry.rental_id)
                )
                sub.addAction(self.tr("Mute its alerts"), self._muter(entry.rental_id))
        self.menu.addSeparator()
        self.menu.addAction(self.tr("Spend"), lambda: self._open("spend"))
        self.menu.addSeparator()
        self.menu.addAction(self.tr("Quit"), self._quit)

    def _open(self, key: str) -> None:
        self._show_window()
        self._navigate(key)

    def _releaser(self, alias: str) -> Callable[[], None]:
        """Open the release checklist with this rental's host chosen, when it has one."""

        def open_checklist() -> None:
            self._show_window()
            if alias and self._open_release is not None:
                self._open_release(alias)
            else:
                self._navigate("release")

        return open_checklist

    def _snoozer(self, rental_id: int) -> Callable[[], None]:
        def snooze() -> None:
            from gpu_companion.core.spend.alerts import RENTAL_ALERTS

            assert self.alerts is not None
            for kind in RENTAL_ALERTS:
                self.alerts.snooze(rental_id, kind, timedelta(hours=1))

        return snooze

    def _muter(self, rental_id: int) -> Callable[[], None]:
        def mute() -> None:
            from gpu_companion.core.spend.alerts import RENTAL_ALERTS

            assert self.alerts is not None
            for kind in RENTAL_ALERTS:
                self.alerts.mute(rental_id, kind)

        return mute

    def actions(self) -> list[QAction]:
        """Every action of the menu, submenus flattened (for tests and accessibility)."""
        out: list[QAction] = []
        for action in self.menu.actions():
            out.append(action)
            sub = action.menu()
            if isinstance(sub, QMenu):
                out.extend(sub.actions())
        return out

    # --- delivery -------------------------------------------------------------------------
    def deliver(self, message: Message) -> None:
        if self.icon is not None and message.level is not Level.INFO:
            self.icon.showMessage(*notification_for(message))
        else:
            self.fallback(message)

    def keep_window_in_tray(self, window: QWidget, running: Callable[[], bool]) -> None:
        """Before the window handles a close, tell it whether a rental runs (it then hides to
        the tray instead of quitting, where a tray exists)."""
        watcher = _CloseWatcher(window, running, self)
        window.installEventFilter(watcher)

    def hide(self) -> None:
        self.timer.stop()
        self._unsubscribe_ledger()
        if self.icon is not None:
            self.icon.hide()


class _CloseWatcher(QObject):
    def __init__(self, window: QWidget, running: Callable[[], bool], parent: QObject) -> None:
        super().__init__(parent)
        self._window = window
        self._running = running

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._window and event.type() == QEvent.Type.Close:
            self._window.keep_in_tray = self._running()  # type: ignore[attr-defined]
        return False
