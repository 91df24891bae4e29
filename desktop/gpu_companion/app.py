"""Composition root: builds the store, the services and the main window."""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox

from gpu_companion import __version__
from gpu_companion.core.hosts import HostRegistry
from gpu_companion.core.notifier import Level, Message, Notifier
from gpu_companion.core.paths import AppPaths
from gpu_companion.core.store import Store
from gpu_companion.logsetup import setup_logging
from gpu_companion.ui.main_window import MainWindow
from gpu_companion.ui.pages.base import Page
from gpu_companion.ui.pages.hosts import HostsPage
from gpu_companion.ui.pages.monitor import MonitorPage
from gpu_companion.ui.pages.placeholders import (
    KeysPage,
    ReleasePage,
    SpendPage,
    TransfersPage,
)
from gpu_companion.ui.pages.settings import SettingsPage
from gpu_companion.ui.tray import Tray

if TYPE_CHECKING:
    from gpu_companion.core.monitor import Monitor

log = logging.getLogger(__name__)

PAGES: list[type[Page]] = [
    HostsPage,
    KeysPage,
    MonitorPage,
    TransfersPage,
    ReleasePage,
    SpendPage,
    SettingsPage,
]


class AppContext:
    """What every page needs: paths, store, registries, the notifier, and navigation."""

    def __init__(self, paths: AppPaths) -> None:
        self.paths = paths.ensure()
        self.store = Store(paths.database)
        self.registry = HostRegistry(self.store)
        self.notifier = Notifier()
        self.window: MainWindow | None = None
        self.tray: Tray | None = None
        self.has_running_rentals: Callable[[], bool] = lambda: False
        self.quit: Callable[[], None] = lambda: None
        self._monitor: Monitor | None = None

    def monitor(self) -> Monitor:
        """The live GPU monitor, made on first use (the Monitor page's first show)."""
        if self._monitor is None:
            from gpu_companion.core.monitor import Monitor
            from gpu_companion.core.ssh_clients import basic_client_factory

            self._monitor = Monitor(
                basic_client_factory(), store=self.store, notifier=self.notifier
            )
        return self._monitor

    def navigate(self, key: str) -> None:
        if self.window is not None:
            self.window.navigate(key)

    def open_wizard(self) -> None:
        """The guided first-rental wizard is not built yet: say so and open the Hosts page."""
        self.navigate("hosts")
        self.notifier.warning(
            "The guided first-rental wizard is not part of this version yet: add your platform "
            "and host on the Hosts page.",
            source="wizard",
            key="wizard-missing",
        )

    def close(self) -> None:
        if self._monitor is not None:
            self._monitor.stop()
        self.store.close()


def build_window(ctx: AppContext) -> MainWindow:
    window = MainWindow(ctx, PAGES)
    ctx.window = window
    ctx.tray = Tray(window.bring_forward, ctx.quit, window.banners.show_message, parent=window)
    window.keep_in_tray = False
    return window


def _install_excepthook(ctx: AppContext) -> None:
    """An unexpected exception is logged with its traceback and shown with the log path."""

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        log.error("unexpected error\n%s", "".join(traceback.format_exception(kind, value, tb)))
        if QApplication.instance() is not None and ctx.window is not None:
            QMessageBox.critical(
                ctx.window,
                "GPU Companion — unexpected error",
                f"Something went wrong: {value}\n\nNothing was lost. The details are in the log "
                f"file:\n{ctx.paths.log_file}",
            )

    sys.excepthook = hook


def _follow_color_scheme(app: QApplication) -> None:
    """Fusion follows the OS light/dark palette; icons re-tint when the scheme changes."""
    app.setStyle("Fusion")
    hints = QGuiApplication.styleHints()
    if hasattr(hints, "colorSchemeChanged"):
        hints.colorSchemeChanged.connect(
            lambda _scheme: app.setPalette(app.style().standardPalette())
        )


def run_gui(argv: list[str], smoke_test: bool = False) -> int:
    from gpu_companion.ui.single_instance import SingleInstance, server_name

    QApplication.setHighDpiScaleFactorRoundingPolicy(
        Qt.HighDpiScaleFactorRoundingPolicy.PassThrough
    )
    app = QApplication.instance() or QApplication(argv)
    assert isinstance(app, QApplication)
    app.setApplicationName("GPU Companion")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("gpu-companion")
    app.setQuitOnLastWindowClosed(False)
    _follow_color_scheme(app)

    paths = AppPaths.default().ensure()
    setup_logging(paths.log_file)
    instance = None
    if not smoke_test:
        instance = SingleInstance(server_name(str(paths.data_dir)))
        if not instance.claim():
            print("GPU Companion is already running: its window was brought forward.")
            return 0
    try:
        ctx = AppContext(paths)
    except Exception as exc:
        log.exception("startup failed")
        print(f"GPU Companion could not start: {exc}\nLog: {paths.log_file}", file=sys.stderr)
        if not smoke_test:
            QMessageBox.critical(None, "GPU Companion", f"{exc}\n\nLog: {paths.log_file}")
        return 1
    ctx.quit = app.quit
    _install_excepthook(ctx)
    window = build_window(ctx)
    if instance is not None:
        instance.raise_requested.connect(window.bring_forward)
    if smoke_test:
        return smoke(ctx, window)
    window.show()
    log.info("GPU Companion %s started", __version__)
    code = app.exec()
    window.save_state()
    ctx.tray and ctx.tray.hide()
    if instance is not None:
        instance.release()
    ctx.close()
    return code


def smoke(ctx: AppContext, window: MainWindow) -> int:
    """Render every page once and exit: a start-up check for CI and packaging."""
    problems: list[str] = []
    window.show()
    for key, page in window.pages.items():
        window.navigate(key)
        QApplication.processEvents()
        if window.stack.currentWidget() is not page or page.grab().isNull():
            problems.append(f"page {key} did not render")
    tray = ctx.tray
    assert tray is not None
    tray.deliver(Message(Level.WARNING, "Smoke test: alerts reach the user.", source="smoke"))
    QApplication.processEvents()
    if not tray.available and not window.banners.banners():
        problems.append("the in-app alert fallback did not show")
    window.close()
    QApplication.processEvents()
    ctx.close()
    for p in problems:
        print(f"smoke test: {p}", file=sys.stderr)
    tray_state = "system tray" if tray.available else "in-app banners (no system tray)"
    print(
        f"smoke test: {len(window.pages)} pages rendered, alerts via {tray_state}: "
        f"{'FAILED' if problems else 'ok'}"
    )
    return 1 if problems else 0
