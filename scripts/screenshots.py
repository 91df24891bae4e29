#!/usr/bin/env python3
"""Screenshots of the real app in a real X window (Xvfb), with demo data in a temp data dir.

    python scripts/screenshots.py [--out docs/screenshots] [--pages hosts,keys,...] [--wizard]
                                  [--size 1100x700] [--lang zh_CN]

Starts Xvfb when no DISPLAY is set, runs the app with QT_QPA_PLATFORM=xcb, and captures the
whole X screen with ImageMagick's `import -window root` once each page has painted. Without
--pages every page of the sidebar is captured, plus `welcome` (the first-run dialog with its
environment check); the docs/user-guide.md pictures come from this one command. `--size WxH`
sizes the window (default 1180x720) and, when not the default, names the files `KEY-WxH.png`
(scripts/screenshots_1100x700.py: every page at the smallest size the app supports).
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
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        pass_fds=(write_fd,),
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
from PySide6.QtWidgets import QApplication, QScrollArea
from gpu_companion.services import build_services
from gpu_companion.ui.shell.build import build_window
from gpu_companion.core.common.paths import AppPaths
from gpu_companion.core.hosts.registry import Host, Platform

out, pages = sys.argv[1], sys.argv[2].split(",")
width, height = map(int, sys.argv[4].split("x"))
suffix = "" if (width, height) == (1180, 720) else f"-{width}x{height}"
if pages == ["all"]:
    from gpu_companion.ui.shell.build import PAGES
    pages = [p.key for p in PAGES] + ["monitor-lambda-h100", "monitor-vast-4090", "welcome",
                                      "release-countdown", "release-policy", "orphan-alert",
                                      "settings-away", "spend-import"]
app = QApplication([])
app.setStyle("Fusion")
import os
from gpu_companion.ui.common.i18n import install_translators
install_translators(app, os.environ.get("SCREENSHOT_LANG", "en"))
ctx = build_services(AppPaths.default())
ZH = os.environ.get("SCREENSHOT_LANG") == "zh_CN"  # a Chinese renter's week: ¥, AutoDL, 恒源云
CUR = "CNY" if ZH else "USD"
def price(usd, cny):
    return cny if ZH else usd
vast = lam = None
if not ctx.registry.platforms():
    vast = ctx.registry.save_platform(
        Platform("AutoDL", "https://www.autodl.com", "second", CUR) if ZH
        else Platform("vast.ai", "https://cloud.vast.ai", "second", CUR))
    lam = ctx.registry.save_platform(
        Platform("恒源云", "https://www.gpushare.com", "minute", CUR) if ZH
        else Platform("Lambda", "https://cloud.lambdalabs.com", "minute", CUR))
    ctx.registry.save_host(Host("vast-4090", "ssh4.vast.ai", 41022, "root", vast.id, "RTX 4090", 2,
                                "LoRA runs"))
    ctx.registry.save_host(Host("lambda-h100", "192.0.2.10", 22, "ubuntu", lam.id, "H100 SXM", 8,
                                "team fine-tune"))
    # more of a real week: a per-minute cloud and a university cluster
    runpod = ctx.registry.save_platform(
        Platform("RunPod", "https://www.runpod.io", "minute", "USD"))
    uni = ctx.registry.save_platform(
        Platform("学校集群", "", "hour", CUR) if ZH else Platform("Uni cluster", "", "hour", "EUR"))
    ctx.registry.save_host(Host("runpod-a100", "203.0.113.24", 22079, "root", runpod.id,
                                "A100 80GB", 1, "eval sweeps"))
    ctx.registry.save_host(Host("lab-l40s", "gpu07.cluster.example.edu", 22, "mlab", uni.id,
                                "L40S", 4, "shared with the lab"))
if "spend" in pages and not ctx.ledger.history():
    from datetime import timedelta
    now = ctx.ledger.now()
    host = ctx.registry.host("vast-4090")
    for day, (plat, gpu, rate, hours, tag, outcome) in enumerate([
        (vast, "RTX 4090", price("0.39", "1.98"), 6, "lora-7b", "failure"),
        (lam, "H100 SXM", price("2.49", "15.80"), 3, "lora-7b", "success"),
        (vast, "RTX 4090", price("0.39", "1.98"), 9, "sweep", ""),
        (lam, "H100 SXM", price("2.49", "15.80"), 5, "lora-7b", "success"),
        (vast, "RTX 4090", price("0.78", "3.96"), 7, "dpo", "failure"),
        (lam, "H100 SXM", price("2.49", "15.80"), 4, "dpo", "success"),
    ] * 3):
        start = now - timedelta(days=19 - day, hours=3)
        r = ctx.ledger.start_rental(plat.id, rate, gpu_model=gpu, gpu_count=1, tag=tag,
                                    started_at=start)
        ctx.ledger.end_rental(r.id, at=start + timedelta(hours=hours), reason="released")
        if outcome:
            ctx.ledger.update_rental(r.id, outcome=outcome)
    ctx.ledger.add_charge(vast.id, "storage", price("4.20", "20.00"),
                          description="数据盘 200 GB" if ZH else "200 GB volume")
    ctx.ledger.start_rental(vast.id, price("0.78", "3.96"), host_id=host.id,
                            gpu_model="RTX 4090", gpu_count=2,
                            started_at=now - timedelta(hours=2, minutes=14),
                            max_runtime=timedelta(hours=6), tag="dpo")
    ctx.budgets.set_budget("month", price("150", "1000"), CUR)
    ctx.budgets.set_budget("day", price("20", "100"), CUR, platform_id=vast.id)
class DemoKeyring:  # screenshot process only: secrets stay in this process's memory
    def __init__(self): self.secrets = {}
    def get_password(self, s, u): return self.secrets.get((s, u))
    def set_password(self, s, u, p): self.secrets[(s, u)] = p
    def delete_password(self, s, u): self.secrets.pop((s, u), None)
if "keys" in pages and not ctx.vault.keys():
    ctx.vault.backend = DemoKeyring()
    first, second = ("AutoDL", "恒源云") if ZH else ("vast.ai", "Lambda")
    ctx.vault.generate(first)
    ctx.vault.generate(second)
    ctx.vault.rotate(second)
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
ctx.store.set_setting("ui.welcome_shown", "1")
if any(p.startswith("monitor") for p in pages):
    import math, time
    from gpu_companion.core.monitor.collector import (
        HostState, HostStatus, PollEvent, SamplesEvent, StatusEvent, TimedSample)
    from gpu_companion.core.monitor.counters import HostCounters
    from gpu_companion.core.monitor.live import Monitor
    from gpu_companion.core.monitor.nvsmi import ComputeApp, GpuSample

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
if "runs" in pages and not ctx.runs.ids():  # a finished run: 11 shards done, 1 failed
    import json, time
    run = ctx.runs.root / "20260307-141502"
    (run / "out").mkdir(parents=True)
    shards = [f"{a}:{a + 50000}" for a in range(0, 600000, 50000)]
    (run / "inputs.txt").write_text("".join(s + "\n" for s in shards))
    (run / "spec.json").write_text(json.dumps({
        "hosts": [{"alias": "lambda-h100", "slots": 8}, {"alias": "vast-4090", "slots": 2}],
        "command": "python embed.py --from {1} --to {2}", "inputs": shards, "by_range": True,
        "retries": 2, "returns": [], "transfer_inputs": False}))
    start = time.time() - 3600
    lines = ["Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand"]
    for i, s in enumerate(shards, 1):
        host, code = ("vast-4090", 1) if i == 7 else (("lambda-h100", "vast-4090")[i % 5 == 0], 0)
        lines.append(f"{i}\t{host}\t{start + i * 140:.3f}\t{410 + i * 7:.3f}\t0\t96\t{code}\t0"
                     f"\tpython embed.py --from {s.split(':')[0]} --to {s.split(':')[1]}")
        d = run / "out" / str(i)
        d.mkdir()
        (d / "stdout").write_text("" if code else f"embedded 50000 rows -> emb/{s}.npy\n")
        (d / "stderr").write_text("torch.OutOfMemoryError: CUDA out of memory. Tried to "
                                  "allocate 2.00 GiB\n" if code else "")
    (run / "joblog").write_text("\n".join(lines) + "\n")
win = build_window(ctx)
if any(p.startswith("release") for p in pages):  # a checklist half-way: Release still blocked
    from datetime import datetime, timezone
    from gpu_companion.core.release import ChecklistConfig, Evidence, ItemState
    ctx.release.settings.save_config("vast-4090", ChecklistConfig(
        project="llama-lora", synced_dirs=("~/runs/ckpt",),
        archive_paths=("~/runs/final", "~/train.py"), manual=("Data disk snapshot taken",)))
    rel = win.pages["release"]
    rel.open_host("vast-4090")
    now = datetime.now(timezone.utc)
    from gpu_companion.core.common.i18n import _, ngettext  # the app's own words, in its language
    demo = {
        "checkpoints": (ItemState.PASSED, ngettext(
            "{n} directory downloaded and verified (transfer {jobs}), nothing newer on the host",
            "{n} directories downloaded and verified (transfer {jobs}), nothing newer on the host",
            1).format(n=1, jobs="#41"), (), {"directories": 1, "files_pending": 0}),
        "archive": (ItemState.PASSED, _("{archive}: {size} bytes, sha256 {sha}… on both sides")
                    .format(archive="llama-lora-20260307-bf16.tar.zst", size=2143289344,
                            sha="9f2c41d07be3"), (), {"remote_bytes": 2143289344}),
        "leftovers": (ItemState.FAILED, _("{n} file(s) to sync or dismiss").format(n=2),
                      ("/root/data/shard-07.arrow\t812.4 MiB", "/root/eval_notes.md\t0.0 MiB"),
                      {"listed": 2, "dismissed": 0, "open": 2}),
        "processes": (ItemState.FAILED, _("{n} still running").format(n=2),
                      (_("GPU process {pid} {name}{memory}").format(
                          pid=31337, name="python train.py", memory=", 20112 MiB"),
                       _("tmux session {name} (socket {socket}): {command}, pid {pid}").format(
                           name="'train'", socket="/tmp/tmux-0/default", command="python",
                           pid=31330)),
                      {"gpu_processes": 1, "processes": 0, "sessions": 1}),
    }
    for key, (state, summary, details, figures) in demo.items():
        item = rel.checklist().item(key)
        item.state = state
        item.evidence = Evidence(key, state is ItemState.PASSED, summary, item.title, now,
                                 figures, details)
    rel.model.changed()
    rel.select("processes")
if "release-countdown" in pages or "release-policy" in pages:  # the idle rule held 32 min ago
    import time
    from gpu_companion.core.autorelease.policy import Policy, Trigger
    from gpu_companion.core.autorelease.service import save_policy
    policy = Policy(idle_minutes=30, notice_minutes=10, finished_session="train")
    save_policy(ctx.store, ctx.registry.host("vast-4090").id, policy)
    idle = Trigger("idle", time.time() - 32 * 60, "GPU0: 0 %, 61/450 W; GPU1: 0 %, 58/450 W")
fake_vast = None
if "orphan-alert" in pages:  # a vast.ai account (a local stand-in of its API) and one instance
    import os                  # billing there that the app does not know: the orphan alert
    sys.path.insert(0, sys.argv[3])
    from tests.harness.fake_vast import FakeVast
    fake_vast = FakeVast().start()
    os.environ["VAST_URL"] = fake_vast.url
    if "keys" not in pages:  # else the keys' demo keyring is set already
        ctx.vault.backend = DemoKeyring()
    ctx.providers.add("vast.ai", fake_vast.api_key)
    fake_vast.add_instance(21734412, label="llama-sweep-3", gpu_name="RTX 4090", num_gpus=2,
                           dph_total=0.78)
if "settings-away" in pages and not ctx.notify.channels.all():  # where alerts go when away
    from gpu_companion.core.notify.kinds import QuietHours
    if "keys" not in pages and "orphan-alert" not in pages:  # else the demo keyring is set
        ctx.vault.backend = DemoKeyring()
    ctx.notify.channels.add_ntfy("https://ntfy.sh", "gpu-7fk2q9x4", name="phone",
                                 quiet=QuietHours.parse("23:00-07:00"))
    ctx.notify.channels.add_email("smtp.example.com", 587, "starttls", "alerts@example.com",
                                  ["me@example.com"], user="alerts@example.com",
                                  password="demo-password", name="mail")
    ctx.notify.channels.add_webhook("https://open.feishu.cn/open-apis/bot/v2/hook/demo-token",
                                    "feishu", name="team chat")
win.resize(width, height)
win.move(50, 40)
win.show()
todo = list(pages)

def capture(key, geometry):
    subprocess.run(["import", "-window", "root", "-crop", geometry, f"{out}/{key}{suffix}.png"],
                   check=True)
    print(f"{out}/{key}{suffix}.png")

def shoot_welcome():
    from gpu_companion.ui.shell.welcome import WelcomeDialog
    ctx.start()  # as at launch: the welcome opens once the app's ssh-agent runs
    dialog = WelcomeDialog(ctx, win, win)
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
        if fake_vast is not None:
            fake_vast.stop()
        win.quitting = True; win.close(); ctx.close(); app.quit(); return
    key = todo.pop(0)
    if key == "orphan-alert":  # the background sync's alert, then the dialog it points to
        win.navigate("hosts")
        ctx.provider_sync.sync()
        QTimer.singleShot(300, lambda: win.pages["hosts"].providers().open_orphans().move(
            win.x() + 300, win.y() + 370))  # below the hosts and their provider buttons
        def grab_orphans():
            capture(key, f"{width}x{height}+50+40")
            win.pages["hosts"].providers().orphans_dialog.close()
            QTimer.singleShot(50, shoot)
        QTimer.singleShot(900, grab_orphans)
        return
    if key == "welcome":
        win.navigate("hosts")
        QTimer.singleShot(200, shoot_welcome)
        return
    if key == "release-policy":  # the policy editor over the release page
        from gpu_companion.ui.release.policy_dialog import PolicyDialog
        win.navigate("release")
        dialog = PolicyDialog(ctx.store, ctx.registry.host("vast-4090"), win)
        dialog.show()
        def grab_dialog():
            g = dialog.frameGeometry()
            capture(key, f"{g.width()}x{g.height()}+{g.x()}+{g.y()}")
            dialog.close()
            QTimer.singleShot(50, shoot)
        QTimer.singleShot(400, grab_dialog)
        return
    if key == "spend-import":  # a year's bill importing: the dialog's progress, then Cancel
        from pathlib import Path
        sys.path.insert(0, sys.argv[3])
        from tests.harness.bills import write_bill
        bill = write_bill(Path(os.environ["GPU_COMPANION_HOME"]) / "year-2025.csv", 300_000)
        dialog = win.navigate("spend").run_import(bill)
        def import_it():
            if dialog.preview is None:
                QTimer.singleShot(100, import_it)
                return
            dialog.ok.click()
            QTimer.singleShot(100, grab_progress)
        def grab_progress():
            if dialog.bar.value() < 250:  # a quarter of the file stored
                QTimer.singleShot(20, grab_progress)
                return
            g = dialog.frameGeometry()
            capture(key, f"{g.width()}x{g.height()}+{g.x()}+{g.y()}")
            dialog.cancel.click()  # nothing of the demo bill stays in the ledger
            QTimer.singleShot(100, close_it)
        def close_it():
            if dialog.importing:
                QTimer.singleShot(100, close_it)
                return
            dialog.close()
            QTimer.singleShot(50, shoot)
        import_it()
        return
    if key == "settings-away":  # the notification channels, a test just sent
        page = win.navigate("settings")
        section = page.notify
        def show_section():
            section.table.selectRow(0)
            section.result.setText("#1 phone: Delivered to https://ntfy.sh/gpu-7fk2q9x4.")
            page.findChild(QScrollArea).ensureWidgetVisible(section, 0, 0)
        QTimer.singleShot(300, show_section)
        def grab_section():
            capture(key, f"{width}x{height}+50+40")
            QTimer.singleShot(50, shoot)
        QTimer.singleShot(900, grab_section)
        return
    if key == "release-countdown":  # the countdown banner above the release page
        ctx.autorelease.ladder.evaluate("vast-4090", [idle], policy, time.time() - 133)
        win.navigate("release").open_host("vast-4090")
    elif key.startswith("monitor-"):  # monitor-ALIAS: the monitor page showing one host
        win.navigate("monitor").open_host(key.split("-", 1)[1])
    else:
        page = win.navigate(key)
    if key == "keys":
        page.view.selectRow(0)
        page.status.setText(page.tr(  # the app's own words, in its language
            "Public key of {platform} copied: paste it into the platform's SSH keys page."
        ).format(platform=page.selected().platform))
    if key == "runs" and page.shards_model.rowCount() > 6:
        page.shards_table.selectRow(6)  # the failed shard: its exit code, host and stderr
    def grab():
        capture(key, f"{width}x{height}+50+40")
        QTimer.singleShot(50, shoot)
    QTimer.singleShot(400, grab)

QTimer.singleShot(800, shoot)
app.exec()
"""

