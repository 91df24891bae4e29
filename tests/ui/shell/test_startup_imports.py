"""The lazy start-up path: the first window is built without the heavy libraries.

pyqtgraph (with numpy) and paramiko cost 0.1-0.3 s each to import (benchmarks/startup.py); the
window must paint first and load them when a page really needs them.
"""

from __future__ import annotations

import os
import subprocess
import sys

HEAVY = ("pyqtgraph", "numpy", "paramiko")

PROBE = f"""
import sys
HEAVY = {HEAVY!r}
from PySide6.QtWidgets import QApplication
app = QApplication([])
import gpu_companion.app  # what gpu-companion imports before the window
from gpu_companion.services import build_services
from gpu_companion.ui.shell.build import build_window
ctx = build_services()
win = build_window(ctx)
win.show()
app.processEvents()
for key in win.pages:
    if key != "monitor":  # the one page that plots: it loads pyqtgraph when first shown
        win.navigate(key)
        app.processEvents()
from gpu_companion.core.common.lazy import is_loaded
print(" ".join(m for m in HEAVY if is_loaded(m)))
win.navigate("monitor")
app.processEvents()
print(" ".join(m for m in HEAVY if is_loaded(m)))
win.close()
ctx.close()
"""


def test_first_window_does_not_import_pyqtgraph_numpy_or_paramiko(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "GPU_COMPANION_HOME": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    first, after_monitor = out.stdout.split("\n")[:2]
    assert first == "", f"imported at start-up: {first}"
    assert "pyqtgraph" in after_monitor  # loaded when the Monitor page first shows, not before


# What `gpu-companion` runs: cli.main parses its arguments (build_parser imports every command
# module), then boots the window; the hook prints what is loaded when the first paint is delivered.
FIRST_PAINT_PROBE = """
import gpu_companion.ui.shell.first_paint as fp
from gpu_companion.core.common.lazy import is_loaded
report = fp._FirstPaint._report
def loaded_then_report(self):
    print("loaded:" + " ".join(m for m in {heavy!r} if is_loaded(m)), flush=True)
    report(self)
fp._FirstPaint._report = loaded_then_report
from gpu_companion.cli import main
raise SystemExit(main([]))
"""


# Loaded right after the first paint, not before it (each cost 1-6 ms of a 0.17 s start-up):
# the single-instance socket, log rotation, the ledger behind the tray, the tunnel code.
AFTER_PAINT = (
    "PySide6.QtNetwork",
    "logging.handlers",
    "gpu_companion.core.spend.ledger",
    "gpu_companion.core.access.tunnel",
)


def test_gpu_companion_paints_before_sqlite_utils_numpy_pyqtgraph_paramiko(tmp_path):
    heavy = ("sqlite_utils", *HEAVY, *AFTER_PAINT)
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "GPU_COMPANION_HOME": str(tmp_path),
        "GPU_COMPANION_EXIT_AFTER_FIRST_PAINT": "1",
    }
    probe = FIRST_PAINT_PROBE.format(heavy=heavy)
    for run in ("first start (database created)", "second start"):
        out = subprocess.run(
            [sys.executable, "-c", probe],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        assert lines[-1] == "first-paint", out.stdout
        loaded = next(ln for ln in lines if ln.startswith("loaded:"))
        if run == "second start":  # the first start runs the migrations with sqlite-utils
            assert loaded == "loaded:", f"imported before the first paint: {loaded}"
        else:
            assert set(loaded[7:].split()) <= {"sqlite_utils"}, loaded


def test_command_parsers_import_nothing_heavy():
    """`gpu-companion` builds every command's parser before it knows a window is wanted."""
    code = (
        "import sys; from gpu_companion.cli import build_parser; build_parser(); "
        "print(' '.join(m for m in ('sqlite_utils', 'numpy', 'paramiko', 'pyqtgraph', "
        "'keyring', 'gpu_companion.core.spend.ledger', 'gpu_companion.core.monitor.collector') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


def test_numpy_stays_importable_after_the_core(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from gpu_companion.core.common.fast_imports import "
            "import_sqlite_utils_without_numpy as f; "
            "f(); import sqlite_utils.db, numpy; assert sqlite_utils.db.np is None; "
            "print(numpy.zeros(2).sum())",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0 and out.stdout.strip() == "0.0", out.stderr


def test_the_help_still_lists_every_command():
    out = subprocess.run(
        [sys.executable, "-m", "gpu_companion", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    for command in ("estimate", "ledger", "ssh-config", "doctor", "inspect"):
        assert command in out.stdout
