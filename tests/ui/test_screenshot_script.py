"""The screenshot script drives the real app in a real X window under Xvfb."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, missing_component


def test_screenshot_script_captures_a_real_window(tmp_path):
    if not shutil.which("Xvfb") or not shutil.which("import"):
        missing_component("Xvfb and ImageMagick are needed for real-window screenshots")
    env = dict(os.environ)
    env.pop("QT_QPA_PLATFORM", None)
    if os.environ.get("GPU_COMPANION_TEST_DISPLAY"):
        env["DISPLAY"] = os.environ["GPU_COMPANION_TEST_DISPLAY"]
    out = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "screenshots.py"),
            "--out",
            str(tmp_path),
            "--pages",
            "hosts,settings",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    for page in ("hosts", "settings"):
        png = Path(tmp_path / f"{page}.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        identify = subprocess.run(
            ["identify", "-format", "%w %h %k", str(png)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        width, height, colours = map(int, identify)
        assert (width, height) == (1180, 720)
        assert colours > 50, "a blank capture has only a handful of colours"
