"""Composition root: builds the store, the services and the main window."""

from __future__ import annotations

import logging
import os
import sys
import traceback
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from gpu_companion import __version__
from gpu_companion.core.common.notifier import Level, Message, Notifier
from gpu_companion.core.common.paths import AppPaths
from gpu_companion.core.hosts.registry import HostRegistry
from gpu_companion.core.release.wiring import ReleaseWiring
from gpu_companion.core.spend.alerts import SpendAlerts
from gpu_companion.core.spend.budgets import Budgets
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.money import format_money, to_minor
from gpu_companion.core.ssh.config_writer import SshConfigWriter
from gpu_companion.core.ssh.connection import SessionFactory
from gpu_companion.core.ssh.managed import ManagedConfig
from gpu_companion.core.ssh.vault import KeyVault
from gpu_companion.core.storage.store import Store
from gpu_companion.core.transfers.service import build_transfer_queue
from gpu_companion.logsetup import setup_logging
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
    from gpu_companion.core.monitor.live import Monitor

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
        self.vault = KeyVault(self.store, paths.data_dir / "keys")  # keyring touched on first use
        self.ssh_config = SshConfigWriter(Path.home())
        self.key_passphrases: dict[str, str] = {}  # typed this session, memory only
        self.sessions = SessionFactory(
            self.vault, self.ssh_config.known_hosts, self.key_passphrases.get
        )
        # the app's own ssh -F / rsync read the managed file: keep it in step with the hosts
        self.managed_ssh = ManagedConfig(self.ssh_config, self.registry, self.vault)
        self.registry.on_hosts_changed.append(self.managed_ssh.sync_quietly)
        self.transfers = build_transfer_queue(
            self.store,
            self.registry,
            ssh_argv=self.managed_ssh.ssh_argv,
            client_factory=self.sessions.connect,
        )
        self.window: MainWindow | None = None
        self.tray: Tray | None = None
        self.ledger = SpendLedger(self.store)
        self.budgets = Budgets(self.ledger)
        self.alerts = SpendAlerts(self.ledger, self.notifier, self.budgets)
        self.alerts.last_sync = self._last_checkpoint_sync  # spot rentals: last verified backup
        self.has_running_rentals: Callable[[], bool] = self.ledger.has_running
        self.release = ReleaseWiring.build(
            self.store,
            self.registry,
            self.ledger,
            paths.data_dir / "backups",
            connect=self.sessions.connect,
            ssh_argv=self.managed_ssh.ssh_argv,
            ssh_config=self.managed_ssh,
        )
        self.quit: Callable[[], None] = lambda: None
        self.wizard: QWidget | None = None  # the open first-rental wizard, if any
        self._monitor: Monitor | None = None

    def _billed(self, alias: str) -> bool:
        rental = self.ledger.running_for_alias(alias)
        return rental is not None and rental.billed

    def cost_per_hour(self, alias: str) -> str:
        """The running rental's hourly rate as text, "" when nothing is metered for `alias`."""
        rental = self.ledger.running_for_alias(alias)
        if rental is None:
            return ""
        return f"{format_money(to_minor(rental.hourly_rate(), rental.currency), rental.currency)}/h"

    def _on_monitor_event(self, event: object) -> None:
        """Idle GPUs on a billed rental: the ledger says what the idle stretch cost so far."""
        from gpu_companion.core.monitor.live import HintEvent

        if isinstance(event, HintEvent) and event.hint.kind == "idle":
            since = datetime.fromtimestamp(event.hint.since, timezone.utc)
            self.alerts.on_idle(event.hint.alias, since)

    def _last_checkpoint_sync(self, host_id: int) -> datetime | None:
        host = next((h for h in self.registry.hosts() if h.id == host_id), None)
        return self.transfers.last_verified_download(host.alias) if host else None

    def monitor(self) -> Monitor:
        """The live GPU monitor, made on first use (the Monitor page's first show): it connects
        like every other feature, bills by the spend ledger and turns idle hints into cost."""
        if self._monitor is None:
            from gpu_companion.core.monitor.live import Monitor

            self._monitor = Monitor(
                self.sessions.connect,
                store=self.store,
                notifier=self.notifier,
                is_billed=self._billed,
            )
            self._monitor.subscribe(self._on_monitor_event)
        return self._monitor

    def navigate(self, key: str) -> None:
        if self.window is not None:
            self.window.navigate(key)

    def open_release(self, alias: str) -> None:
        """Open the release checklist of one host (tray menu, rental alerts)."""
        page = self.window.navigate("release") if self.window is not None else None
        if isinstance(page, ReleasePage):
            page.open_host(alias)

    def open_wizard(self) -> None:
        """Open the guided first-rental wizard; its new host shows on the Hosts page after."""
        from gpu_companion.ui.wizard import FirstRentalWizard

        def show_hosts(_result: int) -> None:
            if self.window is not None:
                self.window.navigate("hosts").refresh()

        self.wizard = FirstRentalWizard(self, parent=self.window)
        self.wizard.finished.connect(show_hosts)
        self.wizard.open()

    def close(self) -> None:
        self.transfers.shutdown()  # running transfers pause and keep their partial data
        if self._monitor is not None:
            self._monitor.stop()
        self.store.close()


