"""The installed entry points: --version, --smoke-test offscreen, python -m."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from gpu_companion import __version__


def _run(args, env_extra=None):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", **(env_extra or {})}
    return subprocess.run(args, capture_output=True, text=True, timeout=120, env=env, check=False)


def test_version():
    out = _run([sys.executable, "-m", "gpu_companion", "--version"])
    assert out.returncode == 0
    assert out.stdout.strip() == f"gpu-companion {__version__}"


def test_smoke_test_renders_every_page_and_exits_0(tmp_path):
    exe = shutil.which("gpu-companion", path=os.path.dirname(sys.executable))
    assert exe, "the gpu-companion script is not installed"
    out = _run([exe, "--smoke-test"], {"GPU_COMPANION_HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    assert "8 pages rendered" in out.stdout
    assert (tmp_path / "data" / "companion.sqlite3").exists()
    assert (tmp_path / "logs" / "gpu-companion.log").exists()


def test_smoke_test_fails_clearly_on_a_broken_database(tmp_path):
    (tmp_path / "data").mkdir(parents=True)
    (tmp_path / "data" / "companion.sqlite3").write_bytes(b"garbage" * 200)
    out = _run(
        [sys.executable, "-m", "gpu_companion", "--smoke-test"],
        {"GPU_COMPANION_HOME": str(tmp_path)},
    )
    assert out.returncode == 1
    assert (tmp_path / "data" / "companion.sqlite3").read_bytes() == b"garbage" * 200


def test_smoke_test_fails_instead_of_waiting_on_an_error_dialog(tmp_path):
    code = (
        "from gpu_companion.ui.settings.page import SettingsPage\n"
        "def broken(self):\n"
        "    raise RuntimeError('page bug')\n"
        "SettingsPage.refresh = broken\n"
        "from gpu_companion.cli import main\n"
        "raise SystemExit(main(['--smoke-test']))\n"
    )
    out = _run([sys.executable, "-c", code], {"GPU_COMPANION_HOME": str(tmp_path)})
    assert out.returncode == 1
    assert "unexpected error: RuntimeError('page bug')" in out.stderr
    assert "RuntimeError: page bug" in (tmp_path / "logs" / "gpu-companion.log").read_text()
