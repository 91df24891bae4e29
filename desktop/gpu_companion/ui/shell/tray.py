"""The tray: its state, tooltip and menu come from a testable model over the ledger, read off the
GUI thread; the real QSystemTrayIcon shows them where a tray exists, and alerts fall back to in-app
banners where not. The menu is made when it is about to show, each rental's submenu when that
opens: a refresh with a hundred rented hosts builds nothing and runs no SQL on the GUI thread."""

from __future__ import annotations

import logging
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
    from gpu_companion.ui.common.worker import LatestRead
    from gpu_companion.ui.shell.tray_model import TrayEntry, TrayModel, TraySnapshot

log = logging.getLogger(__name__)

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


class OnDemandMenu(QMenu):
    """A menu whose actions are made on demand: `make()` runs before `actions()` answers (tests,
    accessibility, screenshots read a menu that was never opened), as well as when it is about
    to show. `make` itself decides whether anything needs making."""

    def __init__(
        self, make: Callable[[], None], title: str = "", parent: QWidget | None = None
    ) -> None:
        super().__init__(title, parent)
        self._make = make

    def actions(self) -> list[QAction]:
        self._make()
        return super().actions()


class Tray(QObject):
    """Delivers notifier messages (a tray balloon when a tray exists, else `fallback(message)`)
    and keeps the icon, tooltip and menu current every half minute. The alert rules themselves
    run in the always-on loop (services), never here: the tray only shows them and answers.
    A rental started, ended or changed anywhere (the wizard, a page, another thread) refreshes it
    at once through `ledger_changed`, queued onto the GUI thread. The ledger is read off the GUI
    thread, one read at a time (refreshes meanwhile coalesce into one more), and applied here.
    The menu is made from the latest snapshot when it is about to show (each rental's submenu
    when that opens), never by a refresh."""

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
        self.menu = OnDemandMenu(self._make_menu)
        self.menu.aboutToShow.connect(self._opening)
        self.menu.aboutToHide.connect(self._closed)
        self._menu_open = False  # signals, not isVisible(): a D-Bus tray's menu is not a Qt popup
        self._menu_stale = True  # the menu does not show the latest entries (or answers) yet
        self.menus_made = 0  # times the top menu was made (what the tests count)
        self._entries: list[TrayEntry] = []
        self._submenus: list[QMenu] = []
        self._reads: LatestRead | None = None  # the ledger's reads, made with the first model
        self._hidden = False  # hide(): the app quits, nothing more is read
        self.icon: QSystemTrayIcon | None = None
        self._icon_state = "idle"
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
        """Ask for the ledger's state: read off the GUI thread and applied here when it comes.
        Without a ledger yet, the tray says "nothing running" at once."""
        if self._hidden:
            return
        if self.model is None:
            self._apply(None)
            return
        if self._reads is None:
            from gpu_companion.ui.common.worker import LatestRead  # after the first paint

            self._reads = LatestRead(self._prepare_read, self._apply, self._read_failed, self)
        self._reads.request()

    def busy(self) -> bool:
        """A snapshot is being read, or one more is asked for (what tests wait on)."""
        return self._reads is not None and self._reads.busy()

    @property
    def reads(self) -> int:
        """Snapshots read so far (what tests count)."""
        return self._reads.started if self._reads is not None else 0

    def _prepare_read(self) -> Callable[[], TraySnapshot]:
        model = self.model
        assert model is not None
        return model.snapshot

    def _read_failed(self, exc: Exception) -> None:
        log.warning("the tray could not read the ledger: %s", exc, exc_info=exc)

    def _apply(self, snap: TraySnapshot | None) -> None:
        if snap is not None:
            self.state, self.tooltip = snap.state, snap.tooltip
        self._entries = snap.entries if snap is not None else []
        self._menu_stale = True  # made afresh when next opened (an open one stays as it is)
        if self.icon is not None:
            if self.state != self._icon_state:
                self.icon.setIcon(icon(f"tray-{self.state}"))
                self._icon_state = self.state
            self.icon.setToolTip(tooltip_text(self.tooltip))

    def answers_changed(self) -> None:
        """An auto-release countdown opened, was answered or closed: the menu offers what it
        offers now when next opened."""
        self._menu_stale = True

    def _opening(self) -> None:
        if self._menu_stale:
            self._build_menu(self._entries)
        self._menu_open = True

    def _closed(self) -> None:
        self._menu_open = False

    def _make_menu(self) -> None:
        """The menu from the latest snapshot, unless it shows that already or is open (an open
        menu is not pulled from under the pointer; it is made afresh each time it opens)."""
        if self._menu_stale and not self._menu_open:
            self._build_menu(self._entries)

    def _build_menu(self, entries: list[TrayEntry]) -> None:
        """One entry per rental; each entry's submenu is made when it opens."""
        self._menu_stale = False
        self.menus_made += 1
        self.menu.clear()
        for sub in self._submenus:
            sub.deleteLater()
        self._submenus = []
        self.menu.addAction(self.tr("Open GPU Companion"), self._show_window)
        if entries:
            self.menu.addSeparator()
        for entry in entries:
            title = entry.text  # a countdown waits: the countdowns' own state, no SQL
            if self._answers and entry.host_alias and self._answers(entry.host_alias):
                title = self.tr("{rental} · auto-release pending").format(rental=entry.text)
            sub = _RentalMenu(self, entry, title, self.menu)
            self.menu.addMenu(sub)
            self._submenus.append(sub)
        self.menu.addSeparator()
        self.menu.addAction(self.tr("Spend"), lambda: self._open("spend"))
        self.menu.addSeparator()
        self.menu.addAction(self.tr("Quit"), self._quit)

    def fill_rental_menu(self, sub: QMenu, entry: TrayEntry) -> None:
        """A rental's submenu: the countdown's answers, the monitor, the release checklist, the
        host's doors (terminal, VS Code, tunnels: read now, as they are), snooze and mute."""
        answers = self._answers(entry.host_alias) if self._answers and entry.host_alias else []
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
            sub.addAction(self.tr("Snooze its alerts for 1 hour"), self._snoozer(entry.rental_id))
            sub.addAction(self.tr("Mute its alerts"), self._muter(entry.rental_id))

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
        """Every action of the menu, submenus flattened (for tests and accessibility): made
        from the latest snapshot, every submenu filled, when not made yet."""
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
        """The app quits: no more reads (a refresh already queued reads nothing; one running
        ends without another after it), so none reaches the store after it closes."""
        self._hidden = True
        self.timer.stop()
        self._unsubscribe_ledger()
        if self._reads is not None:
            self._reads.drop_pending()
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


class _RentalMenu(OnDemandMenu):
    """A rental's submenu, filled when it is about to show (afresh each time: the host's tunnels
    change) or when its actions are asked for before it ever showed."""

    def __init__(self, tray: Tray, entry: TrayEntry, title: str, parent: QWidget) -> None:
        super().__init__(self._fill_once, title, parent)
        self._tray, self.entry = tray, entry
        self.filled = False
        self.aboutToShow.connect(self.fill)

    def fill(self) -> None:
        self.clear()
        self.filled = True
        self._tray.fill_rental_menu(self, self.entry)

    def _fill_once(self) -> None:
        if not self.filled:
            self.fill()
