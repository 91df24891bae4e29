"""Reports over the ledger: spend per period and platform, chart buckets, burn rate, cost per
successful experiment.

SQLite sums the rentals that lie wholly inside one period (nearly all of them); only those that
cross a period boundary, or still run, are split in Python with the metering rules.
"""

from __future__ import annotations

import sqlite3
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any, TypeVar

from gpu_companion.core.common.clock import to_iso
from gpu_companion.core.common.money import format_rate, to_minor
from gpu_companion.core.spend import rollup
from gpu_companion.core.spend.ledger import (
    RENTAL_COLUMNS,
    RENTAL_FROM,
    SpendLedger,
    rental_from_row,
)
from gpu_companion.core.spend.metering import (
    Rental,
    bucket_label,
    bucket_start,
    next_bucket,
    period_of,
)

Key = tuple[str, str]  # (platform name, currency)


@dataclass
class PlatformLine:
    platform: str
    currency: str
    rentals: int = 0
    seconds: int = 0
    rentals_minor: int = 0
    charges_minor: int = 0

    @property
    def total_minor(self) -> int:
        return self.rentals_minor + self.charges_minor

    @property
    def hours(self) -> Decimal:
        return (Decimal(self.seconds) / 3600).quantize(Decimal("0.01"))


@dataclass
class SpendReport:
    start: datetime
    end: datetime
    lines: list[PlatformLine] = field(default_factory=list)

    @property
    def totals(self) -> dict[str, int]:
        out: dict[str, int] = defaultdict(int)
        for line in self.lines:
            out[line.currency] += line.total_minor
        return dict(out)


@dataclass(frozen=True)
class ExperimentCost:
    tag: str
    currency: str
    runs: int
    successes: int
    total_minor: int

    @property
    def per_success_minor(self) -> int | None:
        return self.total_minor // self.successes if self.successes else None


def boundary_rentals(ledger: SpendLedger, start: datetime, end: datetime) -> list[Rental]:
    """Rentals overlapping [start, end) that are not wholly inside it: running ones, and
    ended ones crossing either edge. Index look-ups only (span_s bounds the search)."""
    db = ledger.store.db
    s, e = to_iso(start), to_iso(end)
    span = db.execute("SELECT MAX(span_s) FROM rentals").fetchone()[0] or 0
    lo = to_iso(start - timedelta(seconds=int(span)))
    sql = f"SELECT {RENTAL_COLUMNS} FROM {RENTAL_FROM} WHERE "
    rows = db.execute(sql + "r.ended_at IS NULL AND r.started_at < ?", [e]).fetchall()
    rows += db.execute(
        sql + "r.started_at >= ? AND r.started_at < ? AND r.ended_at > ?", [lo, s, s]
    ).fetchall()
    rows += db.execute(
        sql + "r.started_at >= ? AND r.started_at < ? AND r.ended_at > ?", [s, e, e]
    ).fetchall()
    seen: set[int] = set()
    out = []
    for row in rows:
        if row[0] not in seen:
            seen.add(row[0])
            out.append(rental_from_row(row))
    return out


# The ended rentals wholly inside a report's window, read from the covering start index alone
# (no hosts join: it fetched every rental's row for its host id; platform names looked up after).
_WHOLLY_INSIDE = (
    "SELECT r.platform_id, r.currency, COUNT(*), SUM(r.span_s), SUM(r.cost_minor) "
    "FROM rentals r WHERE r.started_at >= ? AND r.started_at < ? AND r.ended_at <= ? "
    "GROUP BY r.platform_id, r.currency"
)


def report(ledger: SpendLedger, start: datetime, end: datetime) -> SpendReport:
    """Spend in [start, end) per platform and currency: rentals (the part that ran inside the
    window) and charges dated inside it.

    Read from the hourly rollup when the window is made of whole UTC hours that are up to date
    (a report never writes: a stale window, right after an import, takes the slow path)."""
    hours = _whole_hours(start, end)
    if hours is not None:
        got = _with_rollup(ledger, *hours, lambda: _report_by_hours(ledger, start, end), False)
        if got is not None:
            return got
    return _report_by_rentals(ledger, start, end)


