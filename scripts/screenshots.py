#!/usr/bin/env python3
"""Screenshots of the real app in a real X window (Xvfb), with demo data in a temp data dir.

    python scripts/screenshots.py [--out docs/screenshots] [--pages hosts,keys,...]

Starts Xvfb when no DISPLAY is set, runs the app with QT_QPA_PLATFORM=xcb, and captures the
whole X screen with ImageMagick's `import -window root` once each page has painted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def start_xvfb() -> tuple[subprocess.Popen[bytes] | None, str]:
    if os.environ.get("DISPLAY"):
        return None, os.environ["DISPLAY"]
    xvfb = shutil.which("Xvfb")
    if not xvfb:
        sys.exit("Xvfb is not installed (Debian: xvfb)")
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        [xvfb, "-displayfd", str(write_fd), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(write_fd,),
    )
    os.close(write_fd)
    with os.fdopen(read_fd) as f:
        number = f.readline().strip()  # Xvfb writes the display it picked once it is ready
    if not number:
        proc.kill()
        sys.exit("Xvfb did not start")
    return proc, f":{number}"


DRIVER = r"""
import subprocess, sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from gpu_companion.app import AppContext, build_window
from gpu_companion.core.paths import AppPaths
from gpu_companion.core.hosts import Host, Platform

out, pages = sys.argv[1], sys.argv[2].split(",")
app = QApplication([])
app.setStyle("Fusion")
ctx = AppContext(AppPaths.default())
if not ctx.registry.platforms():
    vast = ctx.registry.save_platform(Platform("vast.ai", "https://cloud.vast.ai", "second", "USD"))
    lam = ctx.registry.save_platform(
        Platform("Lambda", "https://cloud.lambdalabs.com", "minute", "USD"))
    ctx.registry.save_host(Host("vast-4090", "ssh4.vast.ai", 41022, "root", vast.id, "RTX 4090", 2,
                                "LoRA runs"))
    ctx.registry.save_host(Host("lambda-h100", "192.0.2.10", 22, "ubuntu", lam.id, "H100 SXM", 8,
                                "team fine-tune"))
if any(p.startswith("monitor") for p in pages):
    import math, time
    from gpu_companion.core.collector import (HostState, HostStatus, PollEvent, SamplesEvent,
                                              StatusEvent, TimedSample)
    from gpu_companion.core.host_counters import HostCounters
    from gpu_companion.core.monitor import Monitor
    from gpu_companion.core.nvsmi import ComputeApp, GpuSample

    class DemoMonitor(Monitor):  # replays ten minutes of two rentals; connects nowhere
        def watch(self, host, billed=None):
            pass

    mon = ctx._monitor = DemoMonitor(None, notifier=ctx.notifier)
    now = time.time()
    demo = (("lambda-h100", 8, "NVIDIA H100 80GB HBM3", 81559, 700.0, "ubuntu"),
            ("vast-4090", 2, "NVIDIA GeForce RTX 4090", 24564, 450.0, "root"))
    for alias, n, name, total, limit, user in demo:
        mon.ingest(StatusEvent(alias, HostStatus(HostState.LIVE)))
        for i in range(600):
            def util(g):
                if alias == "vast-4090":
                    return int(28 + 12 * math.sin(i / 9 + g))
                return max(0, min(100, int(88 + 9 * math.sin(i / 25 + g) - (30 if g == 7 else 0))))
            samples = tuple(TimedSample(now - 600 + i, GpuSample(
                index=g, name=name, uuid=f"GPU-{alias}-{g}", utilization_gpu=util(g),
                utilization_memory=util(g) // 2, memory_used_mib=int(total * (0.55 + 0.04 * g)),
                memory_total_mib=total, temperature_c=55 + util(g) // 6 + g,
                power_draw_w=limit * util(g) / 110 + 60, power_limit_w=limit, clocks_sm_mhz=1980,
                pstate="P0")) for g in range(n))
            mon.ingest(SamplesEvent(alias, samples))
        apps = tuple(ComputeApp(gpu_uuid=f"GPU-{alias}-{g}", pid=4100 + g,
                                process_name="python train.py --config lora.yaml",
                                used_memory_mib=int(total * 0.5)) for g in range(n))
        reads = 420e6 if alias == "vast-4090" else 35e6
        mon.ingest(PollEvent(alias, apps, HostCounters(now, 3.2, 41.0, 4.0, reads, 12e6,
                                                       310 * 2**30, 500 * 2**30),
                             {4100 + g: user for g in range(n)}, user))
    mon.ingest(StatusEvent("local", HostStatus(HostState.NO_DRIVER,
               "nvidia-smi is not installed on this computer.",
               "The image has no NVIDIA driver tools: choose a GPU image, or install the driver.")))
win = build_window(ctx)
win.resize(1180, 720)
win.move(50, 40)
win.show()
todo = list(pages)

def shoot():
    if not todo:
        win.close(); ctx.close(); app.quit(); return
    key = todo.pop(0)
    if key.startswith("monitor-"):  # monitor-ALIAS: the monitor page showing one host
        win.navigate("monitor").open_host(key.split("-", 1)[1])
    else:
        win.navigate(key)
    def grab():
        subprocess.run(["import", "-window", "root", "-crop", "1180x720+50+40",
                        f"{out}/{key}.png"], check=True)
        print(f"{out}/{key}.png")
        QTimer.singleShot(50, shoot)
    QTimer.singleShot(400, grab)

QTimer.singleShot(800, shoot)
app.exec()
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--pages", default="hosts")
    args = parser.parse_args()
    if not shutil.which("import"):
        sys.exit("ImageMagick's `import` is not installed (Debian: imagemagick)")
    args.out.mkdir(parents=True, exist_ok=True)
    xvfb, display = start_xvfb()
    try:
        with tempfile.TemporaryDirectory() as home:
            env = {
                **os.environ,
                "DISPLAY": display,
                "QT_QPA_PLATFORM": "xcb",
                "GPU_COMPANION_HOME": home,
                "HOME": home,
            }
            env.pop("WAYLAND_DISPLAY", None)
            done = subprocess.run(
                [sys.executable, "-c", DRIVER, str(args.out.resolve()), args.pages],
                env=env,
                timeout=120,
                check=False,
            )
            return done.returncode
    finally:
        if xvfb:
            xvfb.terminate()
            xvfb.wait(5)


if __name__ == "__main__":
    sys.exit(main())
