"""Puts the window together over the app's `Services`: the pages in sidebar order and the tray."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_companion.ui.shell.main_window import LazyPage, MainWindow
from gpu_companion.ui.shell.tray import Tray, TrayModel

if TYPE_CHECKING:
    from gpu_companion.services import Services

# Sidebar order. Each page's module is imported when the page is first needed (the page shown at
# start, then the others right after the first paint): see benchmarks/startup.py.
PAGES: list[LazyPage] = [
    LazyPage("hosts", "Hosts", "hosts", "gpu_companion.ui.hosts.page:HostsPage"),
    LazyPage("keys", "Keys", "keys", "gpu_companion.ui.keys.page:KeysPage"),
    LazyPage("monitor", "Monitor", "monitor", "gpu_companion.ui.monitor.page:MonitorPage"),
    LazyPage(
        "transfers", "Transfers", "transfers", "gpu_companion.ui.transfers.page:TransfersPage"
    ),
    LazyPage("release", "Release", "release", "gpu_companion.ui.release.page:ReleasePage"),
    LazyPage("spend", "Spend", "spend", "gpu_companion.ui.spend.page:SpendPage"),
    LazyPage("settings", "Settings", "settings", "gpu_companion.ui.settings.page:SettingsPage"),
]


def build_window(services: Services) -> MainWindow:
    window = MainWindow(services, PAGES)
    window.tray = Tray(
        window.bring_forward,
        window.request_quit,
        window.banners.show_message,
        parent=window,
        model=TrayModel(services.ledger, services.budgets),
        navigate=window.navigate,
        alerts=services.alerts,
        open_release=window.open_release,
    )
    window.tray.keep_window_in_tray(window, lambda: services.has_running_rentals())
    return window
