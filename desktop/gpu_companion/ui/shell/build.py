"""Puts the window together over the app's `Services`: the pages in sidebar order and the tray."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication
from PySide6.QtWidgets import QMenu

from gpu_companion.core.common.notifier import Message
from gpu_companion.ui.shell.main_window import LazyPage, MainWindow
from gpu_companion.ui.shell.tray import Tray

if TYPE_CHECKING:
    from gpu_companion.core.hosts.registry import Host
    from gpu_companion.services import Services
    from gpu_companion.ui.release.countdown import CountdownBanners

# Sidebar order. Each page's module is imported when the page is first needed (the page shown at
# start, then the others right after the first paint): see benchmarks/startup.py. The titles are
# translated where the sidebar shows them (context "Sidebar").
PAGES: list[LazyPage] = [
    LazyPage(
        "hosts", str(QT_TRANSLATE_NOOP("Sidebar", "Hosts")), "hosts",
        "gpu_companion.ui.hosts.page:HostsPage",
    ),
    LazyPage(
        "keys", str(QT_TRANSLATE_NOOP("Sidebar", "Keys")), "keys",
        "gpu_companion.ui.keys.page:KeysPage",
    ),
    LazyPage(
        "monitor", str(QT_TRANSLATE_NOOP("Sidebar", "Monitor")), "monitor",
        "gpu_companion.ui.monitor.page:MonitorPage",
    ),
    LazyPage(
        "transfers", str(QT_TRANSLATE_NOOP("Sidebar", "Transfers")), "transfers",
        "gpu_companion.ui.transfers.page:TransfersPage",
    ),
    LazyPage(
        "release", str(QT_TRANSLATE_NOOP("Sidebar", "Release")), "release",
        "gpu_companion.ui.release.page:ReleasePage",
    ),
    LazyPage(
        "runs", str(QT_TRANSLATE_NOOP("Sidebar", "Runs")), "runs",
        "gpu_companion.ui.runs.page:RunsPage",
    ),
    LazyPage(
        "spend", str(QT_TRANSLATE_NOOP("Sidebar", "Spend")), "spend",
        "gpu_companion.ui.spend.page:SpendPage",
    ),
    LazyPage(
        "settings", str(QT_TRANSLATE_NOOP("Sidebar", "Settings")), "settings",
        "gpu_companion.ui.settings.page:SettingsPage",
    ),
]  # fmt: skip


# The GUI thread takes the GIL each time Qt calls into Python (a timer, a paint, a signal); while
# a worker runs Python (collectors, the ledger's reads, the fleet's rules) Python hands the GIL
# over only after its switch interval, 5 ms by default, so a paint that enters Python ten times
# could wait 50 ms for it. At 1 ms (benchmarks/fleet_live.py, 100 hosts streaming, 2 CPUs): the
# longest GUI stall 35-64 -> 24-38 ms, the slowest of three host opens 63-117 -> 53-87 ms.
GUI_SWITCH_INTERVAL_S = 0.001


def build_window(services: Services) -> MainWindow:
    sys.setswitchinterval(min(sys.getswitchinterval(), GUI_SWITCH_INTERVAL_S))
    window = MainWindow(services, PAGES)
    window.tray = Tray(
        window.bring_forward,
        window.request_quit,
        window.banners.show_message,
        parent=window,
        navigate=window.navigate,
        open_release=window.open_release,
        fill_host_menu=lambda menu, alias: _fill_host_menu(window, menu, alias),
        answers=lambda alias: window.countdowns.answers(alias),
    )
    tray = window.tray

    def make_countdowns() -> CountdownBanners:
        """The auto-release countdowns' banners: they follow the host registry, so they are made
        right after the first paint (or by the first message before it), not before."""
        from gpu_companion.ui.release.countdown import CountdownBanners

        made = CountdownBanners(
            services, window.banners, tray.deliver if tray.icon is not None else None, window
        )
        made.changed.connect(tray.answers_changed)  # the menu's answers, not the ledger
        return made

    def follow_countdowns() -> None:
        window.countdowns.timer  # noqa: B018 - made on first access

    window.make_countdowns = make_countdowns
    window.after_first_paint_calls.append(follow_countdowns)
    window.after_first_paint_calls.append(lambda: _attach_ledger(window.tray, services))
    tray.keep_window_in_tray(window, lambda: services.has_running_rentals())
    window.message_handlers.append(lambda m: window.countdowns.handle(m))
    window.message_handlers.append(lambda m: _orphan_banner(window, m))
    window.message_handlers.append(_monitor_idle_hint)
    if tray.icon is not None:  # a countdown balloon brings the window with its buttons
        tray.icon.messageClicked.connect(window.bring_forward)
    return window


def _monitor_idle_hint(message: Message) -> bool:
    """One alert per idle stretch. The monitor's idle hint (`idle:<alias>`, source "monitor")
    is followed at once by the spend alert under the same key, which says what the stretch cost
    and honours the rental's snooze and mute: only that one reaches the tray or a banner (the
    hint stays in the status bar and on the Monitor page). Hints fire only for billed hosts, so
    the spend alert is always there to take its place."""
    return message.source == "monitor" and message.key.startswith("idle:")


def _orphan_banner(window: MainWindow, message: Message) -> bool:
    """A forgotten instance: the alert waits in the window with one click to the instances it
    names (import, or import and release); the tray's balloon is delivered as well."""
    if message.source != "providers" or not message.key.startswith("orphan:"):
        return False

    def review() -> None:
        window.bring_forward()
        page = window.navigate("hosts")
        page.forgotten_instances()  # type: ignore[attr-defined]

    banner = window.banners.show_message(message)
    if not banner.buttons:
        banner.set_actions([(QCoreApplication.translate("OrphanBanner", "Review…"), review)])
    return window.tray is None or window.tray.icon is None  # no tray: the banner is the alert


def _attach_ledger(tray: Tray | None, services: Services) -> None:
    """The tray's rentals, budget state and alert rules (the spend modules load now)."""
    from gpu_companion.ui.shell.tray_model import TrayModel

    if tray is not None:
        tray.attach(TrayModel(services.ledger, services.budgets), services.alerts)


def _fill_host_menu(window: MainWindow, menu: QMenu, alias: str) -> None:
    """The tray's rental menu offers the host's terminal, VS Code and tunnels, as its row does."""
    from gpu_companion.ui.common.access import fill_open_menu
    from gpu_companion.ui.hosts.page import HostsPage

    host = window.ctx.registry.host(alias)
    hosts = window.pages["hosts"]
    if host is None or host.state != "active" or not isinstance(hosts, HostsPage):
        return

    def show_tunnels(h: Host) -> None:
        window.bring_forward()
        window.navigate("hosts")
        hosts.show_tunnels(h)

    fill_open_menu(menu, hosts.access, host, show_tunnels)
