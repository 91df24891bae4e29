"""Spend per UTC hour, platform and currency, kept by the database itself (issue 30): a year's
chart or a month's report then sums a few thousand hours instead of reading a million rentals.

What it holds: the ended rentals with a cost and a positive span (the usual ones) and the
charges. A rental's share of hour [H, H + 1 h) is `booked(H + 1 h) - booked(H)`, where `booked`
is `Rental.booked_until` (its cost spread evenly over its time, rounded down): the shares
telescope, so any span of whole UTC hours sums to exactly what metering each rental gives.
Running rentals and unusual ones (no cost, no span) are metered live by the reports, as before.

Kept fresh without trusting the writers: triggers on `rentals` and `charges` (migration 0013)
append the time range a write touched to `spend_stale`; `refresh` re-derives those hours from
the rentals and charges overlapping them (index look-ups) inside the caller's write
transaction. `catch_up` does all of it in short transactions (after a migration or a big import:
every hour is stale), for a background thread; a report whose window is stale and too big to
re-derive on the spot takes the slow path instead.
"""

from __future__ import annotations

import sqlite3
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from gpu_companion.core.common.clock import from_iso

if TYPE_CHECKING:
    import sqlite_utils

    from gpu_companion.core.storage.store import Store

HOUR = 3600
# the rentals the rollup holds; the triggers of migration 0013 use the same test
NEAR_S = 31 * 86400  # rentals longer than this are looked up by their span (see `derive`)
USUAL = "r.ended_at IS NOT NULL AND r.cost_minor IS NOT NULL AND r.span_s > 0"
# the ended rentals it leaves out (read through the partial index `rentals_unrolled`: the
# condition is spelled as in the index, so SQLite can use it)
UNROLLED = "r.ended_at IS NOT NULL AND (r.cost_minor IS NULL OR r.span_s IS NULL OR r.span_s <= 0)"
# more stale rows than this (a big import): they are merged into one range before use
_MANY = 256
# a chart re-derives at most this many stale hours of its window on the spot (about a month)
INLINE_HOURS = 31 * 24
# `catch_up` re-derives this many hours per transaction (a week: well under a second)
CHUNK_HOURS = 7 * 24

if sqlite3.sqlite_version_info >= (3, 38, 0):

    def _epoch(column: str) -> str:
        return f"unixepoch({column})"

else:  # pragma: no cover - SQLite before 3.38 (2022)

    def _epoch(column: str) -> str:
        return f"CAST(strftime('%s', {column}) AS INTEGER)"


def booked_sql(t: str, c: str = "c", st: str = "st", d: str = "d") -> str:
    """`Rental.booked_until(t)` of an ended rental (start st, span d, cost c) in SQL: rounded
    down like Python's `//` also for a negative cost (SQLite's `/` rounds toward zero), and
    exact when cost x seconds is past 64 bits (SQLite would go on in floats): c * x // d is
    (c // d) * x + (c % d) * x // d, each part well inside. The rollup's and the chart's
    rentals path's one formula."""
    r = f"((({c} % {d}) + {d}) % {d})"  # c mod d, in [0, d)
    return (
        f"(CASE WHEN {t} <= {st} THEN 0 WHEN {t} >= {st} + {d} THEN {c} "
        f"ELSE (({c} - {r}) / {d}) * ({t} - {st}) + ({r} * ({t} - {st})) / {d} END)"
    )


