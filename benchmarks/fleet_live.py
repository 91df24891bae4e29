#!/usr/bin/env python3
"""The live fleet with the window open: 100 hosts x 8 GPUs at 1 Hz, some of them over real SSH.

    python benchmarks/fleet_live.py            # 100 hosts, 20 over SSH, about 2 minutes
    python benchmarks/fleet_live.py --quick    # 100 hosts, 20 over SSH, under a minute

The app as it runs (offscreen): Services built as the app builds them, every host with a running
rental (so watched from launch, billed, the idle rule and the auto-release detector on), the
always-on rules started, the window open on the Monitor page. `--real` hosts stream from the
test harness's real sshd on 127.0.0.1 through the app's own collector (one paramiko connection
and one `nvidia-smi -lms` each; only the GPU is stood in for: tests/harness/bin/nvidia-smi); the
rest are fed synthetic ticks through `Monitor.ingest` (the collectors' path past the SSH line
parsing) by one thread at 1 Hz, each host at its own phase of the second (as collectors started
one after the other tick; benchmarks/monitor_overhead.py feeds them all at once). The opened
hosts have 24 h of GPU minutes in the store and the last hour of raw samples. Measures, each
against its floor in the same run:

- the longest GUI stall while the fleet streams (a 10 ms QTimer's lateness, as the soak's
  `beat`), in the fleet view and with one host's plots open, against the same fleet streaming
  with an empty page shown instead of the Monitor (the floor: what the page adds); the tray's
  own periodic refresh is shown apart, and nothing streaming for reference (target <= 50 ms)
- the click that opens one host's 8-GPU plots with their history (each opened host once: the
  call, then the events it posts with the paints they bring, as the event loop would run them,
  until a round paints nothing more; a forced repaint only if none painted the whole plots),
  against repainting the same plots (<= 80 ms). Each click's parts are printed under the table.
- SQL statements run on the GUI thread while streaming (target 0), and on the other threads
  per host tick (the monitor's and the rules' own reads)

`run()` returns the figures and `rows()` the table rows (benchmarks/year_of_use.py's format);
it makes a QApplication, so call it in a fresh process: `--json` prints the figures as one line,
`FLEET {...}` (`FleetFigures(**json.loads(line[6:]))` then `rows()` gives the table).
To look inside: BENCH_PROFILE_CLICK=1 profiles the clicks (BENCH_PROFILE_SORT=tottime to sort
by own time), BENCH_SQL=1 shows where SQL ran on the GUI thread, BENCH_STACKS=1 the GUI
thread's stack in each stall.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "benchmarks"), str(REPO / "desktop")]
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from monitor_overhead import Harness, synthetic_tick  # noqa: E402

TICK_TARGET_MS, OPEN_TARGET_MS = 50.0, 80.0


@dataclass
class FleetFigures:
    hosts: int
    real: int
    gpus: int
    seconds: float
    idle_stall: float = 0.0  # ms: the beat's worst lateness, window open, nothing streaming
    # ms: the call, its events, a forced repaint; and the plots' paints in them
    open_parts: list[tuple[int, ...]] = field(default_factory=list)
    floor_stall: float = 0.0  # ms: ... the fleet streaming, an empty page shown (no Monitor)
    first_show: float = 0.0  # ms: the Monitor page's first show while the fleet streams
    fleet_stall: float = 0.0  # ms: ... while the fleet streams, fleet view
    host_stall: float = 0.0  # ms: ... while the fleet streams, one host's plots open
    tray_stall: float = 0.0  # ms: ... the beats right after the tray's own refresh (ui/shell)
    p99: float = 0.0  # ms: the 99th percentile of the beats' lateness while streaming
    over50: int = 0  # beats over 50 ms late while streaming (the tray's apart)
    opens: list[float] = field(default_factory=list)  # ms per click opening a host
    open_cpu: list[float] = field(default_factory=list)  # ... of the GUI thread's CPU time
    open_tray: list[bool] = field(default_factory=list)  # ... the tray refreshed inside it
    gui_busy: float = 0.0  # % of the GUI thread's time on CPU while streaming (fleet view)
    repaint: list[float] = field(default_factory=list)  # ms: repainting the opened plots
    samples: int = 0  # GPU samples taken in while measuring
    gui_sql: int = 0  # statements on the GUI thread while streaming (the tray's apart)
    tray_sql: int = 0  # statements of the tray's refreshes (ui/shell) meanwhile
    other_sql: int = 0  # statements on the other threads while streaming
    host_ticks: int = 0  # host ticks (one SamplesEvent each) while streaming
    stall_at: list[str] = field(default_factory=list)  # where the GUI thread was in a stall
    tray_ms: float = 0.0  # the tray's periodic refresh (its menu of every rented host), once
    load: float = 0.0


def _minutes(store: Any, alias: str, gpus: int, now: float) -> None:
    """24 h of GPU minutes for `alias`, as the monitor saves them (loaded when it streams)."""
    first = int(now // 60) - 1440
    rows = [
        (alias, g, first + m, 60, 40.0 + (m + g) % 50, 40000.0, 81559.0, 60.0, 400.0, 700.0, 95.0)
        for m in range(1440 - 60)  # the last hour comes as raw samples
        for g in range(gpus)
    ]
    with store.transaction() as db:
        db.conn.executemany(
            "INSERT OR REPLACE INTO gpu_minutes (alias, gpu, minute, samples, util, mem_used, "
            "mem_total, temp, power, power_limit, util_max) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )


def _backfill(monitor: Any, alias: str, gpus: int, seconds: int, now: float) -> None:
    """The last `seconds` of 1 Hz samples, through the monitor's own path."""
    for i in range(seconds):
        monitor.ingest(synthetic_tick(alias, gpus, i, now - seconds + i))


