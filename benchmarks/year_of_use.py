#!/usr/bin/env python3
"""A year of use: the app on the data dir a long-time user has, against the floor in the same run.

    python benchmarks/year_of_use.py [--quick] [--rentals N] [--keep DIR]

Builds a data dir as a year of use leaves it, through the app's own Store (so the schema is the
real one, every migration run) with bulk SQL inserts: 100 hosts on 6 platforms (20 of them still
rented), 1,000,000 rentals and 100,000 charges over three years, 20,000 finished transfer jobs,
500 runs with their joblogs, and the GPU minutes of 20 hosts that the monitor keeps (it prunes
minutes older than 7 days, so a year of them leaves 7 days). Then measures, each against the
floor or the naive alternative in the same run, and prints one table with the target of each:

- first paint on that data dir against a bare PySide6 window (<= 1.5x; as benchmarks/startup.py:
  fresh processes, offscreen, from spawn to the first painted frame)
- each page's first show (the deferred build right after the first paint, then the user's
  first click: refreshed and painted) against an empty page (<= 100 ms)
- the month report (<= 20 ms) and the year chart (<= 50 ms) against one SQL sum over the same
  rows (the floor)
- the CSV export, and the import of that CSV (1M rows: <= 20 s, <= 300 MB peak RSS) in a fresh
  process into a new data dir, against reading the file with the csv module in the same kind of
  process (peak RSS from ru_maxrss)

`--quick` makes the sizes small enough for about a minute (CI); `--check` exits 1 when a target
does not hold. Children run with .pyc writing on.
Not measured here: the soak (a week of live hosts) and the 100-host live stall.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "desktop"))

UTC = timezone.utc
FULL = {
    "hosts": 100, "platforms": 6, "rented": 20, "rentals": 1_000_000, "charges": 100_000,
    "transfers": 20_000, "runs": 500, "shards": 20, "minute_hosts": 20, "minute_days": 7,
    "paint_runs": 7, "import_rows": 1_000_000,
}  # fmt: skip
QUICK = {
    "hosts": 100, "platforms": 6, "rented": 20, "rentals": 50_000, "charges": 5_000,
    "transfers": 2_000, "runs": 50, "shards": 20, "minute_hosts": 20, "minute_days": 1,
    "paint_runs": 3, "import_rows": 20_000,
}  # fmt: skip
PLATFORMS = (  # name, currency, billing granularity
    ("vast.ai", "USD", "second"), ("RunPod", "USD", "second"), ("Lambda", "USD", "minute"),
    ("AutoDL", "CNY", "hour"), ("university", "EUR", "hour"), ("friend's box", "USD", "hour"),
)  # fmt: skip
PAGES = ("hosts", "monitor", "transfers", "runs", "spend", "release")


def _env(home: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "QT_QPA_PLATFORM": "offscreen",
        "GPU_COMPANION_HOME": str(home),
        "PYTHONPATH": str(REPO / "desktop"),
    }


# --- the data dir ----------------------------------------------------------------------------


def _numbers(n: int) -> str:
    """SQL for the rows 0..n-1 (a recursive CTE: no extension needed)."""
    return f"WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < {n - 1}) "


def _iso(epoch_sql: str) -> str:
    return f"strftime('%Y-%m-%dT%H:%M:%S+00:00', {epoch_sql}, 'unixepoch')"


# a pseudo-random fraction in [0, 1) from the row number (deterministic: the same dir each run)
def _rand(salt: int) -> str:
    return f"(((i + {salt}) * 2654435761) % 4294967291) / 4294967291.0"


def build_data_dir(home: Path, size: dict[str, int], now: datetime) -> dict[str, float]:
    """The data dir a year of use leaves, under $GPU_COMPANION_HOME=home; seconds per store."""
    from gpu_companion.core.common.paths import AppPaths
    from gpu_companion.core.storage.store import Store

    os.environ["GPU_COMPANION_HOME"] = str(home)
    paths = AppPaths.default().ensure()
    store = Store(paths.database)
    took: dict[str, float] = {}
    end = int(now.timestamp())
    start = end - 3 * 365 * 86400
    span = end - start - 8 * 86400
    t = time.perf_counter()
    with store.transaction() as db:
        for pid, (name, cur, gran) in enumerate(PLATFORMS[: size["platforms"]], start=1):
            db.execute(
                "INSERT INTO platforms (id, name, console_url, billing_granularity, currency, "
                "created_at) VALUES (?, ?, '', ?, ?, ?)",
                [pid, name, gran, cur, _iso_py(start)],
            )
        hosts = size["hosts"]
        db.execute(
            _numbers(hosts) + "INSERT INTO hosts (id, alias, hostname, port, user, platform_id, "
            "gpu_model, gpu_count, notes, state, created_at, instance_id) SELECT i + 1, "
            "printf('gpu-%03d', i + 1), printf('10.1.%d.%d', i / 250, i % 250 + 1), 22000 + i, "
            f"'root', 1 + i % {size['platforms']}, "
            "CASE i % 3 WHEN 0 THEN 'RTX 4090' WHEN 1 THEN 'A100 80GB' ELSE 'H100 SXM' END, "
            f"1 + i % 2, '', CASE WHEN i < {size['rented']} THEN 'active' ELSE 'released' END, "
            f"{_iso(f'{start} + i * 86400')}, printf('%d', 1000000 + i) FROM n"
        )
    took["hosts"] = time.perf_counter() - t

    t = time.perf_counter()
    rate = "CASE i % 5 WHEN 0 THEN 39 WHEN 1 THEN 199 WHEN 2 THEN 249 WHEN 3 THEN 800 ELSE 3200 END"
    secs = (
        "CASE (i * 7) % 9 WHEN 0 THEN 1800 WHEN 1 THEN 3600 WHEN 2 THEN 7200 WHEN 3 THEN 10800 "
        "WHEN 4 THEN 18000 WHEN 5 THEN 28800 WHEN 6 THEN 43200 WHEN 7 THEN 72000 ELSE 108000 END"
    )
    with store.transaction() as db:
        db.execute(  # ended rentals: host h lives on platform 1 + (h - 1) % platforms
            _numbers(size["rentals"]) + ", r AS (SELECT i, 1 + i % "
            f"{hosts} AS host, {start} + CAST({_rand(1)} * {span} AS INTEGER) AS s, "
            f"{secs} AS secs, {rate} AS cents FROM n) "
            "INSERT INTO rentals (platform_id, host_id, host_alias, gpu_model, gpu_count, "
            "billing_mode, rate, currency, granularity, started_at, ended_at, span_s, cost_minor, "
            "tag, outcome, end_reason) SELECT p.id, r.host, h.alias, h.gpu_model, h.gpu_count, "
            "'on-demand', printf('%d.%02d', r.cents / 100, r.cents % 100), p.currency, "
            f"p.billing_granularity, {_iso('r.s')}, {_iso('r.s + r.secs')}, r.secs, "
            "r.cents * h.gpu_count * r.secs / 3600, 'exp' || (r.i % 50), "
            "CASE r.i % 3 WHEN 0 THEN 'success' WHEN 1 THEN 'failure' ELSE '' END, 'released' "
            "FROM r JOIN hosts h ON h.id = r.host JOIN platforms p ON p.id = h.platform_id"
        )
        db.execute(  # the rented hosts' meters still run
            "INSERT INTO rentals (platform_id, host_id, host_alias, gpu_model, gpu_count, "
            "billing_mode, rate, currency, granularity, started_at, tag) SELECT h.platform_id, "
            "h.id, h.alias, h.gpu_model, h.gpu_count, 'on-demand', '1.99', p.currency, "
            f"p.billing_granularity, {_iso(f'{end} - 3600 * (h.id + 1)')}, 'live' FROM hosts h "
            "JOIN platforms p ON p.id = h.platform_id WHERE h.state = 'active'"
        )
        charge_at = f"{start} + CAST({_rand(2)} * {span} AS INTEGER)"
        db.execute(
            _numbers(size["charges"]) + "INSERT INTO charges (platform_id, kind, amount_minor, "
            f"currency, at, description) SELECT p.id, CASE i % 7 WHEN 0 THEN 'credit' WHEN 1 "
            "THEN 'fee' WHEN 2 THEN 'traffic' ELSE 'storage' END, CASE i % 7 WHEN 0 THEN -500 "
            f"ELSE 100 + i % 4900 END, p.currency, {_iso(charge_at)}, '' FROM n "
            f"JOIN platforms p ON p.id = 1 + i % {size['platforms']}"
        )
    took["ledger"] = time.perf_counter() - t

    t = time.perf_counter()
    with store.transaction() as db:
        db.execute(
            _numbers(size["transfers"]) + "INSERT INTO transfer_jobs (host_alias, direction, "
            "local_path, remote_path, options, label, state, bytes_done, bytes_total, engine, "
            "message, verified, attempts, bytes_sent, active_s, created_at, first_started_at, "
            "finished_at) SELECT printf('gpu-%03d', 1 + i % "
            f"{hosts}), CASE i % 2 WHEN 0 THEN 'download' ELSE 'upload' END, "
            "printf('/home/me/backups/run-%d', i), printf('/workspace/ckpt-%d', i), '{}', '', "
            "CASE WHEN i % 20 = 0 THEN 'failed' WHEN i % 33 = 0 THEN 'cancelled' ELSE 'done' END, "
            "1048576 * (1 + i % 500), 1048576 * (1 + i % 500), 'rsync', '', i % 20 != 0, 1, "
            f"1048576 * (1 + i % 500), 10.0, {start} + i * {span // max(size['transfers'], 1)}.0, "
            f"{start} + i * {span // max(size['transfers'], 1)} + 5.0, "
            f"{start} + i * {span // max(size['transfers'], 1)} + 60.0 FROM n"
        )
    took["transfers"] = time.perf_counter() - t

    t = time.perf_counter()
    minutes = size["minute_days"] * 1440
    first = end // 60 - minutes
    with store.transaction() as db:
        db.execute(
            _numbers(minutes) + ", hh(a) AS (SELECT alias FROM hosts WHERE state = 'active' "
            f"LIMIT {size['minute_hosts']}) INSERT INTO gpu_minutes (alias, gpu, minute, samples, "
            "util, mem_used, mem_total, temp, power, power_limit, util_max) SELECT hh.a, 0, "
            f"{first} + i, 12, 50 + i % 50, 20000, 81920, 60 + i % 20, 300, 450, 100 FROM n, hh"
        )
    took["gpu minutes"] = time.perf_counter() - t

    t = time.perf_counter()
    runs = paths.data_dir / "runs"
    header = "Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand\n"
    for r in range(size["runs"]):
        at = start + r * (span // max(size["runs"], 1))
        run = runs / time.strftime("%Y%m%d-%H%M%S", time.gmtime(at))
        (run / "out").mkdir(parents=True)
        hosts_used = [f"gpu-{1 + (r + k) % hosts:03d}" for k in range(2)]
        spec = {
            "hosts": [{"alias": a, "slots": 1} for a in hosts_used],
            "command": "python work.py {}",
            "inputs": [f"shard-{s}" for s in range(size["shards"])],
            "by_range": False, "retries": 1, "returns": [], "transfer_inputs": False,
        }  # fmt: skip
        (run / "spec.json").write_text(json.dumps(spec, indent=1))
        (run / "inputs.txt").write_text("".join(f"shard-{s}\n" for s in range(size["shards"])))
        lines = [
            f"{s + 1}\t{hosts_used[s % 2]}\t{at + s * 60}.000\t{55.5 + s}\t0\t0\t"
            f"{1 if s % 9 == 0 else 0}\t0\tpython work.py shard-{s}\n"
            for s in range(size["shards"])
        ]
        (run / "joblog").write_text(header + "".join(lines))
    took["runs"] = time.perf_counter() - t
    store.set_setting("ui.last_page", "hosts")
    store.close()
    return took


def _iso_py(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat()


# --- first paint -------------------------------------------------------------------------------

BARE_QT = (
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


def _first_paint(argv: list[str], home: Path) -> float:
    env = {**_env(home), "GPU_COMPANION_EXIT_AFTER_FIRST_PAINT": "1"}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                            text=True)  # fmt: skip
    assert proc.stdout is not None
    elapsed = None
    for line in proc.stdout:
        if line.strip() == "first-paint":
            elapsed = time.perf_counter() - start
            break
    proc.stdout.read()
    proc.wait()
    if elapsed is None:
        raise RuntimeError(f"{argv} exited ({proc.returncode}) without painting")
    return elapsed


def first_paint(home: Path, empty: Path, runs: int) -> tuple[float, float, float]:
    """Median seconds to first paint: the app on `home`, a bare Qt window, the app on an empty
    data dir (what the data adds); interleaved."""
    app = [sys.executable, "-m", "gpu_companion"]
    bare = [sys.executable, "-c", BARE_QT]
    for argv, where in ((app, home), (bare, home), (app, empty)):  # warm-up: .pyc, caches
        _first_paint(argv, where)
    ours, floor, bare_dir = [], [], []
    for _ in range(runs):
        ours.append(_first_paint(app, home))
        floor.append(_first_paint(bare, home))
        bare_dir.append(_first_paint(app, empty))
    return statistics.median(ours), statistics.median(floor), statistics.median(bare_dir)


# --- page first show (child process) ---------------------------------------------------------


def child_pages(keys: list[str]) -> None:
    """Print one JSON line: per page, the deferred build right after the first paint (its
    constructor refreshes it: the GUI thread is held that long), then the user's first click on
    it (refresh + paint), and when what it reads off the GUI thread is in; all in ms, with an
    empty page's show as the floor. Module imports are left out: start-up's cost
    (benchmarks/startup.py), paid once whatever the data. The rented hosts are watched from
    before, as in the app (from right after its first paint)."""
    from PySide6.QtCore import QThreadPool
    from PySide6.QtWidgets import QApplication, QLabel, QWidget

    from gpu_companion.services import build_services
    from gpu_companion.ui.common import worker
    from gpu_companion.ui.shell.build import PAGES as SPECS
    from gpu_companion.ui.shell.build import build_window

    app = QApplication([])
    ctx = build_services()
    ctx.store.set_setting("ui.last_page", "settings")  # the window builds that one at start
    window = build_window(ctx)
    window._deferred_started = True  # noqa: SLF001 - each page is built here, timed
    window._paint_fallback.stop()  # noqa: SLF001
    window.resize(1100, 700)
    window.show()
    app.processEvents()
    window.repaint()
    import babel.numbers  # noqa: F401 - money is formatted by the first page that shows any
    import pyqtgraph  # noqa: F401 - the monitor's plots import it when first shown

    import gpu_companion.core.monitor.live  # noqa: F401

    ctx.start_watching()  # as the app does right after its first paint: the rented hosts stream
    end = time.monotonic() + 1.0
    while time.monotonic() < end:  # (their collectors start; these hosts never answer)
        app.processEvents()
        time.sleep(0.02)

    for spec in SPECS:
        if spec.key in keys:
            spec.load()

    def settle() -> None:
        for pool in (QThreadPool.globalInstance(), worker.long_pool()):
            pool.waitForDone(60_000)  # what the page reads off the GUI thread
        app.processEvents()

    def timed(step: Callable[[], object]) -> tuple[float, float]:
        t = time.perf_counter()
        step()
        app.processEvents()
        window.repaint()
        held = time.perf_counter() - t
        settle()
        window.repaint()
        return held * 1000, (time.perf_counter() - t) * 1000

    result: dict[str, Any] = {}
    floor_page = QWidget()
    QLabel("an empty page", floor_page)
    window.stack.addWidget(floor_page)
    result["floor"] = [*timed(lambda: window.stack.setCurrentWidget(floor_page)), 0.0]
    for key in keys:
        build, _built_filled = timed(lambda key=key: window.pages[key])  # type: ignore[misc]
        window.stack.setCurrentWidget(floor_page)
        settle()
        show, filled = timed(lambda key=key: window.navigate(key))  # type: ignore[misc]
        result[key] = [show, filled, build]
    print(json.dumps(result), flush=True)
    window.quitting = True
    window.close()
    worker.wait_all()
    ctx.close()


def pages_first_show(home: Path, runs: int) -> dict[str, tuple[float, float, float]]:
    """Median over `runs` fresh processes of each page's (shown, filled, built) ms."""
    per: dict[str, list[tuple[float, ...]]] = {}
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, __file__, "--child-pages", ",".join(PAGES)],
            env=_env(home), capture_output=True, text=True, check=False,
        )  # fmt: skip
        line = next((x for x in out.stdout.splitlines() if x.startswith("{")), None)
        if line is None:
            raise RuntimeError(f"pages child failed:\n{out.stderr[-3000:]}")
        for key, value in json.loads(line).items():
            per.setdefault(key, []).append(tuple(value))
    return {
        k: (
            statistics.median(v[0] for v in vs),
            statistics.median(v[1] for v in vs),
            statistics.median(v[2] for v in vs),
        )
        for k, vs in per.items()
    }


