"""`run_gui` on a first launch, as the app starts: the window paints, then the app's ssh-agent
starts, the log starts rotating, and only then the welcome opens, so its check reports the agent
that runs (not "it starts with the app"). And the end of a launch: SIGTERM closes the services."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from logging.handlers import RotatingFileHandler
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from gpu_companion.ui.shell.welcome import WelcomeDialog
from tests.harness.launch import Launch


@pytest.mark.qt_log_ignore("setHighDpiScaleFactorRoundingPolicy must be called before")
def test_first_launch_welcomes_after_the_agent_started(
    app_paths, keyring_backend, qapp, monkeypatch
):
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    launch = Launch(monkeypatch)
    seen: dict[str, Any] = {}

    def check() -> None:
        window = launch.made.get("window")
        dialog = window.findChild(WelcomeDialog) if window is not None else None
        if dialog is None or dialog.checking:
            QTimer.singleShot(50, check)
            return
        seen["painted"] = window.first_paint_done
        seen["agent"] = dialog.rows["ssh-agent"][2].text()
        seen["log"] = [type(h) for h in launch.added_handlers()]
        dialog.reject()
        window.quitting = True
        QApplication.quit()

    code = launch.run(check)
    assert code == 0
    assert seen.get("painted") is True, "no welcome within 30 s"
    assert "GPU Companion's agent runs with" in seen["agent"], seen["agent"]
    assert seen["log"] == [RotatingFileHandler]  # the plain start-up handler was replaced


def test_a_terminated_app_ends_its_ssh_agent_with_it(tmp_path):
    """SIGTERM (a logout, `kill`): the app quits as its Quit does, without asking, and the
    services close, so its ssh-agent does not outlive it."""
    from gpu_companion.core.ssh.agent import RuntimePaths, agent_key_count

    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "GPU_COMPANION_HOME": str(tmp_path),
    }
    env.pop("GPU_COMPANION_EXIT_AFTER_FIRST_PAINT", None)
    socket = RuntimePaths.for_data_dir(tmp_path / "data").socket
    app = subprocess.Popen(
        [sys.executable, "-m", "gpu_companion"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while agent_key_count(socket) is None and time.monotonic() < deadline:
            assert app.poll() is None, app.stderr.read() if app.stderr else ""
            time.sleep(0.1)
        assert agent_key_count(socket) == 0, "the app's agent did not start"
        app.send_signal(signal.SIGTERM)
        assert app.wait(timeout=15) == 0
    finally:
        if app.poll() is None:
            app.kill()
            app.wait()
    assert agent_key_count(socket) is None  # ended with the app
    assert not socket.parent.exists()  # its runtime dir is gone too
    log = (tmp_path / "logs" / "gpu-companion.log").read_text()
    assert f"ending on signal {int(signal.SIGTERM)}" in log