def run(
    hosts: int = 100,
    real: int = 20,
    gpus: int = 8,
    seconds: float = 20.0,
    opens: int = 3,
    raw_s: int = 3600,
    floor_s: float = 5.0,
) -> FleetFigures:
    """One fleet, one window, in this process (a fresh data dir and sshd); see the docstring."""
    from PySide6.QtCore import QElapsedTimer, QTimer
    from PySide6.QtWidgets import QApplication, QLabel, QWidget

    fig = FleetFigures(hosts, real, gpus, seconds)
    home = os.environ.get("GPU_COMPANION_HOME")
    with tempfile.TemporaryDirectory(prefix="fleet-live-", ignore_cleanup_errors=True) as tmp:
        os.environ["GPU_COMPANION_HOME"] = str(Path(tmp) / "app")
        h = Harness(Path(tmp))
        try:
            _run(
                fig,
                h,
                opens,
                raw_s,
                floor_s,
                (QApplication, QTimer, QElapsedTimer, QLabel, QWidget),
            )
        finally:
            h.close()
            if home is None:
                os.environ.pop("GPU_COMPANION_HOME", None)
            else:
                os.environ["GPU_COMPANION_HOME"] = home
    fig.load = os.getloadavg()[0]
    return fig


def _run(fig: FleetFigures, h: Harness, opens: int, raw_s: int, floor_s: float,
         qt: tuple[Any, ...]) -> None:  # fmt: skip
    from PySide6.QtCore import QEvent, QObject

    from gpu_companion.core.common.paths import AppPaths
    from gpu_companion.core.hosts.registry import Host, Platform
    from gpu_companion.core.monitor.collector import SamplesEvent
    from gpu_companion.services import build_services
    from gpu_companion.ui.shell.build import build_window

    QApplication, QTimer, QElapsedTimer, QLabel, QWidget = qt  # noqa: N806
    app = QApplication.instance() or QApplication([])
    h.standin.configure(gpu_count=fig.gpus)
    ctx = build_services(AppPaths.default())
    platform = ctx.registry.save_platform(Platform("bench cloud"))
    real_aliases = [f"real{i:03d}" for i in range(fig.real)]
    fake_aliases = [f"synth{i:03d}" for i in range(fig.hosts - fig.real)]
    for i, alias in enumerate(real_aliases + fake_aliases):
        real = alias in real_aliases
        host = ctx.registry.save_host(Host(
            alias, "127.0.0.1" if real else f"10.9.{i // 250}.{i % 250 + 1}",
            h.sshd.port if real else 22, h.sshd.user if real else "root", platform.id,
            gpu_model="H100 SXM", gpu_count=fig.gpus))  # fmt: skip
        ctx.ledger.start_rental(platform.id, "2.49", host_id=host.id, gpu_count=fig.gpus)
    now = time.time()
    opened = real_aliases[:opens]
    for alias in opened:
        _minutes(ctx.store, alias, fig.gpus, now)

    monitor = ctx.monitor()  # the app's own, with its glue (billing, idle minutes, alerts)
    monitor.connect = h.connect  # the harness key, in memory (the app's agent is not started)
    real_set = set(real_aliases)
    watch = monitor.watch
    monitor.watch = lambda host, billed=None: (  # type: ignore[method-assign]
        watch(host, billed) if host.alias in real_set else None
    )  # the synthetic hosts' addresses are made up: the feeder below is their stream
    for alias in opened:
        _backfill(monitor, alias, fig.gpus, raw_s, now)

    window = build_window(ctx)
    window.resize(1280, 800)
    window.show()
    deadline = time.monotonic() + 60
    while not window.first_paint_done and time.monotonic() < deadline:
        app.processEvents()  # the pages the window builds after its first paint, one per turn
        time.sleep(0.005)

    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]
    phase = ["idle"]
    worst: Counter[str] = Counter()
    main_id = threading.get_ident()
    stop = threading.Event()
    stacks: list[str] = []

    lates: list[float] = []
    tray_ran = [False]
    in_tray = [False]

    def beat() -> None:  # a 10 ms timer's lateness: how long the GUI thread was held
        t = clock.elapsed()
        late = t - last[0] - 10
        last[0] = t
        where = phase[0]
        if tray_ran[0] and where in ("floor", "fleet", "host"):
            tray_ran[0], where = False, "tray"  # the tray's refresh ran in this beat's gap
        worst[where] = max(worst[where], late)
        if where in ("fleet", "host"):
            lates.append(late)

    def watchdog() -> None:  # where the GUI thread is while a beat is over 40 ms late
        import traceback

        while not stop.wait(0.02):
            if phase[0] in ("fleet", "host") and clock.elapsed() - last[0] > 50:
                frame = sys._current_frames().get(main_id)  # noqa: SLF001
                if frame is not None:
                    stacks.append("".join(traceback.format_stack(frame)[-7:]))

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(beat)
    timer.start()

    def spin(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.002)

    tray = getattr(window, "tray", None)
    if tray is not None:  # its periodic refresh is not the monitor's: its stalls counted apart
        refresh = tray.refresh

        def tray_refresh() -> None:
            in_tray[0] = True
            try:
                refresh()
            finally:
                in_tray[0] = False
                tray_ran[0] = True

        tray.refresh = tray_refresh

    spin(floor_s)  # the window open, nothing streaming yet
    phase[0] = "setup"
    ctx.start_watching()  # the rented hosts stream from launch (the real ones connect)
    ctx.start_always_on()  # alerts, auto-release (fed by the monitor), providers
    empty = QWidget()  # the floor's page: the fleet streams, nothing of the Monitor is shown
    QLabel("an empty page", empty)
    window.stack.addWidget(empty)
    window.stack.setCurrentWidget(empty)

    def feed() -> None:  # each synthetic host at its own phase of the second, as collectors
        tick, n = 0, max(len(fake_aliases), 1)  # started one after the other tick
        start = time.monotonic()
        while not stop.is_set():
            for k, alias in enumerate(fake_aliases):
                if stop.wait(max(0.0, start + tick + k / n - time.monotonic())):
                    return
                monitor.ingest(synthetic_tick(alias, fig.gpus, tick, time.time()))
            tick += 1

    feeder = threading.Thread(target=feed, name="fleet-feed", daemon=True)
    feeder.start()
    threading.Thread(target=watchdog, name="fleet-watchdog", daemon=True).start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # until every real host streams
        spin(0.2)
        if all(len(monitor.history(a).latest) == fig.gpus for a in real_aliases):
            break
    else:
        raise RuntimeError("the real hosts did not all stream within 2 minutes")
    spin(3.0)  # every host has ticked a few times: connections, minute loads done

    counts: Counter[str] = Counter()
    gui = threading.current_thread().name

    gui_sql: Counter[str] = Counter()

    def traced(sql: str) -> None:
        if phase[0] not in ("fleet", "host", "click"):
            return
        on_gui = threading.current_thread().name == gui
        counts[("tray" if in_tray[0] else "gui") if on_gui else "other"] += 1
        if on_gui and not in_tray[0] and os.environ.get("BENCH_SQL"):
            import traceback

            where = "".join(traceback.format_stack(limit=9)[-9:-1])
            gui_sql[f"{sql[:120]}\n{where}"] += 1

    def on_event(event: object) -> None:
        if isinstance(event, SamplesEvent) and phase[0] in ("fleet", "host"):
            counts["ticks"] += 1
            counts["samples"] += len(event.samples)

    unsubscribe = monitor.subscribe(on_event)
    with ctx.store._lock:  # noqa: SLF001 - every thread's connection, opened by now
        conns = list(ctx.store._open)  # noqa: SLF001
    for conn in conns:
        conn.set_trace_callback(traced)

    profile = None
    if os.environ.get("BENCH_PROFILE_CLICK"):
        import cProfile

        profile = cProfile.Profile()

    class Paints(QObject):
        """Counts the paints of the widget it filters, and those of the whole of it."""

        count = full = 0

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt's
            if event.type() == QEvent.Type.Paint:
                self.count += 1
                self.full += event.rect().contains(watched.rect())  # type: ignore[attr-defined]
            return False

    paints = Paints()

    def timed_open(alias: str) -> float:
        tray_ran[0] = False
        paints.count = paints.full = 0
        t, cpu = time.perf_counter(), time.thread_time()
        if profile is not None:
            profile.enable()
        page.open_host(alias)
        called = time.perf_counter()
        app.processEvents()  # the events the click posted: the lay-out and the paint they ask
        for _ in range(3):  # a paint may ask for another (a range moved): until none does
            seen = paints.count
            app.processEvents()
            if paints.count == seen:
                break
        events = time.perf_counter()
        if not paints.full:  # the plots are on screen only once painted whole
            window.repaint()
        if profile is not None:
            profile.disable()
        end = time.perf_counter()
        fig.open_parts.append(
            tuple(round((b - a) * 1000) for a, b in ((t, called), (called, events), (events, end)))
            + (paints.count,)
        )
        fig.open_cpu.append((time.thread_time() - cpu) * 1000)
        fig.open_tray.append(tray_ran[0])
        return (time.perf_counter() - t) * 1000

    phase[0] = "floor"
    spin(floor_s)
    phase[0] = "show"
    t = time.perf_counter()
    page = window.navigate("monitor")
    app.processEvents()
    window.repaint()
    fig.first_show = (time.perf_counter() - t) * 1000
    phase[0] = "setup"
    spin(1.0)  # the plot panels are built, one per idle turn
    assert page.plots is not None
    page.plots.view.viewport().installEventFilter(paints)

    phase[0] = "fleet"
    t, cpu = time.perf_counter(), time.thread_time()
    spin(fig.seconds)
    fig.gui_busy = 100 * (time.thread_time() - cpu) / (time.perf_counter() - t)
    for alias in opened:
        phase[0] = "click"
        fig.opens.append(timed_open(alias))
        last[0] = clock.elapsed()
        phase[0] = "host"
        spin(max(2.0, fig.seconds / max(len(opened), 1)))
        for _ in range(3):  # the floor of the click: the same plots repainted
            t = time.perf_counter()
            window.repaint()
            fig.repaint.append((time.perf_counter() - t) * 1000)
        phase[0] = "click"
        page.open_host("__fleet__")
        app.processEvents()
        last[0] = clock.elapsed()
        phase[0] = "fleet"
        spin(1.0)
    phase[0] = "done"
    if profile is not None:
        import pstats

        pstats.Stats(profile, stream=sys.stderr).sort_stats(
            os.environ.get("BENCH_PROFILE_SORT", "cumulative")
        ).print_stats(30)
    if tray is not None:  # not the monitor's, but a stall of its own: shown for reference
        took = []
        for _ in range(3):
            t = time.perf_counter()
            tray.refresh()
            took.append((time.perf_counter() - t) * 1000)
        fig.tray_ms = statistics.median(took)
    for conn in conns:
        conn.set_trace_callback(None)
    unsubscribe()
    stop.set()
    feeder.join(5)
    timer.stop()
    fig.floor_stall, fig.fleet_stall, fig.host_stall = worst["floor"], worst["fleet"], worst["host"]
    fig.idle_stall = worst["idle"]
    fig.tray_stall = worst["tray"]
    lates.sort()
    fig.p99 = lates[int(len(lates) * 0.99)] if lates else 0.0
    fig.over50 = sum(x > 50 for x in lates)
    fig.gui_sql, fig.other_sql, fig.tray_sql = counts["gui"], counts["other"], counts["tray"]
    fig.host_ticks, fig.samples = counts["ticks"], counts["samples"]
    fig.stall_at = [f"{n}x\n{s}" for s, n in Counter(stacks).most_common(8)]
    for where, n in gui_sql.most_common(5):
        print(f"--- SQL on the GUI thread, {n}x:\n{where}", file=sys.stderr)
    page.stop()
    window.quitting = True
    window.close()
    ctx.close()