def _report_by_rentals(ledger: SpendLedger, start: datetime, end: datetime) -> SpendReport:
    """The report from the rentals themselves (any window)."""
    db = ledger.store.db
    now = ledger.now()
    lines: dict[Key, PlatformLine] = {}

    def line(key: Key) -> PlatformLine:
        return lines.setdefault(key, PlatformLine(*key))

    s, e = to_iso(start), to_iso(end)
    names = dict(db.execute("SELECT id, name FROM platforms").fetchall())
    for pid, cur, count, secs, minor in db.execute(_WHOLLY_INSIDE, [s, e, e]):
        ln = line((names.get(pid, ""), cur))
        ln.rentals += count
        ln.seconds += secs or 0
        ln.rentals_minor += minor or 0
    for r in boundary_rentals(ledger, start, end):
        lo, hi = max(r.started_at, start), min(r.ended_at or now, end)
        if hi <= lo and r.started_at < start:
            continue
        ln = line((r.platform_name, r.currency))
        ln.rentals += 1
        ln.seconds += max(int((hi - lo).total_seconds()), 0)
        ln.rentals_minor += r.cost_between(start, end, now)
    for name, cur, minor in db.execute(
        "SELECT p.name, c.currency, SUM(c.amount_minor) FROM charges c "
        "JOIN platforms p ON p.id = c.platform_id WHERE c.at >= ? AND c.at < ? "
        "GROUP BY p.name, c.currency",
        [s, e],
    ):
        line((name, cur)).charges_minor += minor or 0
    return SpendReport(start, end, sorted(lines.values(), key=lambda x: (x.platform, x.currency)))


def period_report(ledger: SpendLedger, bucket: str, at: datetime | None = None) -> SpendReport:
    """The report for the day, week or month containing `at` (default: now)."""
    start, end = period_of(at or ledger.now(), bucket, ledger.tz)
    return report(ledger, start, end)


def spend_between(
    ledger: SpendLedger, start: datetime, end: datetime, platform: str | None = None
) -> dict[str, int]:
    """Totals per currency for one window, optionally one platform (by name)."""
    out: dict[str, int] = defaultdict(int)
    for ln in report(ledger, start, end).lines:
        if platform is None or ln.platform == platform:
            out[ln.currency] += ln.total_minor
    return dict(out)


ChartData = dict[str, dict[Key, int]]  # bucket label -> (platform, currency) -> minor


