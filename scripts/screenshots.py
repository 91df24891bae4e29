#!/usr/bin/env python3
"""Screenshots of the real app in a real X window (Xvfb), with demo data in a temp data dir.

    python scripts/screenshots.py [--out docs/screenshots] [--pages hosts,keys,...]

Starts Xvfb when no DISPLAY is set, runs the app with QT_QPA_PLATFORM=xcb, and captures the
whole X screen with ImageMagick's `import -window root` once each page has painted. Without
--pages every page of the sidebar is captured, plus `welcome` (the first-run dialog with its
environment check); the docs/user-guide.md pictures come from this one command.
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
    # more of a real week: a per-minute cloud and a university cluster
    runpod = ctx.registry.save_platform(
        Platform("RunPod", "https://www.runpod.io", "minute", "USD"))
    uni = ctx.registry.save_platform(Platform("Uni cluster", "", "hour", "EUR"))
    ctx.registry.save_host(Host("runpod-a100", "203.0.113.24", 22079, "root", runpod.id,
                                "A100 80GB", 1, "eval sweeps"))
    ctx.registry.save_host(Host("lab-l40s", "gpu07.cluster.example.edu", 22, "mlab", uni.id,
                                "L40S", 4, "shared with the lab"))
ctx.store.set_setting("ui.welcome_shown", "1")
win = build_window(ctx)
win.resize(1180, 720)
win.move(50, 40)
win.show()
if pages == ["all"]:
    pages = [*win.pages, "welcome"]
todo = list(pages)

def capture(key, geometry):
    subprocess.run(["import", "-window", "root", "-crop", geometry, f"{out}/{key}.png"],
                   check=True)
    print(f"{out}/{key}.png")

def shoot_welcome():
    from gpu_companion.ui.welcome import WelcomeDialog
    dialog = WelcomeDialog(ctx, win)
    dialog.show()
    def wait():
        if dialog.checking:
            QTimer.singleShot(100, wait)
            return
        def grab():
            g = dialog.frameGeometry()
            capture("welcome", f"{g.width()}x{g.height()}+{g.x()}+{g.y()}")
            dialog.close()
            QTimer.singleShot(50, shoot)
        QTimer.singleShot(300, grab)
    wait()

def shoot():
    if not todo:
        win.close(); ctx.close(); app.quit(); return
    key = todo.pop(0)
    if key == "welcome":
        win.navigate("hosts")
        QTimer.singleShot(200, shoot_welcome)
        return
    win.navigate(key)
    def grab():
        capture(key, "1180x720+50+40")
        QTimer.singleShot(50, shoot)
    QTimer.singleShot(400, grab)

QTimer.singleShot(800, shoot)
app.exec()
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument(
        "--pages", default="all", help="comma-separated page keys, `welcome`, or all (default)"
    )
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
