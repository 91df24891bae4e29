"""The lazy start-up path: the first window is built without the heavy libraries.

pyqtgraph (with numpy) and paramiko cost 0.1-0.3 s each to import (benchmarks/startup.py); the
window must paint first and load them when a page really needs them, or, for the Monitor's
plotting, on a worker thread right after the first paint.
"""

from __future__ import annotations

import os
import subprocess
import sys

HEAVY = ("pyqtgraph", "numpy", "paramiko")

PROBE = f"""
import sys
import threading
import time
HEAVY = {HEAVY!r}
first_import = {{}}  # module -> the thread that imported it first
gui_imports = []  # what the GUI thread imports while the Monitor page first shows
showing = [False]


class Where:
    def find_spec(self, name, path=None, target=None):
        first_import.setdefault(name, threading.current_thread().name)
        if showing[0] and threading.current_thread() is threading.main_thread():
            gui_imports.append(name)
        return None


sys.meta_path.insert(0, Where())
from PySide6.QtWidgets import QApplication
app = QApplication([])
import gpu_companion.app  # what gpu-companion imports before the window
from gpu_companion.services import build_services
from gpu_companion.ui.shell.build import build_window
ctx = build_services()
win = build_window(ctx)
win.show()
end = time.monotonic() + 60
while not win.first_paint_done and time.monotonic() < end:  # the steps after the first paint
    app.processEvents()
for key in win.pages:
    if key != "monitor":  # the one page that plots
        win.navigate(key)
        app.processEvents()
from gpu_companion.ui.monitor.preload import preload_thread
preloading = preload_thread()  # started by the window's last step after the first paint
if preloading is not None:
    preloading.join(60)
import gc
frozen = gc.get_freeze_count()
from gpu_companion.core.common.lazy import is_loaded
print(" ".join(f"{{m}}@{{first_import.get(m)}}" for m in HEAVY if is_loaded(m)))
showing[0] = True
win.navigate("monitor")
app.processEvents()
showing[0] = False
print(" ".join(m for m in HEAVY if is_loaded(m)))
print(" ".join(m for m in gui_imports if m.split(".")[0] in HEAVY))
print(frozen)
win.close()
ctx.close()
"""


def test_plotting_is_imported_off_the_gui_thread_after_the_first_paint(tmp_path):
    """The first window paints without pyqtgraph, numpy and paramiko (the test below); right
    after, a worker thread imports the Monitor's plotting modules, so the page's first show
    imports none of them on the GUI thread."""
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
    preloaded, after_monitor, on_gui_thread, frozen = out.stdout.split("\n")[:4]
    # every other page shown and the preload done: plotting loaded by the worker, no ssh
    assert set(preloaded.split()) == {"numpy@preload-plotting", "pyqtgraph@preload-plotting"}
    assert "pyqtgraph" in after_monitor.split() and "paramiko" not in after_monitor.split()
    assert on_gui_thread == "", (
        f"imported on the GUI thread by the Monitor's first show: {on_gui_thread}"
    )
    # and then what start-up made (modules, window, pages) is out of the collector's sight: a
    # full collection walked it all, 30-50 ms of the GUI thread's time (ui/monitor/preload.py)
    assert int(frozen) > 50_000


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