# the rollup rows of hours [:a, :b): each usual rental overlapping them split into its hours
# (joined to a table of numbers: no recursion), and the charges dated inside them
_DERIVE = (
    "INSERT INTO spend_hours (hour, platform_id, currency, starts, seconds, rentals_minor, "
    "charges_minor) "
    "WITH x AS MATERIALIZED (SELECT " + _epoch("r.started_at") + " AS st, r.span_s AS d, "
    "r.cost_minor AS c, r.platform_id AS pid, r.currency AS cur FROM rentals r "
    "WHERE r.started_at >= :since AND r.started_at < :hi AND r.ended_at > :lo "
    "AND r.span_s <= :near AND " + USUAL + " UNION ALL SELECT " + _epoch("r.started_at") + ", "
    "r.span_s, r.cost_minor, r.platform_id, r.currency FROM rentals r WHERE r.span_s > :near "
    "AND +r.started_at < :hi AND +r.ended_at > :lo AND " + USUAL + "), "
    "y AS (SELECT MAX(x.st / 3600, :a) + n.k AS h, x.st, x.d, x.c, x.pid, x.cur FROM x "
    "JOIN temp.rollup_numbers n ON n.k <= MIN((x.st + x.d - 1) / 3600, :b - 1) "
    "- MAX(x.st / 3600, :a)) "
    "SELECT h, pid, cur, SUM(s), SUM(secs), SUM(rm), SUM(cm) FROM ("
    "SELECT h, pid, cur, h = st / 3600 AS s, "
    "MIN(h * 3600 + 3600, st + d) - MAX(h * 3600, st) AS secs, "
    + booked_sql("(h * 3600 + 3600)")
    + " - "
    + booked_sql("(h * 3600)")
    + " AS rm, 0 AS cm FROM y UNION ALL SELECT "
    + _epoch("c.at")
    + " / 3600, c.platform_id, c.currency, 0, 0, 0, c.amount_minor FROM charges c "
    "WHERE c.at >= :lo AND c.at < :hi) GROUP BY 1, 2, 3"
)

Ranges = list[tuple[int, int]]  # [first hour, end hour) in hours since the epoch, sorted


def _iso(hour: int) -> str:
    return datetime.fromtimestamp(hour * HOUR, timezone.utc).isoformat()


def _hours(lo: str, hi: str) -> tuple[int, int]:
    """The hours a stale range [lo, hi] (ISO instants, both inside: a charge at `hi` on the
    hour is in the hour `hi` starts) touches."""
    a = int(from_iso(lo).timestamp()) // HOUR
    b = int(from_iso(hi).timestamp()) // HOUR + 1
    return a, max(b, a + 1)


def _row(a: int, b: int) -> tuple[str, str]:
    """The stale row of hours [a, b) (`_hours` reads it back as that)."""
    return _iso(a), datetime.fromtimestamp(b * HOUR - 1, timezone.utc).isoformat()


def _merge(ranges: Ranges) -> Ranges:
    out: Ranges = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _intersect(ranges: Ranges, a: int, b: int) -> Ranges:
    return [(max(x, a), min(y, b)) for x, y in ranges if x < b and y > a]


def _subtract(ranges: Ranges, cut: Ranges) -> Ranges:
    out: Ranges = []
    for x, y in ranges:
        pieces = [(x, y)]
        for a, b in cut:
            pieces = [p for s, e in pieces for p in ((s, min(e, a)), (max(s, b), e)) if p[0] < p[1]]
        out += pieces
    return out


def stale(db: sqlite_utils.Database) -> Ranges | None:
    """The stale hours, merged; None when there are too many rows to read at once."""
    rows = db.execute(f"SELECT lo, hi FROM spend_stale LIMIT {_MANY + 1}").fetchall()
    if len(rows) > _MANY:
        return None
    return _merge([_hours(lo, hi) for lo, hi in rows])


def clean(db: sqlite_utils.Database, a: int, b: int) -> bool:
    """Whether hours [a, b) of the rollup are up to date (read inside the caller's snapshot)."""
    ranges = stale(db)
    return ranges is not None and not _intersect(ranges, a, b)


def _numbers(db: sqlite_utils.Database, count: int) -> None:
    """temp.rollup_numbers holds 0..count-1 at least (the hours of the longest rental)."""
    db.execute("CREATE TEMP TABLE IF NOT EXISTS rollup_numbers (k INTEGER PRIMARY KEY)")
    have = db.execute("SELECT COALESCE(MAX(k) + 1, 0) FROM temp.rollup_numbers").fetchone()[0]
    if have < count:
        db.execute(
            "INSERT INTO temp.rollup_numbers (k) WITH RECURSIVE n(k) AS (SELECT ? UNION ALL "
            "SELECT k + 1 FROM n WHERE k + 1 < ?) SELECT k FROM n",
            [have, count],
        )