# --- reports ---------------------------------------------------------------------------------


def best_ms(fn: Callable[[], Any], repeat: int = 5) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best * 1000, result


def reports(home: Path, now: datetime) -> dict[str, tuple[float, float]]:
    """Month report and year chart against one SQL sum over the same window (the floor)."""
    from gpu_companion.core.common.clock import ManualClock, to_iso
    from gpu_companion.core.common.paths import AppPaths
    from gpu_companion.core.spend.ledger import SpendLedger
    from gpu_companion.core.spend.metering import period_of
    from gpu_companion.core.spend.reports import chart_data, report
    from gpu_companion.core.storage.store import Store

    os.environ["GPU_COMPANION_HOME"] = str(home)
    store = Store(AppPaths.default().database)
    ledger = SpendLedger(store, ManualClock(now), tz=UTC)
    month = period_of(now - timedelta(days=31), "month", UTC)
    year = (now - timedelta(days=365), now)

    def floor(start: datetime, end: datetime) -> int:
        return int(
            store.db.execute(
                "SELECT SUM(cost_minor) FROM rentals WHERE started_at >= ? AND started_at < ?",
                [to_iso(start), to_iso(end)],
            ).fetchone()[0]
            or 0
        )

    out = {}
    out["month"] = (best_ms(lambda: report(ledger, *month))[0], best_ms(lambda: floor(*month))[0])
    ours = best_ms(lambda: chart_data(ledger, *year, "day"), 3)[0]
    out["year"] = (ours, best_ms(lambda: floor(*year), 3)[0])
    store.close()
    return out


