#!/usr/bin/env python3
"""Launch to first painted window: the app as shipped against eager imports, and the bundle.

    python benchmarks/startup.py [--runs 9] [--bundle dist/gpu-companion-*/gpu-companion]

Each run is a fresh process with QT_QPA_PLATFORM=offscreen and
GPU_COMPANION_EXIT_AFTER_FIRST_PAINT=1: the app prints `first-paint` once the main window's first
paint event is delivered, and quits. The time is taken here, from spawn to that line, so
interpreter start, imports, the database and the window are all in it. Variants run interleaved
(one of each per round) so load on the machine spreads evenly; the table shows median, min and max
wall time, the median CPU time of the process (steadier on a busy machine), the ratio of medians
to the app as shipped and to the bare Qt window (the target, issue 30: the app within 1.5x of
it). Children run with .pyc writing on (PYTHONDONTWRITEBYTECODE unset): otherwise every run
compiles every module.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# The naive alternative: everything the app will ever use imported before the window is built.
EAGER = (
    "import pyqtgraph, paramiko, keyring, keyring.backends.SecretService, cryptography.hazmat."
    "primitives.asymmetric.ed25519, sqlite_utils\n"
    "from gpu_companion.cli import main\n"
    "raise SystemExit(main([]))\n"
)
# The floor: the interpreter, QtWidgets and an empty main window, nothing of the app.
BARE_QT = (
    "import sys\n"
    "from PySide6.QtCore import QEvent, QObject, QTimer\n"
    "from PySide6.QtWidgets import QApplication, QMainWindow\n"
    "app = QApplication([])\n"
    "w = QMainWindow(); w.resize(1100, 700)\n"
    "class F(QObject):\n"
    "    def eventFilter(self, o, e):\n"
    "        if e.type() == QEvent.Type.Paint:\n"
    "            QTimer.singleShot(0, lambda: (print('first-paint', flush=True), app.quit()))\n"
    "        return False\n"
    "f = F(); w.installEventFilter(f); w.show(); app.exec()\n"
)


def time_to_first_paint(argv: list[str], home: str) -> tuple[float, float]:
    """(wall seconds to the first-paint line, CPU seconds of the whole process)."""
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "QT_QPA_PLATFORM": "offscreen",
        "GPU_COMPANION_EXIT_AFTER_FIRST_PAINT": "1",
        "GPU_COMPANION_HOME": home,
    }
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True
    )
    assert proc.stdout is not None
    elapsed = None
    for line in proc.stdout:
        if line.strip() == "first-paint":
            elapsed = time.perf_counter() - start
            break
    proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)  # CPU time: far less sensitive to machine load
    proc.returncode = os.waitstatus_to_exitcode(status)
    if elapsed is None:
        raise RuntimeError(f"{argv[0]} exited ({proc.returncode}) without painting")
    return elapsed, usage.ru_utime + usage.ru_stime


def dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--bundle", help="the bundle's executable (default: newest under dist/)")
    args = parser.parse_args()
    bundle = args.bundle or next(
        iter(sorted(glob.glob(str(REPO / "dist" / "gpu-companion-*-linux-*" / "gpu-companion")))),
        None,
    )
    py = sys.executable
    variants: dict[str, list[str]] = {
        "bare Qt window (floor)": [py, "-c", BARE_QT],
        "source, as shipped (lazy)": [py, "-m", "gpu_companion"],
        "source, eager imports (naive)": [py, "-c", EAGER],
    }
    if bundle and Path(bundle).exists():
        variants["bundle (PyInstaller one-folder)"] = [bundle]
    times: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory() as home:
        for argv in variants.values():  # warm-up: database created, disk cache warm
            time_to_first_paint(argv, home)
        for _ in range(args.runs):
            for name, argv in variants.items():
                wall, used = time_to_first_paint(argv, home)
                times[name].append(wall)
                cpu[name].append(used)

    ref = statistics.median(times["source, as shipped (lazy)"])
    floor = statistics.median(times["bare Qt window (floor)"])
    load = os.getloadavg()[0]
    print(
        f"launch to first paint, offscreen, {args.runs} runs each, python "
        f"{sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.1f}"
    )
    header = ("variant", "median s", "min s", "max s", "CPU s", "vs shipped", "vs bare Qt")
    print("{:34} {:>9} {:>7} {:>7} {:>6} {:>11} {:>11}".format(*header))
    for name, values in times.items():
        med = statistics.median(values)
        print(
            f"{name:34} {med:9.3f} {min(values):7.3f} {max(values):7.3f} "
            f"{statistics.median(cpu[name]):6.3f} {med / ref:10.2f}x {med / floor:10.2f}x"
        )
    shipped_cpu = statistics.median(cpu["source, as shipped (lazy)"])
    floor_cpu = statistics.median(cpu["bare Qt window (floor)"])
    print(
        f"as shipped vs bare Qt window: {ref / floor:.2f}x wall to first paint (target: at most "
        f"1.5x); {shipped_cpu / floor_cpu:.2f}x CPU of the whole process"
    )
    print(
        "(median/min/max: wall time to first paint; CPU s: median user+sys of the whole process, "
        "which for the app includes\n building the other pages right after the first paint, "
        "before it quits)"
    )
    if bundle and Path(bundle).exists():
        folder = Path(bundle).parent
        tarball = folder.parent / f"{folder.name}.tar.gz"
        print(f"\nbundle folder {folder.name}: {dir_size(folder) / 1e6:.0f} MB", end="")
        if tarball.exists():
            print(f", tarball {tarball.stat().st_size / 1e6:.0f} MB")
        else:
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