def rows(fig: FleetFigures) -> list[tuple[str, str, str, str, str, bool]]:
    """(measure, ours, floor, ratio, target, holds), as benchmarks/year_of_use.py prints them."""
    stall = max(fig.fleet_stall, fig.host_stall, fig.tray_stall)  # the app's, whoever held it
    floor = max(fig.floor_stall, 0.1)
    # a click the tray's 30 s refresh fell into is the tray's stall (counted above), not the
    # click's: left out here unless every click had one
    clicks = [x for x, tray in zip(fig.opens, fig.open_tray, strict=True) if not tray]
    clicks = clicks or fig.opens
    opened = statistics.median(clicks) if clicks else float("nan")
    worst_open = max(clicks) if clicks else float("nan")
    repaint = statistics.median(fig.repaint) if fig.repaint else float("nan")
    per_tick = fig.other_sql / max(fig.host_ticks, 1)
    return [
        (f"longest GUI stall, {fig.hosts} hosts x {fig.gpus} GPUs at 1 Hz ({fig.real} over SSH)",
         f"{stall:.0f} ms", f"{fig.floor_stall:.0f} ms Monitor not shown", f"{stall / floor:.1f}x",
         f"<= {TICK_TARGET_MS:.0f} ms", stall <= TICK_TARGET_MS),
        (f"  (fleet view {fig.fleet_stall:.0f} ms, one host's plots {fig.host_stall:.0f} ms; "
         f"99th percentile {fig.p99:.0f} ms, {fig.over50} beats over 50 ms; GUI thread on CPU "
         f"{fig.gui_busy:.0f} % in the fleet view; {fig.samples:,} GPU samples; nothing "
         f"streaming {fig.idle_stall:.0f} ms)", "", "", "", "(reference)", True),
        (f"  (the Monitor page's first show while the fleet streams, pyqtgraph's import "
         f"included: {fig.first_show:.0f} ms)",
         "", "", "", "(reference)", True),
        (f"  (the tray's periodic refresh: {fig.tray_ms:.0f} ms with {fig.hosts} rented hosts in "
         f"its menu, {fig.tray_sql:,} SQL statements)", f"{fig.tray_stall:.0f} ms", "", "",
         "(reference)", True),
        (f"open one host's {fig.gpus}-GPU plots (median of {len(clicks)}, worst "
         f"{worst_open:.0f} ms)", f"{opened:.0f} ms", f"{repaint:.0f} ms repaint alone",
         f"{opened / max(repaint, 0.1):.1f}x", f"<= {OPEN_TARGET_MS:.0f} ms",
         worst_open <= OPEN_TARGET_MS),
        ("SQL statements on the GUI thread while streaming (the tray's apart)", str(fig.gui_sql),
         "0", "",
         "0", fig.gui_sql == 0),
        (f"  (SQL on other threads: {per_tick:.2f} per host tick, {fig.host_ticks:,} ticks)",
         f"{fig.other_sql:,}", "", "", "(reference)", True),
    ]  # fmt: skip