_BUCKETS_TABLE = (
    "CREATE TEMP TABLE IF NOT EXISTS chart_buckets (idx INTEGER PRIMARY KEY, s TEXT NOT NULL, "
    "e TEXT NOT NULL, label TEXT NOT NULL, s_epoch INTEGER NOT NULL, e_epoch INTEGER NOT NULL)"
)
# The ended rentals that start in a bucket and end inside it: one index range per bucket, read
# from the covering start index alone (no table row, no date function per rental).
_INSIDE = (
    "SELECT b.label, r.platform_id, r.currency, SUM(r.cost_minor) FROM temp.chart_buckets b "
    "JOIN rentals r ON r.started_at >= b.s AND r.started_at < b.e AND r.ended_at <= b.e "
    "WHERE r.cost_minor IS NOT NULL AND r.span_s > 0 GROUP BY 1, 2, 3"
)
# The ended rentals that start in a bucket and end in a later one of the window: their cost
# spread evenly over their time (`Rental.booked_until`), split at each bucket they cross.
_CROSSING = (
    "WITH x AS (SELECT b.idx AS first, r.platform_id AS pid, r.currency AS cur, "
    "r.cost_minor AS c, r.span_s AS d, CAST(strftime('%s', r.started_at) AS INTEGER) AS st, "
    "r.ended_at AS en FROM temp.chart_buckets b JOIN rentals r ON r.started_at >= b.s "
    "AND r.started_at < b.e AND r.ended_at > b.e AND r.ended_at <= :end "
    "WHERE r.cost_minor IS NOT NULL AND r.span_s > 0) "
    "SELECT b2.label, x.pid, x.cur, SUM("
    + rollup.booked_sql("b2.e_epoch", "x.c", "x.st", "x.d")
    + " - "
    + rollup.booked_sql("b2.s_epoch", "x.c", "x.st", "x.d")
    + ") "
    "FROM x JOIN temp.chart_buckets b2 ON b2.idx >= x.first AND b2.idx <= x.first + :reach "
    "AND b2.s < x.en GROUP BY 1, 2, 3"
)
# What the two above leave out inside the window (a rental stored without its cost or
# duration): metered in Python, as before.
_UNUSUAL = (
    f"SELECT {RENTAL_COLUMNS} FROM {RENTAL_FROM} WHERE r.started_at >= :start AND "
    "+r.ended_at <= :end AND (r.cost_minor IS NULL OR r.span_s IS NULL OR r.span_s <= 0)"
)
_CHARGES = (
    "SELECT b.label, c.platform_id, c.currency, SUM(c.amount_minor) FROM temp.chart_buckets b "
    "JOIN charges c ON c.at >= b.s AND c.at < b.e GROUP BY 1, 2, 3"
)


BucketRow = tuple[int, str, str, str, int, int]  # idx, start, end, label, start/end epoch


def _buckets(ledger: SpendLedger, start: datetime, end: datetime, bucket: str) -> list[BucketRow]:
    """The buckets of [start, end) in the ledger's time zone, clipped to the window."""
    tz = ledger.tz
    rows: list[BucketRow] = []
    b = bucket_start(start, bucket, tz)
    while b < end:
        nb = next_bucket(b, bucket, tz)
        lo, hi = max(b, start), min(nb, end)
        rows.append((len(rows), to_iso(lo), to_iso(hi), bucket_label(b, bucket, tz),
                     int(lo.timestamp()), int(hi.timestamp())))  # fmt: skip
        b = nb
    return rows


def chart_data(ledger: SpendLedger, start: datetime, end: datetime, bucket: str) -> ChartData:
    """Spend per day/week/month and platform in [start, end), every bucket present.

    When every bucket edge is a whole UTC hour (any zone a whole number of hours from UTC,
    summer time included), summed from the hourly rollup (its stale hours in the window are
    re-derived first, when they are few: this runs off the GUI thread); otherwise, or while
    too much of the window is stale, from the rentals themselves."""
    rows = _buckets(ledger, start, end, bucket)
    if rows and all(r[4] % rollup.HOUR == 0 and r[5] % rollup.HOUR == 0 for r in rows):
        a, b = rows[0][4] // rollup.HOUR, rows[-1][5] // rollup.HOUR
        got = _with_rollup(ledger, a, b, lambda: _chart_by_hours(ledger, start, end, rows), True)
        if got is not None:
            return got
    return _chart_by_rentals(ledger, start, end, bucket, rows)


