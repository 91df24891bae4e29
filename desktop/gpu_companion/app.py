"""Boots Qt around the app's `Services`: the application object, logging, single instance, the
window and the event loop. Nothing else lives here."""

from __future__ import annotations

import logging
import os
import sys
import traceback
from collections.abc import Callable
from types import TracebackType

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from gpu_companion import __version__
from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.notifier import Level, Message
from gpu_companion.core.common.paths import AppPaths
from gpu_companion.logsetup import rotate_logs, setup_logging
from gpu_companion.services import Services, build_services
from gpu_companion.ui.common.i18n import install_translators
from gpu_companion.ui.shell.build import build_window
from gpu_companion.ui.shell.main_window import MainWindow

# The window's style. Nothing here reaches `PySide6.QtCore.Qt` before the first paint (see
# ui/shell/main_window.py): Qt 6 rounds scale factors PassThrough by default.
STYLE = "Fusion"

log = logging.getLogger(__name__)  # log.log(WARNING, …): log lines, never translated


def _install_excepthook(
    paths: AppPaths, window: MainWindow | None, interactive: bool = True
) -> list[BaseException]:
    """An unexpected exception is logged with its traceback and shown with the log path (or,
    headless, printed and collected: a smoke test must fail, not wait on a dialog)."""
    seen: list[BaseException] = []

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        log.error("unexpected error\n%s", "".join(traceback.format_exception(kind, value, tb)))
        seen.append(value)
        if not interactive:
            print(f"unexpected error: {kind.__name__}: {value}", file=sys.stderr)
        elif QApplication.instance() is not None and window is not None:
            from PySide6.QtWidgets import QMessageBox

            QMessageBox.critical(
                window,
                QCoreApplication.translate("App", "GPU Companion — unexpected error"),
                QCoreApplication.translate(
                    "App",
                    "Something went wrong: {error}\n\nNothing was lost. The details are in the "
                    "log file:\n{log}",
                ).format(error=value, log=paths.log_file),
            )

    sys.excepthook = hook
    return seen


def _follow_color_scheme(app: QApplication) -> None:
    """Fusion follows the OS light/dark palette; icons re-tint when the scheme changes."""
    hints = QGuiApplication.styleHints()
    if hasattr(hints, "colorSchemeChanged"):
        hints.colorSchemeChanged.connect(
            lambda _scheme: app.setPalette(app.style().standardPalette())
        )


def run_gui(
    argv: list[str], smoke_test: bool = False, background: bool = False, language: str = "en"
) -> int:
    from gpu_companion.ui.shell.single_instance import SingleInstance, server_name

    made = QApplication.instance()
    if made is None:  # Fusion as Qt's own option: the style made is the one kept (a style set
        # afterwards is a second one made and applied, 6 ms before the first paint); the
        # option wins over QT_STYLE_OVERRIDE, as setStyle does
        app = QApplication([*argv[:1], "-style", STYLE, *argv[1:]])
    else:  # an application made elsewhere (the tests)
        assert isinstance(made, QApplication)
        app = made
        app.setStyle(STYLE)
    app.setApplicationName("GPU Companion")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("gpu-companion")
    app.setQuitOnLastWindowClosed(False)
    _follow_color_scheme(app)
    install_translators(app, language)  # before the first widget: every tr() reads it

    paths = AppPaths.default().ensure()
    log_handler = setup_logging(paths.log_file, rotating=False)  # rotate_logs after the paint
    instance = None
    if not smoke_test:
        instance = SingleInstance(server_name(str(paths.data_dir)), paths.data_dir / "app.lock")
        if not instance.claim():
            if instance.answered:
                print(
                    QCoreApplication.translate(
                        "App", "GPU Companion is already running: its window was brought forward."
                    )
                )
                return 0
            print(
                QCoreApplication.translate(
                    "App",
                    "GPU Companion is already running on {path} but does not answer; end that "
                    "process (or wait for it) and start again.",
                ).format(path=paths.data_dir),
                file=sys.stderr,
            )
            return 1
    try:
        services = build_services(paths)
    except Exception as exc:
        log.exception("startup failed")
        print(
            QCoreApplication.translate(
                "App", "GPU Companion could not start: {error}\nLog: {log}"
            ).format(error=exc, log=paths.log_file),
            file=sys.stderr,
        )
        if not smoke_test:
            from PySide6.QtWidgets import QMessageBox

            QMessageBox.critical(
                None,
                "GPU Companion",
                QCoreApplication.translate("App", "{error}\n\nLog: {log}").format(
                    error=exc, log=paths.log_file
                ),
            )
        return 1
    window = build_window(services)
    window.quit_app = app.quit
    errors = _install_excepthook(paths, window, interactive=not smoke_test)
    if instance is not None:
        instance.raise_requested.connect(window.bring_forward)
        window.after_first_paint_calls.insert(0, instance.listen)  # first: a later launch waits
    if smoke_test:
        return smoke(services, window, errors)

    def start_after_first_paint() -> None:
        rotate_logs(log_handler, paths.log_file)
        start_services(services, window)

    in_tray = background and window.tray is not None and window.tray.available
    if os.environ.get("GPU_COMPANION_EXIT_AFTER_FIRST_PAINT"):  # benchmarks/startup.py
        from gpu_companion.ui.shell.first_paint import exit_after_first_paint

        exit_after_first_paint(window)  # it quits at that paint
    else:
        window.after_first_paint_calls.append(start_after_first_paint)
        if not in_tray:  # the first start's welcome: its check sees the agent just started
            window.after_first_paint_calls.append(lambda: _welcome(services, window))
    # the signals that end the app are handled from right after the first paint (before the
    # agent starts: until then a signal has nothing to close); `signal` loads then
    restore_signals: list[Callable[[], None]] = []
    window.after_first_paint_calls.insert(
        1 if instance is not None else 0,
        lambda: restore_signals.append(_end_on_signals(app, window)),
    )
    if not in_tray:
        window.show()
    log.info("GPU Companion %s started", __version__)
    code = app.exec()
    window.save_state()
    if window.tray is not None:
        window.tray.hide()
    services.close()  # the agent's runtime dir goes: a new launch may make its own from now
    if instance is not None:
        instance.release()
    for restore in restore_signals:  # a second signal while closing changes nothing
        restore()
    return code