# The first-rental wizard, page by page (wizard-1-task.png ...), with sample answers filled in.
# The self-check page shows sample results judged by the real rules from a CPU-torch test host.
WIZARD_DRIVER = r"""
import subprocess, sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
from gpu_companion.services import build_services
from gpu_companion.core.common.paths import AppPaths
from gpu_companion.core.selfcheck.rules import Findings, judge
from gpu_companion.ui.wizard import FirstRentalWizard

out = sys.argv[1]
app = QApplication([])
app.setStyle("Fusion")
import os
from gpu_companion.ui.common.i18n import install_translators
install_translators(app, os.environ.get("SCREENSHOT_LANG", "en"))
ctx = build_services(AppPaths.default())
wiz = FirstRentalWizard(ctx)
wiz.resize(1000, 700)
wiz.move(50, 40)
wiz.show()
t = wiz.task_page
t.task.setCurrentIndex(t.task.findData("qlora-4bit"))
t.model.setCurrentIndex(t.model.findData("qwen2.5-7b"))
t.context.setValue(2048)
t.checkpointing.setChecked(False)  # so the estimate page shows its checkpointing tip
names = ["task", "estimate", "gpu", "billing", "instance", "connection", "first-connection",
         "selfcheck", "budget"]
SAMPLE = [
    {"step": "python", "version": "3.11.7", "executable": "/usr/bin/python3", "pip_rc": 0,
     "pip": "pip 24.0 from /usr/lib/python3/dist-packages/pip (python 3.11)"},
    {"step": "nvidia_smi",
     "table": {"rc": 0, "out": "Driver Version: 550.54.15  CUDA Version: 12.4"},
     "query": {"rc": 0, "out": "0, GPU-1, NVIDIA H100 80GB HBM3, 3, 81559, 550.54.15"},
     "apps": {"rc": 0, "out": ""}},
    {"step": "torch", "imported": True, "version": "2.13.0+cpu", "cuda": None, "available": False,
     "device_count": 0, "devices": [], "error": "", "warnings": []},
    {"step": "matmul", "skipped": "no CUDA device"},
    {"step": "bf16", "skipped": "no CUDA device"},
    {"step": "disk", "path": "/workspace", "free_bytes": 412e9, "total_bytes": 500e9,
     "read_mb_s": 1830.0, "write_mb_s": 1210.0, "size_mb": 256},
]

def prepare(i):
    if names[i] == "gpu":
        wiz.gpu_page.select("h100-sxm")
    elif names[i] == "billing":
        wiz.billing_page.fields["spot"].setText("1.20")
    elif names[i] == "instance":
        wiz.create_page.platform.setEditText("vast.ai")
        for box in wiz.create_page.checks.values():
            box.setChecked(True)
    elif names[i] == "connection":
        wiz.connection_page.paste.setText("ssh -p 41234 root@203.0.113.7 -L 8888:localhost:8888")
    elif names[i] == "selfcheck":
        findings = Findings(1)
        for record in SAMPLE:
            for step in judge(record, findings):
                wiz.selfcheck_page.view.add_step(step)
        wiz.selfcheck_page.view.status.setText(wiz.selfcheck_page.view.summary())
        zh = os.environ.get("SCREENSHOT_LANG") == "zh_CN"
        wiz.selfcheck_page.notice.setText(
            "示例结果：来自装有 CPU 版 PyTorch 的测试主机。" if zh
            else "Sample results from a test host with the CPU build of PyTorch.")

def shoot(i=0):
    prepare(i)
    def grab():
        path = f"{out}/wizard-{i + 1}-{names[i]}.png"
        subprocess.run(["import", "-window", "root", "-crop", "1000x700+50+40", path], check=True)
        print(path)
        if i + 1 == len(names):
            wiz.close(); ctx.close(); app.quit(); return
        wiz.next()
        QTimer.singleShot(300, lambda: shoot(i + 1))
    QTimer.singleShot(400, grab)

QTimer.singleShot(800, shoot)
app.exec()
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    parser.add_argument("--wizard", action="store_true", help="the first-rental wizard's pages")
    parser.add_argument(
        "--pages", default="all", help="comma-separated page keys, `welcome`, or all (default)"
    )
    parser.add_argument("--size", default="1180x720", help="the window's WIDTHxHEIGHT")
    parser.add_argument("--lang", default="en", help="the app's language (en, zh_CN)")
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
                "SCREENSHOT_LANG": args.lang,
            }
            env.pop("WAYLAND_DISPLAY", None)
            done = subprocess.run(
                [sys.executable, "-c", WIZARD_DRIVER, str(args.out.resolve())]
                if args.wizard
                else [
                    sys.executable, "-c", DRIVER, str(args.out.resolve()), args.pages, str(REPO),
                    args.size,
                ],  # fmt: skip
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