def _chart_by_rentals(
    ledger: SpendLedger, start: datetime, end: datetime, bucket: str, rows: list[BucketRow]
) -> ChartData:
    """Summed by SQLite, bucket by bucket (the buckets, in the ledger's time zone, in a temporary
    table): ended rentals whole inside a bucket, ended rentals crossing buckets split by
    time, charges; only the rentals that still run or cross the window's edges, and any stored
    without a cost, are metered in Python."""
    db = ledger.store.db
    now = ledger.now()
    tz = ledger.tz
    out: ChartData = {r[3]: {} for r in rows}
    names = dict(db.execute("SELECT id, name FROM platforms").fetchall())

    def add(label: str, key: Key, minor: int) -> None:
        if label in out and minor:
            out[label][key] = out[label].get(key, 0) + minor

    # how many buckets after its first a rental can reach: its longest span over the shortest
    # whole bucket (a day with a DST change is 23 h; the window's edges may clip the first and
    # last): each crossing rental then joins a few buckets by their number, no search
    longest = int(db.execute("SELECT MAX(span_s) FROM rentals").fetchone()[0] or 0)
    inner = [r[5] - r[4] for r in rows[1:-1]]
    reach = len(rows) if not inner else 1 + -(-longest // max(min(inner), 1))
    db.execute(_BUCKETS_TABLE)
    try:
        db.execute("DELETE FROM temp.chart_buckets")
        db.conn.executemany("INSERT INTO temp.chart_buckets VALUES (?, ?, ?, ?, ?, ?)", rows)
        window = {"start": to_iso(start), "end": to_iso(end)}
        crossing = {**window, "reach": reach}
        for sql, args in ((_INSIDE, {}), (_CROSSING, crossing), (_CHARGES, {})):
            for label, pid, cur, minor in db.execute(sql, args):
                add(label, (names.get(pid, ""), cur), minor or 0)
        unusual = [rental_from_row(r) for r in db.execute(_UNUSUAL, window).fetchall()]
    finally:
        db.execute("DELETE FROM temp.chart_buckets")
    for r in unusual + boundary_rentals(ledger, start, end):
        b = bucket_start(max(r.started_at, start), bucket, tz)
        stop = min(r.ended_at or now, end)
        while b < stop:
            nb = next_bucket(b, bucket, tz)
            add(
                bucket_label(b, bucket, tz),
                (r.platform_name, r.currency),
                r.cost_between(max(b, start), min(nb, end), now),
            )
            b = nb
    return out


# --- from the hourly rollup (`rollup`) -------------------------------------------------------

T = TypeVar("T")


def _whole_hours(start: datetime, end: datetime) -> tuple[int, int] | None:
    """[start, end) as hours since the epoch, when both are whole UTC hours."""
    s, e = int(start.timestamp()), int(end.timestamp())
    if s % rollup.HOUR or e % rollup.HOUR or start.microsecond or end.microsecond:
        return None
    return s // rollup.HOUR, e // rollup.HOUR


def _with_rollup(
    ledger: SpendLedger, a: int, b: int, compute: Callable[[], T], may_write: bool
) -> T | None:
    """`compute()` in one snapshot in which hours [a, b) of the rollup are up to date; when
    they are not, re-derive them first if `may_write` and they are few. None: they are stale,
    take the slow path."""
    store = ledger.store
    db = store.db
    if db.conn.in_transaction:  # inside the caller's transaction: use it as it is
        return compute() if rollup.clean(db, a, b) else None
    db.execute("BEGIN")
    try:
        if rollup.clean(db, a, b):
            return compute()
    finally:
        db.execute("COMMIT")
    if not may_write or not _begin_at_once(db):  # another writer at work (an import in
        return None  # another process, say): the slow path now rather than wait for it
    try:
        got = compute() if rollup.refresh(db, (a, b), rollup.INLINE_HOURS) else None
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return got


def _begin_at_once(db: Any) -> bool:
    """BEGIN IMMEDIATE on this thread's connection without waiting for a busy database."""
    timeout = int(db.execute("PRAGMA busy_timeout").fetchone()[0])
    db.execute("PRAGMA busy_timeout = 0")
    try:
        db.execute("BEGIN IMMEDIATE")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        db.execute(f"PRAGMA busy_timeout = {timeout}")


_HOURS_REPORT = (
    "SELECT platform_id, currency, SUM(starts), SUM(seconds), SUM(rentals_minor), "
    "SUM(charges_minor) FROM spend_hours WHERE hour >= ? AND hour < ? GROUP BY 1, 2"
)
# the usual rentals begun before the window that run into it: counted, their money and
# seconds inside the window are in the rollup (covering start index, bounded by the longest)
_USUAL_CROSSING_START = (
    "SELECT r.platform_id, r.currency, COUNT(*) FROM rentals r WHERE r.started_at >= ? AND "
    f"r.started_at < ? AND r.ended_at > ? AND {rollup.USUAL} GROUP BY 1, 2"
)
# what the rollup leaves out: running rentals, and ended ones without a cost or a span (read
# through the partial index `rentals_unrolled`; one of no length may lie on the window's start);
# with the stored span, which a report sums
_LIVE = f"SELECT {RENTAL_COLUMNS}, r.span_s FROM {RENTAL_FROM} WHERE "
_RUNNING = _LIVE + "r.ended_at IS NULL AND r.started_at < ?"
_UNROLLED = (
    _LIVE + f"r.started_at >= ? AND r.started_at < ? AND r.ended_at >= ? AND {rollup.UNROLLED}"
)


def _not_rolled_up(ledger: SpendLedger, start: datetime, end: datetime) -> list[tuple[Rental, int]]:
    """The rentals overlapping [start, end) that the rollup does not hold, with their stored
    span (0 when missing)."""
    db = ledger.store.db
    s, e = to_iso(start), to_iso(end)
    span = db.execute("SELECT MAX(span_s) FROM rentals").fetchone()[0] or 0
    lo = to_iso(start - timedelta(seconds=int(span)))
    rows = db.execute(_RUNNING, [e]).fetchall() + db.execute(_UNROLLED, [lo, e, s]).fetchall()
    return [(rental_from_row(r), r[-1] or 0) for r in rows]


def _report_by_hours(ledger: SpendLedger, start: datetime, end: datetime) -> SpendReport:
    """`_report_by_rentals`, with the usual rentals and the charges summed from the rollup."""
    db = ledger.store.db
    now = ledger.now()
    lines: dict[Key, PlatformLine] = {}

    def line(key: Key) -> PlatformLine:
        return lines.setdefault(key, PlatformLine(*key))

    a, b = int(start.timestamp()) // rollup.HOUR, int(end.timestamp()) // rollup.HOUR
    names = dict(db.execute("SELECT id, name FROM platforms").fetchall())
    for pid, cur, starts, secs, rentals_minor, charges_minor in db.execute(_HOURS_REPORT, [a, b]):
        ln = line((names.get(pid, ""), cur))
        ln.rentals += starts
        ln.seconds += secs
        ln.rentals_minor += rentals_minor
        ln.charges_minor += charges_minor
    s = to_iso(start)
    span = db.execute("SELECT MAX(span_s) FROM rentals").fetchone()[0] or 0
    lo = to_iso(start - timedelta(seconds=int(span)))
    for pid, cur, count in db.execute(_USUAL_CROSSING_START, [lo, s, s]):
        line((names.get(pid, ""), cur)).rentals += count
    for r, span_s in _not_rolled_up(ledger, start, end):
        if r.ended_at is not None and r.started_at >= start and r.ended_at <= end:
            ln = line((r.platform_name, r.currency))  # whole inside: as `_WHOLLY_INSIDE` sums
            ln.rentals += 1
            ln.seconds += span_s
            ln.rentals_minor += r.cost_minor or 0
            continue
        lo_t, hi_t = max(r.started_at, start), min(r.ended_at or now, end)
        if hi_t <= lo_t and r.started_at < start:
            continue
        ln = line((r.platform_name, r.currency))
        ln.rentals += 1
        ln.seconds += max(int((hi_t - lo_t).total_seconds()), 0)
        ln.rentals_minor += r.cost_between(start, end, now)
    return SpendReport(start, end, sorted(lines.values(), key=lambda x: (x.platform, x.currency)))


_HOURS_CHART = (
    "SELECT b.idx, s.platform_id, s.currency, SUM(s.rentals_minor), SUM(s.charges_minor) "
    "FROM temp.chart_buckets b JOIN spend_hours s ON s.hour >= b.s_epoch / 3600 "
    "AND s.hour < b.e_epoch / 3600 GROUP BY 1, 2, 3"
)


def _chart_by_hours(
    ledger: SpendLedger, start: datetime, end: datetime, rows: list[BucketRow]
) -> ChartData:
    """`_chart_by_rentals`, with the usual rentals and the charges summed from the rollup: one
    index range per bucket; only running rentals and those without a cost are metered."""
    db = ledger.store.db
    now = ledger.now()
    out: ChartData = {r[3]: {} for r in rows}
    labels = [r[3] for r in rows]
    names = dict(db.execute("SELECT id, name FROM platforms").fetchall())

    def add(label: str, key: Key, minor: int) -> None:
        if minor:
            out[label][key] = out[label].get(key, 0) + minor

    db.execute(_BUCKETS_TABLE)
    try:
        db.execute("DELETE FROM temp.chart_buckets")
        db.conn.executemany("INSERT INTO temp.chart_buckets VALUES (?, ?, ?, ?, ?, ?)", rows)
        for idx, pid, cur, rentals_minor, charges_minor in db.execute(_HOURS_CHART):
            key = (names.get(pid, ""), cur)
            add(labels[idx], key, rentals_minor)
            add(labels[idx], key, charges_minor)
    finally:
        db.execute("DELETE FROM temp.chart_buckets")
    edges = [r[4] for r in rows]
    for r, _span in _not_rolled_up(ledger, start, end):
        first = max(r.started_at, start)
        stop = min(r.ended_at or now, end)
        i = bisect_right(edges, int(first.timestamp())) - 1
        while 0 <= i < len(rows) and rows[i][4] < stop.timestamp():
            lo = datetime.fromtimestamp(rows[i][4], timezone.utc)
            hi = datetime.fromtimestamp(rows[i][5], timezone.utc)
            add(labels[i], (r.platform_name, r.currency), r.cost_between(lo, hi, now))
            i += 1
    return out


def burn_rate(ledger: SpendLedger) -> dict[str, Decimal]:
    """What the running rentals cost per hour, per currency."""
    out: dict[str, Decimal] = defaultdict(Decimal)
    for r in ledger.running():
        if r.billed:
            out[r.currency] += r.hourly_rate()
    return dict(out)


def burn_text(ledger: SpendLedger) -> str:
    """'$2.40/h + ¥8.00/h', or '' when nothing bills by the hour."""
    rates = sorted(burn_rate(ledger).items())
    return " + ".join(format_rate(to_minor(v, c), c) for c, v in rates if v)


def today(ledger: SpendLedger) -> dict[str, int]:
    start, end = period_of(ledger.now(), "day", ledger.tz)
    return spend_between(ledger, start, end)


def experiment_costs(ledger: SpendLedger) -> list[ExperimentCost]:
    """Per experiment tag and currency: runs, successes, total cost, cost per success."""
    now = ledger.now()
    acc: dict[Key, list[int]] = defaultdict(lambda: [0, 0, 0])
    for tag, cur, runs, wins, minor in ledger.store.db.execute(
        "SELECT tag, currency, COUNT(*), SUM(outcome = 'success'), SUM(cost_minor) FROM rentals "
        "WHERE tag != '' AND ended_at IS NOT NULL GROUP BY tag, currency"
    ):
        acc[(tag, cur)] = [runs, wins or 0, minor or 0]
    for r in ledger.running():
        if r.tag:
            a = acc[(r.tag, r.currency)]
            a[0] += 1
            a[1] += r.outcome == "success"
            a[2] += r.cost_at(now)
    return [ExperimentCost(t, c, *v) for (t, c), v in sorted(acc.items())]
