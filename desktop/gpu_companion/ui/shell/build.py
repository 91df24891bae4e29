"""Puts the window together over the app's `Services`: the pages in sidebar order and the tray."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_companion.ui.common.page import Page
from gpu_companion.ui.hosts.page import HostsPage
from gpu_companion.ui.keys.page import KeysPage
from gpu_companion.ui.monitor.page import MonitorPage
from gpu_companion.ui.release.page import ReleasePage
from gpu_companion.ui.settings.page import SettingsPage
from gpu_companion.ui.shell.main_window import MainWindow
from gpu_companion.ui.shell.tray import Tray, TrayModel
from gpu_companion.ui.spend.page import SpendPage
from gpu_companion.ui.transfers.page import TransfersPage

if TYPE_CHECKING:
    from gpu_companion.services import Services

PAGES: list[type[Page]] = [
    HostsPage,
    KeysPage,
    MonitorPage,
    TransfersPage,
    ReleasePage,
    SpendPage,
    SettingsPage,
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