def print_table(fig: FleetFigures) -> None:
    print(f"\nthe live fleet: {fig.hosts} hosts x {fig.gpus} GPUs at 1 Hz, {fig.real} over real "
          f"SSH (harness sshd), {fig.seconds:.0f} s per phase; python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs, load average {fig.load:.1f}")  # fmt: skip
    head = ("measure", "ours", "floor / naive", "ratio", "target", "holds")
    widths = (72, 10, 26, 7, 12, 5)
    print("  ".join(f"{x:<{w}}" for x, w in zip(head, widths, strict=True)))
    for name, ours, floor, ratio, target, ok in rows(fig):
        cells = (name, ours, floor, ratio, target, "yes" if ok else "NO")
        print("  ".join(f"{c:<{w}}" for c, w in zip(cells, widths, strict=True)))
    marked = [f"{x:.0f}" + "*" * t for x, t in zip(fig.opens, fig.open_tray, strict=True)]
    print(
        f"(clicks: {', '.join(marked)}"
        f" ms (*: the tray refreshed in it); the GUI thread's CPU in "
        f"them: {', '.join(f'{x:.0f}' for x in fig.open_cpu)} ms; the call / its events / a "
        f"forced repaint, ms (the plots' paints): "
        f"{', '.join('{}/{}/{} ({})'.format(*p) for p in fig.open_parts)})"
    )
    if fig.stall_at and os.environ.get("BENCH_STACKS") == "1":
        for s in fig.stall_at:
            print(f"--- GUI thread in a stall, seen {s}", file=sys.stderr)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="under a minute: shorter phases")
    ap.add_argument("--hosts", type=int, default=100)
    ap.add_argument("--real", type=int, default=20, help="hosts over real SSH (>= 20)")
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--seconds", type=float, help="seconds per phase (20; quick: 8)")
    ap.add_argument("--opens", type=int, default=3, help="hosts opened one after the other")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target does not hold")
    ap.add_argument("--json", action="store_true", help="also print the figures: FLEET {...}")
    args = ap.parse_args()
    seconds = args.seconds or (8.0 if args.quick else 20.0)
    fig = run(args.hosts, args.real, args.gpus, seconds, args.opens,
              raw_s=600 if args.quick else 3600, floor_s=3.0 if args.quick else 5.0)  # fmt: skip
    print_table(fig)
    if args.json:
        print("FLEET " + json.dumps(asdict(fig)), flush=True)
    return 1 if args.check and not all(r[-1] for r in rows(fig)) else 0


if __name__ == "__main__":
    sys.exit(main())
