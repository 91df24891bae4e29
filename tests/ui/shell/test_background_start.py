"""`--background` (start at login) and the first-paint hook of benchmarks/startup.py."""

from __future__ import annotations

import os
import subprocess
import sys


def _start(args, tmp_path):
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "GPU_COMPANION_HOME": str(tmp_path),
        "GPU_COMPANION_EXIT_AFTER_FIRST_PAINT": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "gpu_companion", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_first_paint_hook_reports_and_exits(tmp_path):
    out = _start([], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["first-paint"]


def test_background_without_a_tray_still_opens_the_window(tmp_path):
    """Offscreen has no system tray: hiding the window would leave the user nothing."""
    out = _start(["--background"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["first-paint"]