def _end_on_signals(app: QApplication, window: MainWindow) -> Callable[[], None]:
    """SIGTERM (a logout, `kill`), SIGHUP (its terminal closed) and SIGINT (Ctrl-C there) end
    the app as its Quit does but without asking: the services close, so the app's ssh-agent and
    shared connections end with it instead of outliving it. Python runs a signal handler only
    when it gets control, so the signal's wake-up byte goes through a pipe the Qt loop watches.
    Returns the undo."""
    if sys.platform == "win32":  # no wake-up pipe for a Qt loop there; the console ends it
        return lambda: None
    import signal

    from PySide6.QtCore import QSocketNotifier

    def end(signum: int, _frame: object) -> None:
        log.info("ending on signal %d", signum)
        window.quitting = True  # closes are accepted; nothing asks
        app.quit()

    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    signals = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
    previous = {sig: signal.signal(sig, end) for sig in signals}
    previous_fd = signal.set_wakeup_fd(write_fd)
    notifier = QSocketNotifier(read_fd, QSocketNotifier.Type.Read)
    notifier.activated.connect(lambda *_: os.read(read_fd, 64))  # Python runs `end` after it

    def restore() -> None:
        notifier.setEnabled(False)
        signal.set_wakeup_fd(previous_fd)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        os.close(read_fd)
        os.close(write_fd)

    return restore


def _welcome(services: Services, window: MainWindow) -> None:
    from gpu_companion.ui.shell.welcome import show_welcome_once

    show_welcome_once(services, window)


def start_services(
    services: Services, window: MainWindow, run: Callable[..., object] | None = None
) -> None:
    """What the app starts once its window has painted (or 1 s after a launch in the tray):
    watching the rented hosts, the app's ssh-agent (ssh modules load now), then off the GUI
    thread its keys, the managed ssh config and the always-on rules; a page can reach a host
    only after it. `run` runs that last part (a thread by default; the journey tests pass one
    that waits) — the tests start the app through this very function."""
    if run is None:
        from gpu_companion.ui.common.worker import run_in_thread

        run = run_in_thread
    services.start_watching()  # rented hosts stream from launch, page or tray alike
    try:
        services.start()
    except UserError as exc:
        log.warning("ssh-agent: %s", exc)
        services.notifier.warning(str(exc), source="ssh-agent")
    shows_balloons = window.tray is not None and window.tray.icon is not None
    run(_start_background, services, shows_balloons)


def _start_background(services: Services, shows_balloons: bool) -> None:
    """Off the GUI thread: keys into the app's agent and the managed ssh config (keyring, ssh),
    then the always-on rules and their notification channels (imports, the store, threads)."""
    if not services.start_always_on(desktop_shown_here=shows_balloons):
        log.info("the alert and auto-release rules run in another process on this data dir")
    for problem in services.start_background():
        log.warning("ssh-agent: %s", problem)


def smoke(services: Services, window: MainWindow, errors: list[BaseException]) -> int:
    """Render every page once and exit: a start-up check for CI and packaging."""
    problems: list[str] = []
    window.show()
    for key, page in window.pages.items():
        window.navigate(key)
        QApplication.processEvents()
        if window.stack.currentWidget() is not page or page.grab().isNull():
            problems.append(f"page {key} did not render")
    tray = window.tray
    assert tray is not None
    tray.deliver(Message(Level.WARNING, "Smoke test: alerts reach the user.", source="smoke"))
    QApplication.processEvents()
    if not tray.available and not window.banners.banners():
        problems.append("the in-app alert fallback did not show")
    window.quitting = True  # a smoke test ends without asking, even while a rental is metered
    window.close()
    QApplication.processEvents()
    services.close()
    problems += [f"unexpected error: {exc!r}" for exc in errors]
    for p in problems:
        print(f"smoke test: {p}", file=sys.stderr)
    translate = QCoreApplication.translate
    tray_state = (
        translate("Smoke", "system tray")
        if tray.available
        else translate("Smoke", "in-app banners (no system tray)")
    )
    verdict = translate("Smoke", "FAILED") if problems else translate("Smoke", "ok")
    print(
        translate(
            "Smoke", "smoke test: {pages} pages rendered, alerts via {tray}: {verdict}"
        ).format(pages=len(window.pages), tray=tray_state, verdict=verdict)
    )
    return 1 if problems else 0