# --- CSV export and import -------------------------------------------------------------------

READ_CSV = """
import csv, sys
with open(sys.argv[1], newline="", encoding="utf-8") as f:
    print(sum(1 for _row in csv.reader(f)) - 1)
"""


def _child(argv: list[str], env: dict[str, str], tmp: Path) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MB, stdout) of a fresh process (reaped with wait4: its own
    ru_maxrss, not the largest of every child this process had)."""
    with (tmp / "out.txt").open("w+") as out, (tmp / "err.txt").open("w+") as err:
        t = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=err, text=True)
        _pid, status, usage = os.wait4(proc.pid, 0)
        secs = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        if proc.returncode:
            raise RuntimeError(f"{argv[:5]} failed ({proc.returncode}):\n{err.read()[-3000:]}")
        return secs, usage.ru_maxrss / 1024, out.read()


def csv_round_trip(home: Path, tmp: Path, rows: int, now: datetime) -> dict[str, Any]:
    """Export `rows` rows of the year's ledger, then import them into a new data dir."""
    from gpu_companion.core.common.clock import ManualClock
    from gpu_companion.core.common.paths import AppPaths
    from gpu_companion.core.spend.csv_export import export_csv
    from gpu_companion.core.spend.ledger import SpendLedger
    from gpu_companion.core.storage.store import Store

    os.environ["GPU_COMPANION_HOME"] = str(home)
    store = Store(AppPaths.default().database)
    ledger = SpendLedger(store, ManualClock(now), tz=UTC)
    total = store.db.execute(
        "SELECT (SELECT COUNT(*) FROM rentals) + (SELECT COUNT(*) FROM charges)"
    ).fetchone()[0]
    path = tmp / "ledger.csv"
    t = time.perf_counter()
    with path.open("w", newline="", encoding="utf-8") as f:
        written = export_csv(ledger, f)
    export_s = time.perf_counter() - t
    store.close()
    assert written == total
    if rows < total:  # the first `rows` data rows: a bill of that size
        cut = tmp / "part.csv"
        with path.open(encoding="utf-8", newline="") as src, cut.open("w", newline="") as dst:
            for n, line in enumerate(src):
                if n > rows:
                    break
                dst.write(line)
        path = cut
    size = path.stat().st_size
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env |= {"GPU_COMPANION_HOME": str(tmp / "import"), "PYTHONPATH": str(REPO / "desktop")}
    count = min(rows, total)
    ours = _child([sys.executable, "-m", "gpu_companion", "ledger", "import", str(path)], env, tmp)
    check = Store(tmp / "import" / "data" / "companion.sqlite3")
    got = check.db.execute(
        "SELECT (SELECT COUNT(*) FROM rentals) + (SELECT COUNT(*) FROM charges)"
    ).fetchone()[0]
    check.close()
    assert got == count, (got, count, ours[2])
    floor = _child([sys.executable, "-c", READ_CSV, str(path)], env, tmp)
    assert int(floor[2]) == count
    return {"export_s": export_s, "exported": written, "import": ours[:2], "read": floor[:2],
            "rows": count, "bytes": size}  # fmt: skip


