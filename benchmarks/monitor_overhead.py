#!/usr/bin/env python3
"""What the live monitor costs, against the naive loop, on the harness sshd and nvidia-smi stand-in.

    python benchmarks/monitor_overhead.py            # about 1.5 minutes
    python benchmarks/monitor_overhead.py --full     # the issue's 50 real hosts for 60 s

1. Local CPU seconds and remote process starts per 1,000 samples (one GPU, so a sample is one
   reading): (a) the collector, one `nvidia-smi -lms` per host read line by line over one
   paramiko connection; (b) `ssh host nvidia-smi --query-gpu=...` run once per sample.
   CPU = this process (all threads) + its children (the ssh clients), user + system.
2. A fleet of 50 hosts x 8 GPUs at 1 Hz with the window open (offscreen Qt, fleet view then one
   host's plots): the longest GUI event-loop stall (a 20 ms timer's lateness), app CPU, memory.
   `--real-hosts` of them stream over real SSH from 8-GPU stand-ins; the rest are fed synthetic
   ticks through Monitor.ingest (same history, hints and signals; no SSH parsing).
3. The redraw time (update + paint) of a 24 h x 8 GPU plot: the page's series (minute means
   plus the last hour raw) against plotting 24 h of 1 Hz samples as they are.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "desktop")]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tests.harness.sshd import SshServer  # noqa: E402
from tests.harness.standin import NvidiaSmiStandIn  # noqa: E402

from gpu_companion.core.hosts.registry import Host  # noqa: E402
from gpu_companion.core.monitor.collector import (  # noqa: E402
    CollectorConfig,
    HostCollector,
    SamplesEvent,
    TimedSample,
)
from gpu_companion.core.monitor.nvsmi import DEFAULT_FIELDS, GpuSample, build_query_gpu_argv  # noqa: E402


def cpu_seconds() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def rss_mb() -> tuple[float, float]:
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def memory_key():  # type: ignore[no-untyped-def]
    import paramiko
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
        serialization.NoEncryption()).decode()  # fmt: skip
    return paramiko.Ed25519Key.from_private_key(io.StringIO(pem))


class Harness:
    def __init__(self, root: Path) -> None:
        self.standin = NvidiaSmiStandIn(root / "standin")
        self.sshd = SshServer(root / "sshd", path_prefix=[self.standin.bin_dir],
                              env=self.standin.env).start()  # fmt: skip
        self.key = memory_key()
        self.sshd.authorize(f"{self.key.get_name()} {self.key.get_base64()} bench")
        self.known_hosts = root / "known_hosts"
        self.known_hosts.write_text(self.sshd.known_hosts_line())
        self.key_file = root / "id_ed25519"  # for the ssh command line of the naive loop
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.key_file)],
                       check=True)  # fmt: skip
        self.sshd.authorize(Path(f"{self.key_file}.pub").read_text())

    def connect(self, host: Host):  # type: ignore[no-untyped-def]
        import paramiko

        client = paramiko.SSHClient()
        client.load_host_keys(str(self.known_hosts))
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        client.connect("127.0.0.1", port=self.sshd.port, username=self.sshd.user, pkey=self.key,
                       allow_agent=False, look_for_keys=False, timeout=30)  # fmt: skip
        return client

    def close(self) -> None:
        self.sshd.stop()


# --- 1. per-sample cost ---------------------------------------------------------------------


def collector_cost(h: Harness, samples: int) -> tuple[float, float, int]:
    """(CPU s per 1000 samples, starts per 1000 samples while streaming, starts to set up)."""
    h.standin.configure(gpu_count=1)
    starts0 = h.standin.starts()
    got = threading.Event()
    count = [0, 0.0, 0]

    def listener(event: object) -> None:
        if isinstance(event, SamplesEvent):
            count[0] += len(event.samples)
            if count[0] == 50:  # warmed up: connected, fields detected, streaming
                count[1], count[2] = cpu_seconds(), h.standin.starts()
            if count[0] >= 50 + samples:
                got.set()

    config = CollectorConfig(interval_ms=10, poll_every_s=0)
    collector = HostCollector(Host("bench", "127.0.0.1"), h.connect, listener, config).start()
    got.wait(300)
    cpu = cpu_seconds() - count[1]
    streaming_starts = h.standin.starts() - count[2]
    collector.stop()
    return cpu / samples * 1000, streaming_starts / samples * 1000, count[2] - starts0


def naive_cost(h: Harness, samples: int) -> tuple[float, float]:
    h.standin.configure(gpu_count=1)
    remote = " ".join(build_query_gpu_argv(DEFAULT_FIELDS, None))
    argv = ["ssh", "-F", "/dev/null", "-i", str(h.key_file), "-o", "IdentitiesOnly=yes",
            "-o", "BatchMode=yes", "-o", f"UserKnownHostsFile={h.known_hosts}",
            "-o", "StrictHostKeyChecking=yes", "-p", str(h.sshd.port),
            f"{h.sshd.user}@127.0.0.1", remote]  # fmt: skip
    starts0, cpu0 = h.standin.starts(), cpu_seconds()
    for _ in range(samples):
        out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
        assert out.count("\n") == 1, out
    cpu = cpu_seconds() - cpu0
    return cpu / samples * 1000, (h.standin.starts() - starts0) / samples * 1000


# --- 2. the fleet with the window open -------------------------------------------------------


def synthetic_tick(alias: str, gpus: int, tick: int, now: float) -> SamplesEvent:
    samples = tuple(
        TimedSample(now, GpuSample(index=g, name="NVIDIA H100 80GB HBM3", uuid=f"GPU-{alias}-{g}",
                                   utilization_gpu=(tick * 7 + g * 13) % 100,
                                   memory_used_mib=40000 + g, memory_total_mib=81559,
                                   temperature_c=60, power_draw_w=400.0, power_limit_w=700.0))
        for g in range(gpus))  # fmt: skip
    return SamplesEvent(alias, samples)


def fleet_run(h: Harness, hosts: int, real: int, gpus: int, seconds: float) -> dict[str, float]:
    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtWidgets import QApplication

    from gpu_companion.core.common.paths import AppPaths
    from gpu_companion.core.monitor.live import Monitor
    from gpu_companion.services import build_services
    from gpu_companion.ui.shell.build import build_window

    app = QApplication.instance() or QApplication([])
    h.standin.configure(gpu_count=gpus)
    ctx = build_services(AppPaths.default())
    real_aliases = [f"real{i:02d}" for i in range(real)]
    fake_aliases = [f"synth{i:02d}" for i in range(hosts - real)]
    for alias in real_aliases + fake_aliases:
        ctx.registry.save_host(Host(alias, "127.0.0.1", h.sshd.port, h.sshd.user))
    config = CollectorConfig(interval_ms=1000, poll_every_s=10)
    monitor = Monitor(h.connect, store=ctx.store, notifier=ctx.notifier, config=config)
    ctx._monitor = monitor  # noqa: SLF001 - the benchmark's client factory, as in the tests
    real_set = set(real_aliases)
    original_watch = monitor.watch
    monitor.watch = lambda host, billed=None: (  # type: ignore[method-assign]
        original_watch(host, billed) if host.alias in real_set or host.is_local else None
    )
    window = build_window(ctx)
    window.resize(1280, 800)
    window.show()
    page = window.navigate("monitor")
    stop = threading.Event()

    def feed() -> None:
        tick = 0
        while not stop.wait(max(0.0, 1.0 - (time.time() % 1.0))):
            now = time.time()
            for alias in fake_aliases:
                monitor.ingest(synthetic_tick(alias, gpus, tick, now))
            tick += 1

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until every real host streams
        app.processEvents()
        if all(len(monitor.history(a).latest) == gpus for a in real_aliases):
            break
        time.sleep(0.05)
    gaps: list[float] = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]

    switch_at: list[float] = []
    ends: list[float] = []

    def beat() -> None:
        now = clock.elapsed()
        gaps.append(now - last[0] - 20)
        ends.append(now)
        if gaps[-1] > 100:
            print(f"stall {gaps[-1]:.0f} ms ending at {now / 1000:.1f} s", file=sys.stderr)
        last[0] = now

    main_id = threading.get_ident()
    stacks: list[str] = []

    def watchdog() -> None:  # where the GUI thread is while a beat is 200 ms late
        import traceback

        while not stop.wait(0.03):
            if clock.elapsed() - last[0] > 80:
                frame = sys._current_frames().get(main_id)
                if frame is not None:
                    stacks.append("".join(traceback.format_stack(frame, limit=6)))

    threading.Thread(target=watchdog, daemon=True).start()
    timer = QTimer()
    timer.setInterval(20)
    timer.timeout.connect(beat)
    timer.start()
    cpu0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
    ticks0 = sum(monitor.history(a).version for a in real_aliases + fake_aliases)
    half = seconds / 2

    def open_host() -> None:
        switch_at.append(clock.elapsed())
        page.open_host(real_aliases[0])

    QTimer.singleShot(int(half * 1000), open_host)
    QTimer.singleShot(int(seconds * 1000), app.quit)
    app.exec()
    wall = time.monotonic() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    samples = sum(monitor.history(a).version for a in real_aliases + fake_aliases) - ticks0
    timer.stop()
    stop.set()
    feeder.join(3)
    rss, peak = rss_mb()
    if stacks and os.environ.get("BENCH_STACKS"):
        from collections import Counter

        for stack, n in Counter(stacks).most_common(3):
            print(f"--- GUI thread seen {n} times in a stall at:\n{stack}", file=sys.stderr)
    page.stop()
    monitor.stop()
    window.close()
    ctx.close()
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    # The click that opens a host's plots for the first time is counted apart from streaming.
    in_click = [bool(switch_at) and 0 <= e - switch_at[0] < 1000 for e in ends]
    click = [g for g, c in zip(gaps, in_click, strict=True) if c]
    streaming = [g for g, c in zip(gaps, in_click, strict=True) if not c]
    return {"wall": wall, "samples": samples, "max_stall": max(streaming),
            "click_stall": max(click or [0.0]),
            "stalls": sum(g > 100 for g in streaming), "cpu_pct": 100 * cpu / wall, "rss": rss,
            "peak": peak}  # fmt: skip


# --- 3. the 24 h redraw ------------------------------------------------------------------------


def redraw_times(gpus: int = 8) -> tuple[float, ...]:
    import numpy as np
    import pyqtgraph as pg
    from PySide6.QtWidgets import QApplication

    from gpu_companion.core.monitor.history import HostHistory, MinuteRow
    from gpu_companion.ui.monitor.plots import GpuPlots

    app = QApplication.instance() or QApplication([])
    now = time.time()
    history = HostHistory("bench")
    start_min = int((now - 86400) // 60)
    rows = [MinuteRow("bench", g, start_min + m, 60,
                      (50 + 40 * np.sin(m / 30 + g), 40000, 81559, 60, 400, 700), 95)
            for m in range(1380) for g in range(gpus)]  # fmt: skip
    history.add_minutes(rows)
    for i in range(3600):  # the last hour at 1 Hz, raw
        t = now - 3600 + i
        for g in range(gpus):
            history.add(t, GpuSample(index=g, utilization_gpu=(i + g) % 100, memory_used_mib=40000,
                                     memory_total_mib=81559, temperature_c=60, power_draw_w=400.0,
                                     power_limit_w=700.0))  # fmt: skip
    plots = GpuPlots()
    plots.resize(1100, 650)
    plots.show()
    plots.set_source(history, 86400)
    app.processEvents()
    ours, ours_cpu = [], []
    for _ in range(15):
        t0, c0 = time.perf_counter(), time.thread_time()
        plots.redraw(now)
        plots.grab()  # paint all four plots
        ours.append((time.perf_counter() - t0) * 1000)
        ours_cpu.append((time.thread_time() - c0) * 1000)
    # Live: one new sample per GPU before each redraw (values moving), as the page's timer sees it.
    rng = np.random.default_rng(7)
    live, live_cpu = [], []
    for k in range(30):
        t = now + 1 + k
        for g in range(gpus):
            sample = GpuSample(
                index=g,
                utilization_gpu=int(rng.integers(0, 101)),
                memory_used_mib=40000 + int(rng.integers(0, 4000)),
                memory_total_mib=81559,
                temperature_c=60 + int(rng.integers(0, 25)),
                power_draw_w=300 + 400 * float(rng.random()),
                power_limit_w=700.0,
            )
            history.add(t, sample)
        t0, c0 = time.perf_counter(), time.thread_time()
        plots.redraw(t)
        plots.grab()
        live.append((time.perf_counter() - t0) * 1000)
        live_cpu.append((time.thread_time() - c0) * 1000)
    # The naive alternative: 24 h of 1 Hz samples per GPU, handed to pyqtgraph as they are.
    naive_widget = pg.PlotWidget()
    naive_widget.resize(550, 325)
    naive_widget.show()
    xs = np.arange(now - 86400, now, 1.0)
    curves = [naive_widget.plot(pen=pg.mkPen(g)) for g in range(gpus)]
    naive, naive_cpu = [], []
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.thread_time()
        for g, c in enumerate(curves):
            c.setData(xs, (np.sin(xs / 300 + g) + 1) * 50)
        naive_widget.grab()
        naive.append((time.perf_counter() - t0) * 1000 * 4)  # four panels, like the page
        naive_cpu.append((time.thread_time() - c0) * 1000 * 4)
    plots.close()
    naive_widget.close()
    series = (ours, naive, ours_cpu, naive_cpu, live, live_cpu)
    return tuple(statistics.median(s) for s in series)


def print_redraw(runs: list[tuple[float, ...]]) -> None:
    print("\n| 24 h x 8 GPUs, update + paint | page (minute means + last hour raw) | "
          "raw 1 Hz points | ratio |")  # fmt: skip
    print("| --- | ---: | ---: | ---: |")
    for ours, naive, ours_cpu, naive_cpu, live, live_cpu in runs:
        print(f"| median wall ms | {ours:.1f} | {naive:.0f} | {naive / ours:.0f}x faster |")
        print(f"| median GUI-thread CPU ms | {ours_cpu:.1f} | {naive_cpu:.0f} | "
              f"{naive_cpu / ours_cpu:.0f}x less |")  # fmt: skip
        print(f"| live (a new sample per GPU each redraw): wall / CPU ms | {live:.1f} / "
              f"{live_cpu:.1f} | - | - |")  # fmt: skip
    if len(runs) > 1:
        med = [statistics.median(r[i] for r in runs) for i in range(6)]
        print(f"\nmedian of {len(runs)} runs: wall {med[0]:.1f} ms, CPU {med[2]:.1f} ms; "
              f"live wall {med[4]:.1f} ms, CPU {med[5]:.1f} ms (target under 16 ms)")  # fmt: skip
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


# --- main ----------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000, help="collector samples (1000)")
    parser.add_argument("--naive-samples", type=int, default=60, help="naive ssh runs (60)")
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--real-hosts", type=int, default=10)
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--fleet-seconds", type=float, default=20)
    parser.add_argument("--full", action="store_true", help="50 real hosts for 60 s")
    parser.add_argument("--only", choices=("redraw",), help="run one part only (redraw: part 3)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of part 3 (medians of each)")
    args = parser.parse_args()
    if args.only == "redraw":
        print_redraw([redraw_times(args.gpus) for _ in range(args.repeat)])
        return 0
    if args.full:
        args.real_hosts, args.fleet_seconds = args.hosts, 60
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["GPU_COMPANION_HOME"] = str(Path(tmp) / "app")
        h = Harness(Path(tmp))
        try:
            c_cpu, c_starts, setup = collector_cost(h, args.samples)
            n_cpu, n_starts = naive_cost(h, args.naive_samples)
            fleet = fleet_run(h, args.hosts, args.real_hosts, args.gpus, args.fleet_seconds)
        finally:
            h.close()
    runs = [redraw_times(args.gpus) for _ in range(args.repeat)]
    load = os.getloadavg()[0]
    print("\n## Monitor overhead (harness sshd + nvidia-smi stand-in, this machine)\n")
    print("| per 1,000 samples (1 GPU) | collector | naive `ssh host nvidia-smi` | ratio |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| local CPU seconds | {c_cpu:.3f} | {n_cpu:.2f} | {n_cpu / c_cpu:.0f}x less |")
    print(f"| remote process starts | {c_starts:.0f} (+{setup} per connection) | "
          f"{n_starts:.0f} | - |")  # fmt: skip
    print(f"\ncollector: {args.samples} samples at -lms 10; naive: {args.naive_samples} runs "
          "scaled to 1,000.\n")  # fmt: skip
    print(f"| fleet, window open | {args.hosts} hosts x {args.gpus} GPUs at 1 Hz |")
    print("| --- | ---: |")
    print(f"| real SSH streams / synthetic hosts | {args.real_hosts} / "
          f"{args.hosts - args.real_hosts} |")  # fmt: skip
    print(f"| run | {fleet['wall']:.0f} s, {fleet['samples']:.0f} GPU samples |")
    print(f"| longest GUI stall while streaming | {fleet['max_stall']:.0f} ms "
          f"({fleet['stalls']:.0f} over 100 ms) |")  # fmt: skip
    print(f"| the click opening a host's 8-GPU plots | {fleet['click_stall']:.0f} ms |")
    print(f"| app CPU (all threads) | {fleet['cpu_pct']:.0f} % of one core |")
    print(f"| memory (RSS now / peak) | {fleet['rss']:.0f} / {fleet['peak']:.0f} MB |")
    print_redraw(runs)
    print(f"\nload average at the end: {load:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
