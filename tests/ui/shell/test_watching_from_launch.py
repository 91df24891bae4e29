"""`run_gui` as the app starts (here with --background): the rented host streams before any page
is shown, through the app's own connections, and goes on with the window hidden; the Monitor page
is never built into a monitor."""

from __future__ import annotations

import os
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.services import build_services
from gpu_companion.ui.shell.welcome import WELCOME_SETTING
from tests.harness.launch import Launch


def _earlier_session(app_paths, sshd, standin, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """What a user left behind: a platform key, a trusted host and a running rental."""
    ctx = build_services(app_paths)
    try:
        platform = ctx.registry.save_platform(Platform(f"launch-{os.getpid()}-{tmp_path.name}"))
        sshd.authorize(ctx.vault.generate(platform.name).public_line)
        ctx.ssh_config.known_hosts.parent.mkdir(parents=True, exist_ok=True)
        ctx.ssh_config.known_hosts.write_text(sshd.known_hosts_line())
        host = ctx.registry.save_host(Host("gpu1", "127.0.0.1", sshd.port, sshd.user, platform.id))
        ctx.ledger.start_rental(platform.id, "2.65", host_id=host.id)
        ctx.store.set_setting(WELCOME_SETTING, "1")
    finally:
        ctx.close()
    standin.configure(gpu_count=2)


@pytest.mark.qt_log_ignore("setHighDpiScaleFactorRoundingPolicy must be called before")
def test_run_gui_watches_rented_hosts_from_launch_without_the_monitor_page(
    app_paths, sshd, standin, keyring_backend, qapp, monkeypatch, tmp_path
):
    _earlier_session(app_paths, sshd, standin, tmp_path)
    launch = Launch(monkeypatch)
    made = launch.made
    seen: dict[str, Any] = {}

    def check() -> None:
        services = made.get("services")
        monitor = services.monitor() if services is not None else None
        history = monitor.history("gpu1") if monitor is not None else None
        if history is None or len(history.latest) < 2:
            QTimer.singleShot(100, check)
        elif "hidden_at" not in seen:
            made["window"].hide()  # closed to the tray: watching goes on
            seen["hidden_at"] = history.version
            QTimer.singleShot(100, check)
        elif history.version > seen["hidden_at"] + 2:
            seen["aliases"] = monitor.aliases()
            seen["page_monitor"] = made["window"].pages["monitor"].monitor
            seen["page"] = made["window"].stack.currentWidget()
            QApplication.quit()
        else:
            QTimer.singleShot(100, check)

    code = launch.run(check, background=True)
    assert code == 0
    assert seen.get("aliases") == ["gpu1"], "no samples from the rented host within 30 s"
    assert seen["page_monitor"] is None  # the page never started anything
    assert seen["page"] is not made["window"].pages["monitor"]
    assert "watcher" in made["services"].__dict__ and not made["services"].watcher.started