def build_window(ctx: AppContext) -> MainWindow:
    window = MainWindow(ctx, PAGES)
    ctx.window = window
    ctx.tray = Tray(
        window.bring_forward,
        lambda: ctx.quit(),
        window.banners.show_message,
        parent=window,
        model=TrayModel(ctx.ledger, ctx.budgets),
        navigate=ctx.navigate,
        alerts=ctx.alerts,
        open_release=ctx.open_release,
    )
    ctx.tray.keep_window_in_tray(window, lambda: ctx.has_running_rentals())
    return window


def _install_excepthook(ctx: AppContext, interactive: bool = True) -> list[BaseException]:
    """An unexpected exception is logged with its traceback and shown with the log path (or,
    headless, printed and collected: a smoke test must fail, not wait on a dialog)."""
    seen: list[BaseException] = []

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        log.error("unexpected error\n%s", "".join(traceback.format_exception(kind, value, tb)))
        seen.append(value)
        if not interactive:
            print(f"unexpected error: {kind.__name__}: {value}", file=sys.stderr)
        elif QApplication.instance() is not None and ctx.window is not None:
            QMessageBox.critical(
                ctx.window,
                "GPU Companion — unexpected error",
                f"Something went wrong: {value}\n\nNothing was lost. The details are in the log "
                f"file:\n{ctx.paths.log_file}",
            )

    sys.excepthook = hook
    return seen


def _follow_color_scheme(app: QApplication) -> None:
    """Fusion follows the OS light/dark palette; icons re-tint when the scheme changes."""
    app.setStyle("Fusion")
    hints = QGuiApplication.styleHints()
    if hasattr(hints, "colorSchemeChanged"):
        hints.colorSchemeChanged.connect(
            lambda _scheme: app.setPalette(app.style().standardPalette())
        )


def run_gui(argv: list[str], smoke_test: bool = False, background: bool = False) -> int:
    from gpu_companion.ui.shell.single_instance import SingleInstance, server_name

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
    errors = _install_excepthook(ctx, interactive=not smoke_test)
    window = build_window(ctx)
    if instance is not None:
        instance.raise_requested.connect(window.bring_forward)
    if smoke_test:
        return smoke(ctx, window, errors)
    if os.environ.get("GPU_COMPANION_EXIT_AFTER_FIRST_PAINT"):  # benchmarks/startup.py
        from gpu_companion.ui.shell.first_paint import exit_after_first_paint

        exit_after_first_paint(window)
    elif not (background and ctx.tray is not None and ctx.tray.available):
        from PySide6.QtCore import QTimer

        from gpu_companion.ui.shell.welcome import show_welcome_once

        QTimer.singleShot(0, lambda: show_welcome_once(ctx, window))
    if not (background and ctx.tray is not None and ctx.tray.available):
        window.show()
    from gpu_companion.ui.common.worker import run_in_thread

    run_in_thread(ctx.managed_ssh.sync_quietly)  # hosts from an earlier run, keys changed
    log.info("GPU Companion %s started", __version__)
    code = app.exec()
    window.save_state()
    ctx.tray and ctx.tray.hide()
    if instance is not None:
        instance.release()
    ctx.close()
    return code


def smoke(ctx: AppContext, window: MainWindow, errors: list[BaseException]) -> int:
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
    problems += [f"unexpected error: {exc!r}" for exc in errors]
    for p in problems:
        print(f"smoke test: {p}", file=sys.stderr)
    tray_state = "system tray" if tray.available else "in-app banners (no system tray)"
    print(
        f"smoke test: {len(window.pages)} pages rendered, alerts via {tray_state}: "
        f"{'FAILED' if problems else 'ok'}"
    )
    return 1 if problems else 0
