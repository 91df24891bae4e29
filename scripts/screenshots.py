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
if not ctx.transfers.jobs():
    import json, time
    now = time.time()
    demo = [
        ("vast-4090", "upload", "/home/me/datasets/alpaca-clean", "data/alpaca-clean", "", "done",
         412_000_000, 412_000_000, "rsync", "Verified.", 1, 96.0),
        ("lambda-h100", "download", "/home/me/GPU checkpoints/lambda-h100", "outputs",
         "Sync checkpoints: lambda-h100:outputs", "paused", 7_340_000_000, 18_200_000_000, "rsync",
         "Interrupted when the app closed; resume to continue from where it stopped.", 0, 610.0),
        ("vast-4090", "upload", "/home/me/models/llama-3-8b", "models/llama-3-8b", "", "failed",
         1_100_000_000, 16_060_000_000, "sftp",
         "The destination disk is full (or over its quota). Free space there (df -h), or pick a "
         "bigger volume, then start the transfer again; what already arrived is kept.", 0, 140.0),
        ("vast-4090", "upload", "/home/me/code/train.py", "uploads", "", "paused",
         0, 18_432, "", "Paused; partial data kept.", 0, 0.0),
    ]
    with ctx.store.transaction() as db:
        for (alias, direction, local, remote, label, state, done, total, engine, msg, ok,
             secs) in demo:
            db.table("transfer_jobs").insert({
                "host_alias": alias, "direction": direction, "local_path": local,
                "remote_path": remote, "options": json.dumps({}), "label": label,
                "state": state, "bytes_done": done, "bytes_total": total, "engine": engine,
                "message": msg, "verified": ok, "attempts": 1, "active_s": secs,
                "created_at": now, "finished_at": now if state in ("done", "failed") else None,
            })
win = build_window(ctx)
win.resize(1180, 720)
win.move(50, 40)
win.show()
todo = list(pages)

def shoot():
    if not todo:
        win.close(); ctx.close(); app.quit(); return
    key = todo.pop(0)
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