# --- the table -------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="CI sizes: about a minute")
    ap.add_argument("--rentals", type=int, help="rentals to build (charges: a tenth)")
    ap.add_argument("--keep", type=Path, help="build (or reuse) the data dir here and keep it")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target does not hold")
    ap.add_argument("--child-pages", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_pages:
        child_pages(args.child_pages.split(","))
        return 0
    size = dict(QUICK if args.quick else FULL)
    if args.rentals:
        size["rentals"], size["charges"] = args.rentals, args.rentals // 10
        size["import_rows"] = min(size["import_rows"], args.rentals)
    now = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    tmp = Path(tempfile.mkdtemp(prefix="year-of-use-"))
    home = args.keep or tmp / "home"
    try:
        t = time.perf_counter()
        built = {} if (home / "data").exists() else build_data_dir(home, size, now)
        build_s = time.perf_counter() - t
        rows: list[tuple[str, str, str, str, str, bool]] = []

        def add(row: tuple[str, str, str, str, str, bool]) -> None:
            rows.append(row)
            print(" | ".join(map(str, row)), file=sys.stderr, flush=True)  # as it goes

        ours, floor, empty = first_paint(home, tmp / "empty", size["paint_runs"])
        add(("first paint, year's data dir", f"{ours * 1000:.0f} ms",
             f"{floor * 1000:.0f} ms bare Qt window", f"{ours / floor:.2f}x",
             "<= 1.5x", ours / floor <= 1.5))  # fmt: skip
        add(("  (first paint, empty data dir)", f"{empty * 1000:.0f} ms",
             f"{floor * 1000:.0f} ms bare Qt window", f"{empty / floor:.2f}x",
             "(reference)", True))  # fmt: skip

        shows = pages_first_show(home, 3 if args.quick else 5)
        floor_ms = shows.pop("floor")[0]
        for key in PAGES:
            shown, filled, build_ms = shows[key]
            late = f", filled {filled:.0f}" if filled - shown > 5 else ""
            add(
                (
                    f"{key.capitalize()} page first show (built {build_ms:.0f} ms{late})",
                    f"{shown:.1f} ms",
                    f"{floor_ms:.1f} ms empty page",
                    f"{shown / floor_ms:.1f}x",
                    "<= 100 ms",
                    max(shown, build_ms) <= 100,
                )
            )
            # fmt: skip

        rep = reports(home, now)
        n = size["rentals"]
        for key, name, limit in (("month", "month report", 20), ("year", "year chart", 50)):
            ms, floor_ms = rep[key]
            add((f"{name} ({n:,} rentals)", f"{ms:.1f} ms",
                         f"{floor_ms:.1f} ms one SQL sum", f"{ms / floor_ms:.1f}x",
                         f"<= {limit} ms", ms <= limit))  # fmt: skip

        rt = csv_round_trip(home, tmp, size["import_rows"], now)
        add((f"CSV export ({rt['exported']:,} rows)", f"{rt['export_s']:.1f} s", "", "",
                     "", True))  # fmt: skip
        (secs, rss), (r_secs, r_rss) = rt["import"], rt["read"]
        scale = 1_000_000 / rt["rows"]
        add((f"CSV import ({rt['rows']:,} rows, {rt['bytes'] / 1e6:.0f} MB) time",
                     f"{secs:.1f} s", f"{r_secs:.1f} s csv.reader alone", f"{secs / r_secs:.1f}x",
                     "<= 20 s per 1M", secs * scale <= 20))  # fmt: skip
        add(("CSV import peak RSS", f"{rss:.0f} MB", f"{r_rss:.0f} MB csv.reader alone",
                     f"{rss / r_rss:.1f}x", "<= 300 MB", rss <= 300))  # fmt: skip
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            shutil.rmtree(tmp / "import", ignore_errors=True)

    load = os.getloadavg()[0]
    print(
        f"a year of use ({'quick' if args.quick else 'full'} sizes): {size['hosts']} hosts on "
        f"{size['platforms']} platforms, {size['rentals']:,} rentals, {size['charges']:,} charges, "
        f"{size['transfers']:,} transfer jobs, {size['runs']} runs, {size['minute_days']} days of "
        f"GPU minutes for {size['minute_hosts']} hosts; built in {build_s:.0f} s"
        + (f" ({', '.join(f'{k} {v:.1f} s' for k, v in built.items())})" if built else "")
    )
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.1f}")
    head = ("measure", "ours", "floor / naive", "ratio", "target", "holds")
    widths = (56, 10, 28, 7, 15, 5)
    print("  ".join(f"{h:<{w}}" for h, w in zip(head, widths, strict=True)))
    for name, ours_s, floor_s, ratio, target, ok in rows:
        cells = (name, ours_s, floor_s, ratio, target, "yes" if ok else "NO")
        print("  ".join(f"{c:<{w}}" for c, w in zip(cells, widths, strict=True)))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(
        f"(peak RSS of this process: {peak} MB; first paint and page show: medians of fresh "
        "processes; not measured: the soak and the 100-host live stall)"
    )
    return 1 if args.check and not all(r[-1] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