def derive(db: sqlite_utils.Database, a: int, b: int) -> None:
    """Recompute hours [a, b) of the rollup (inside the caller's write transaction)."""
    longest = int(db.execute("SELECT MAX(span_s) FROM rentals").fetchone()[0] or 0)
    _numbers(db, longest // HOUR + 2)
    db.execute("DELETE FROM spend_hours WHERE hour >= ? AND hour < ?", [a, b])
    # rentals up to a month long by the start index from a month before; the few longer ones
    # by the span index (one rental of years must not widen every write's search to all)
    near = min(longest, NEAR_S)
    args = {"a": a, "b": b, "lo": _iso(a), "hi": _iso(b), "near": near,
            "since": _iso(a - near // HOUR - 1)}  # fmt: skip
    db.execute(_DERIVE, args)


def refresh(
    db: sqlite_utils.Database,
    window: tuple[int, int] | None = None,
    limit_hours: int | None = None,
    *,
    collapse: bool = True,
) -> bool:
    """Re-derive the stale hours (those inside `window` only, when given) inside the caller's
    write transaction; the rest stay stale. False, with nothing re-derived, when they number
    more than `limit_hours`, or when there are too many stale rows and `collapse` is off (a
    quick writer does not merge a big import's rows: `catch_up` will)."""
    ranges = stale(db)
    if ranges is None:
        if not collapse:
            return False
        lo, hi = db.execute("SELECT MIN(lo), MAX(hi) FROM spend_stale").fetchone()
        ranges = [_hours(lo, hi)]
        db.execute("DELETE FROM spend_stale")
        db.execute("INSERT INTO spend_stale (lo, hi) VALUES (?, ?)", _row(*ranges[0]))
    if not ranges:
        return True
    todo = _intersect(ranges, *window) if window else ranges
    if limit_hours is not None and sum(b - a for a, b in todo) > limit_hours:
        return False
    if not todo:
        return True
    for a, b in todo:
        derive(db, a, b)
    db.execute("DELETE FROM spend_stale")
    db.conn.executemany(
        "INSERT INTO spend_stale (lo, hi) VALUES (?, ?)",
        [_row(a, b) for a, b in _subtract(ranges, todo)],
    )
    return True


# what a table's rows say about time, for `mark_written`: the instants its triggers mark stale
_SPANS = {"rentals": ("started_at", "COALESCE(ended_at, started_at)"), "charges": ("at", "at")}


def drop_triggers(db: sqlite_utils.Database, table: str) -> list[str]:
    """Drop the rollup's triggers on `table` (inside the caller's write transaction: no other
    writer sees the table without them); their CREATE statements, to run again after. A
    bulk import writes without them (a stale row per row written was a tenth of its time) and
    marks what it wrote stale once, with `mark_written`."""
    rows = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? "
        "AND name LIKE ? ORDER BY name",
        [table, f"{table}_rollup_%"],
    ).fetchall()
    for name, _sql in rows:
        db.execute(f'DROP TRIGGER "{name}"')
    return [str(sql) for _name, sql in rows]


def mark_written(db: sqlite_utils.Database, table: str, after_id: int) -> None:
    """Mark stale, as one range, the time of every row of `table` with an id above `after_id`
    (rows written while its triggers were dropped)."""
    lo, hi = _SPANS[table]
    db.execute(
        f"INSERT INTO spend_stale (lo, hi) SELECT MIN({lo}), MAX({hi}) FROM {table} "
        f"WHERE id > ? HAVING COUNT(*) > 0",
        [after_id],
    )


def catch_up(
    store: Store, max_seconds: float | None = None, chunk_hours: int = CHUNK_HOURS
) -> bool:
    """Re-derive every stale hour, a week per transaction (writers wait at most that long),
    until none is left (True) or `max_seconds` have passed (False). For a thread that is not
    the GUI's: after a migration or a big import this is seconds of work."""
    deadline = None if max_seconds is None else time.monotonic() + max_seconds
    while True:
        with store.transaction() as db:
            if db.execute("SELECT 1 FROM spend_stale LIMIT 1").fetchone() is None:
                return True
            ranges = stale(db)
            if ranges is None:
                refresh(db, (0, 0))  # merge the rows only
                ranges = stale(db) or []
            if ranges:
                a = ranges[0][0]
                refresh(db, (a, min(ranges[0][1], a + chunk_hours)))
        if deadline is not None and time.monotonic() >= deadline:
            return db.execute("SELECT 1 FROM spend_stale LIMIT 1").fetchone() is None
