"""The hourly spend rollup (issue 30): a chart or a report summed from it is exactly what the
rentals themselves give, in every zone a whole number of hours from UTC (summer time included),
after any write to the ledger, whoever makes it; other zones, and a window too stale to
re-derive on the spot, take the rentals' path."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone, tzinfo
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from gpu_companion.core.common.clock import ManualClock, to_iso
from gpu_companion.core.hosts.registry import HostRegistry, Platform
from gpu_companion.core.spend import reports, rollup
from gpu_companion.core.spend.ledger import SpendLedger, insert_rows, rental_row
from gpu_companion.core.spend.metering import Rental, period_of
from tests.unit.core.spend.test_reports_at_scale import _naive

UTC = timezone.utc
NOW = datetime(2025, 11, 20, 12, 0, tzinfo=UTC)
ZONES = [UTC, timezone(timedelta(hours=8)), ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York")]


def _fill(store, n: int = 400, seed: int = 13) -> list[int]:  # type: ignore[no-untyped-def]
    """Rentals of a minute to 9 days (some starting or ending on a whole hour, some of no
    length), around both clock changes; some still running, some without a cost; charges and
    credits, some on a whole hour. Returns the platform ids."""
    reg = HostRegistry(store)
    rng = random.Random(seed)
    plats = [
        reg.save_platform(Platform("vast.ai", "", "second", "USD")),
        reg.save_platform(Platform("AutoDL", "", "hour", "CNY")),
        reg.save_platform(Platform("RunPod", "", "minute", "USD")),
    ]
    rows, charges = [], []
    for i in range(n):
        p = plats[i % 3]
        start = NOW - timedelta(days=rng.uniform(1, 300), seconds=rng.randrange(3600))
        start = start.replace(microsecond=0)
        if i % 5 == 0:
            start = start.replace(minute=0, second=0)
        secs = rng.choice((0, 59, 600, 3600, 7200, 30000, 90000, 260000, 780000))
        end = start + timedelta(seconds=secs)
        r = Rental(p.id or 0, Decimal(rng.choice(("0.39", "2.49", "8.00", "0"))), p.currency,
                   start, granularity=p.billing_granularity, tag=f"exp{i % 5}",
                   ended_at=None if i % 41 == 0 else end)  # fmt: skip
        if r.ended_at is not None and r.ended_at <= NOW:
            r = Rental(**{**r.__dict__, "cost_minor": None if i % 37 == 0 else r.cost_at(end)})
        elif r.ended_at is not None:
            r = Rental(**{**r.__dict__, "ended_at": None})  # still running at NOW
        rows.append(rental_row(r))
        at = (NOW - timedelta(days=rng.uniform(0, 300))).replace(microsecond=0)
        if i % 4 == 0:
            at = at.replace(minute=0, second=0)
        amount = -250 if i % 9 == 0 else 100 + i
        charges.append({"platform_id": p.id, "kind": "credit" if amount < 0 else "storage",
                        "amount_minor": amount, "currency": p.currency, "at": to_iso(at),
                        "description": ""})  # fmt: skip
    with store.transaction() as db:
        insert_rows(db, "rentals", rows)
        insert_rows(db, "charges", charges)
    return [p.id or 0 for p in plats]


@contextmanager
def _sql(store) -> Iterator[list[str]]:  # type: ignore[no-untyped-def]
    """The statements this thread's connection runs meanwhile."""
    seen: list[str] = []
    store.db.conn.set_trace_callback(seen.append)
    try:
        yield seen
    finally:
        store.db.conn.set_trace_callback(None)


def _windows(tz: tzinfo, bucket: str) -> list[tuple[datetime, datetime]]:
    end = period_of(NOW, bucket, tz)[1]
    return [
        (period_of(NOW - timedelta(days=280), bucket, tz)[0], end),
        (NOW - timedelta(days=200), NOW - timedelta(days=3, hours=5)),  # edges inside buckets
    ]


def _by_rentals(ledger: SpendLedger, start: datetime, end: datetime, bucket: str):  # type: ignore[no-untyped-def]
    rows = reports._buckets(ledger, start, end, bucket)
    return reports._chart_by_rentals(ledger, start, end, bucket, rows)


@pytest.mark.parametrize("tz", ZONES, ids=str)
@pytest.mark.parametrize("bucket", ["day", "week", "month"])
def test_the_chart_from_the_rollup_is_the_chart_from_the_rentals(store, tz, bucket):  # type: ignore[no-untyped-def]
    _fill(store)
    assert rollup.catch_up(store, chunk_hours=24 * 40)
    ledger = SpendLedger(store, ManualClock(NOW), tz=tz)
    for start, end in _windows(tz, bucket):
        with _sql(store) as seen:
            got = reports.chart_data(ledger, start, end, bucket)
        assert any("spend_hours" in s for s in seen)  # it was summed from the rollup
        assert not any("JOIN rentals r ON r.started_at >= b.s" in s for s in seen)
        assert got == _by_rentals(ledger, start, end, bucket)  # zero entries and all
        assert {k: v for k, v in got.items() if v} == _naive(ledger, start, end, bucket)
        assert sum(len(v) for v in got.values()) > 10


@pytest.mark.parametrize("tz", ZONES, ids=str)
def test_the_reports_from_the_rollup_are_the_reports_from_the_rentals(store, tz):  # type: ignore[no-untyped-def]
    _fill(store)
    assert rollup.catch_up(store)
    ledger = SpendLedger(store, ManualClock(NOW), tz=tz)
    for bucket in ("day", "week", "month"):
        for days in range(0, 300, 7 if bucket == "day" else 23):
            start, end = period_of(NOW - timedelta(days=days), bucket, tz)
            with _sql(store) as seen:
                got = reports.report(ledger, start, end)
            assert any("spend_hours" in s for s in seen)
            assert got == reports._report_by_rentals(ledger, start, end)


def test_a_zone_half_an_hour_off_utc_takes_the_rentals_path(store):  # type: ignore[no-untyped-def]
    _fill(store)
    assert rollup.catch_up(store)
    tz = timezone(timedelta(hours=5, minutes=30))
    ledger = SpendLedger(store, ManualClock(NOW), tz=tz)
    for bucket in ("day", "month"):
        start, end = _windows(tz, bucket)[0]
        with _sql(store) as seen:
            got = reports.chart_data(ledger, start, end, bucket)
        assert not any("spend_hours" in s for s in seen)
        assert {k: v for k, v in got.items() if v} == _naive(ledger, start, end, bucket)
    start, end = period_of(NOW - timedelta(days=40), "month", tz)
    with _sql(store) as seen:
        rep = reports.report(ledger, start, end)
    assert not any("spend_hours" in s for s in seen)
    assert rep.lines and rep == reports._report_by_rentals(ledger, start, end)


def test_every_write_after_a_first_chart_is_in_the_next_one(store):  # type: ignore[no-untyped-def]
    """Writes through the ledger and writes straight to the tables (an import, another build):
    the triggers mark what they touched, the next chart re-derives it and equals the rentals."""
    plats = _fill(store, 300)
    assert rollup.catch_up(store)
    clock = ManualClock(NOW)
    ledger = SpendLedger(store, clock, tz=ZoneInfo("Europe/Berlin"))
    window = _windows(ledger.tz, "day")[0]
    first = reports.chart_data(ledger, *window, "day")
    running = ledger.running()
    long_ago = NOW - timedelta(days=100, minutes=17)
    # through the ledger: start and end a meter, add a long past rental, delete one, a charge
    # and a credit: each re-derives the hours it touched in its own transaction
    short = ledger.start_rental(plats[1], "2.20", started_at=NOW - timedelta(hours=30))
    ledger.end_rental(short.id or 0, at=NOW - timedelta(minutes=5))
    six_days = long_ago + timedelta(days=6, seconds=7)
    ledger.add_rental(
        Rental(plats[0], Decimal("3.10"), "USD", long_ago, ended_at=six_days, cost_minor=44_678)
    )
    victim = ledger.history()[50]
    ledger.delete_rental(victim.id or 0)
    charge = ledger.add_charge(plats[1], "fee", "12.34", at=long_ago)
    ledger.add_charge(plats[0], "credit", "5", at=NOW - timedelta(days=3))
    ledger.delete_charge(charge.id or 0)
    assert store.db.execute("SELECT COUNT(*) FROM spend_stale").fetchone()[0] == 0  # kept up
    # a meter that ran for months: too many hours to re-derive while the user waits
    ledger.end_rental(running[0].id or 0, at=NOW - timedelta(minutes=1))
    assert running[0].started_at < NOW - timedelta(days=40)
    assert store.db.execute("SELECT COUNT(*) FROM spend_stale").fetchone()[0] == 1
    # straight to the tables: a cost corrected, a rental moved, one dropped, a charge moved
    with store.transaction() as db:
        ids = [r[0] for r in db.execute("SELECT id FROM rentals WHERE cost_minor > 0 LIMIT 4")]
        db.execute("UPDATE rentals SET cost_minor = cost_minor * 3 + 1 WHERE id = ?", [ids[0]])
        db.execute(
            "UPDATE rentals SET started_at = ?, ended_at = ?, span_s = 5400 WHERE id = ?",
            [to_iso(long_ago), to_iso(long_ago + timedelta(seconds=5400)), ids[1]],
        )
        db.execute("UPDATE rentals SET platform_id = ? WHERE id = ?", [plats[2], ids[2]])
        db.execute("DELETE FROM rentals WHERE id = ?", [ids[3]])
        db.execute(
            "UPDATE charges SET at = ? WHERE id = (SELECT MIN(id) FROM charges)",
            [to_iso(NOW - timedelta(days=200))],
        )
        db.execute("UPDATE rentals SET cost_minor = NULL WHERE id = (SELECT MAX(id) FROM rentals)")
    assert store.db.execute("SELECT COUNT(*) FROM spend_stale").fetchone()[0] > 1
    again = reports.chart_data(ledger, *window, "day")  # too stale: the rentals' path
    assert again != first
    assert again == _by_rentals(ledger, *window, "day")
    assert rollup.catch_up(store)
    with _sql(store) as seen:
        assert reports.chart_data(ledger, *window, "day") == again
    assert any("spend_hours" in s for s in seen)
    for days in (5, 40, 100, 200):
        start, end = period_of(NOW - timedelta(days=days), "month", ledger.tz)
        assert reports.report(ledger, start, end) == reports._report_by_rentals(ledger, start, end)


def test_a_big_import_is_stale_until_caught_up_and_reports_stay_right(store):  # type: ignore[no-untyped-def]
    """More stale rows than are read at once: reports take the rentals' path (and never write),
    a chart too; `catch_up` re-derives everything a chunk per transaction, then they are quick."""
    _fill(store, 500)  # one row per rental and charge: 1000 > the rows read at once
    ledger = SpendLedger(store, ManualClock(NOW), tz=UTC)
    assert rollup.stale(store.db) is None
    start, end = period_of(NOW - timedelta(days=60), "month", UTC)
    with _sql(store) as seen:
        rep = reports.report(ledger, start, end)
    assert not any("spend_hours" in s for s in seen)
    assert not any(s.startswith(("INSERT", "DELETE", "BEGIN IMMEDIATE")) for s in seen)
    year = (NOW - timedelta(days=365), NOW)
    assert reports.chart_data(ledger, *year, "week") == _by_rentals(ledger, *year, "week")
    with _sql(store) as seen:
        assert rollup.catch_up(store, chunk_hours=24 * 30)
    assert sum(s == "BEGIN IMMEDIATE" for s in seen) > 5  # short transactions, not one
    assert rollup.stale(store.db) == []
    with _sql(store) as seen:
        assert reports.report(ledger, start, end) == rep
    assert any("spend_hours" in s for s in seen)
    assert reports.chart_data(ledger, *year, "week") == _by_rentals(ledger, *year, "week")


def test_a_chart_re_derives_only_its_window(store):  # type: ignore[no-untyped-def]
    _fill(store, 100)
    assert rollup.catch_up(store)
    ledger = SpendLedger(store, ManualClock(NOW), tz=UTC)
    with store.transaction() as db:
        db.execute("UPDATE rentals SET cost_minor = cost_minor + 1 WHERE cost_minor IS NOT NULL")
    before = rollup.stale(store.db)
    assert before and sum(b - a for a, b in before) > rollup.INLINE_HOURS
    middle = before[len(before) // 2][0] * 3600
    week = period_of(datetime.fromtimestamp(middle, UTC), "week", UTC)
    assert reports.chart_data(ledger, *week, "day") == _by_rentals(ledger, *week, "day")
    a, b = (int(t.timestamp()) // 3600 for t in week)
    after = rollup.stale(store.db)
    inside = rollup._intersect(before, a, b)
    assert inside and rollup.clean(store.db, a, b)
    assert after == rollup._subtract(before, inside)  # the rest stays stale


def test_a_negative_cost_is_split_as_metering_splits_it(store):  # type: ignore[no-untyped-def]
    """Rounded down like `Rental.booked_until` (SQLite's `/` rounds toward zero)."""
    [pid, *_] = _fill(store, 3)
    ledger = SpendLedger(store, ManualClock(NOW), tz=UTC)
    start = NOW - timedelta(days=10, minutes=13)
    ledger.add_rental(Rental(pid, Decimal("1"), "USD", start, ended_at=start + timedelta(
        hours=50, seconds=7), cost_minor=-1001))  # fmt: skip
    assert rollup.catch_up(store)
    window = (NOW - timedelta(days=12), NOW)
    got = reports.chart_data(ledger, *window, "day")
    assert {k: v for k, v in got.items() if v} == _naive(ledger, *window, "day")
    assert _by_rentals(ledger, *window, "day") == got  # the rentals path rounds down too
    hours = store.db.execute(
        "SELECT rentals_minor FROM spend_hours WHERE rentals_minor < 0 ORDER BY hour"
    ).fetchall()
    assert sum(h[0] for h in hours) == -1001 and len(hours) == 51


@pytest.mark.parametrize("cost", [10**13, -(10**13) - 7])
def test_a_cost_times_its_seconds_past_64_bits_is_split_exactly(store, cost):  # type: ignore[no-untyped-def]
    """The most an import allows ($100 bn) over two months: cost x seconds is past 2**63, where
    SQLite's integers turn into floats; each hour's share stays an exact integer."""
    [pid, *_] = _fill(store, 3)
    ledger = SpendLedger(store, ManualClock(NOW), tz=UTC)
    start = NOW - timedelta(days=70, minutes=13)
    ledger.add_rental(Rental(pid, Decimal("1"), "USD", start, ended_at=start + timedelta(
        days=61, seconds=7), cost_minor=cost))  # fmt: skip
    assert cost * 61 * 86400 > 2**63 or cost * 61 * 86400 < -(2**63)
    assert rollup.catch_up(store)
    hours = store.db.execute(
        "SELECT typeof(rentals_minor), rentals_minor FROM spend_hours WHERE abs(rentals_minor) "
        "> 1000000000 ORDER BY hour"
    ).fetchall()
    assert {t for t, _v in hours} == {"integer"} and sum(v for _t, v in hours) == cost
    window = (NOW - timedelta(days=75), NOW)
    got = reports.chart_data(ledger, *window, "day")
    assert {k: v for k, v in got.items() if v} == _naive(ledger, *window, "day")
    assert _by_rentals(ledger, *window, "day") == got
    month = period_of(start + timedelta(days=20), "month", UTC)
    assert reports.report(ledger, *month) == reports._report_by_rentals(ledger, *month)


def _plan(store, sql: str, args=()) -> str:  # type: ignore[no-untyped-def]
    return " | ".join(r[3] for r in store.db.execute(f"EXPLAIN QUERY PLAN {sql}", args))


def test_the_rollup_is_read_and_derived_through_indexes(store):  # type: ignore[no-untyped-def]
    _fill(store, 50)
    db = store.db
    db.execute(reports._BUCKETS_TABLE)
    plan = _plan(store, reports._HOURS_CHART)
    assert "SEARCH s USING PRIMARY KEY (hour>? AND hour<?)" in plan, plan
    assert "SEARCH spend_hours USING PRIMARY KEY (hour>? AND hour<?)" in _plan(
        store, reports._HOURS_REPORT, [1, 2]
    )
    plan = _plan(store, reports._USUAL_CROSSING_START, ["a", "b", "c"])
    assert "USING COVERING INDEX rentals_started_covering" in plan, plan
    plan = _plan(store, reports._UNROLLED, ["a", "b", "c"])
    assert "USING INDEX rentals_unrolled" in plan, plan
    plan = _plan(store, reports._RUNNING, ["a"])
    assert "SCAN r" not in plan, plan
    rollup._numbers(db, 10)
    args = {"a": 1, "b": 2, "lo": "a", "hi": "b", "since": "c", "near": 3600}
    plan = _plan(store, rollup._DERIVE, args)
    assert "USING COVERING INDEX rentals_started_covering (started_at>? AND started_at<?)" in plan
    # the rentals longer than a month: by the span index, not a search from the oldest start
    assert "USING INDEX idx_rentals_span_s (span_s>?)" in plan, plan
    assert "USING COVERING INDEX charges_at_covering (at>? AND at<?)" in plan, plan
    assert "SCAN r " not in plan + " " and "SCAN c " not in plan + " ", plan


def test_stale_ranges_merge_and_subtract():  # type: ignore[no-untyped-def]
    assert rollup._merge([(5, 7), (1, 3), (3, 4), (6, 9)]) == [(1, 4), (5, 9)]
    assert rollup._subtract([(1, 10), (20, 30)], [(3, 5), (8, 25)]) == [(1, 3), (5, 8), (25, 30)]
    assert rollup._intersect([(1, 10), (20, 30)], 5, 22) == [(5, 10), (20, 22)]
    t = "2025-01-01T10:00:00+00:00"
    h = int(datetime(2025, 1, 1, 10, tzinfo=UTC).timestamp()) // 3600
    assert rollup._hours(t, t) == (h, h + 1)  # a charge on the hour: that hour
    assert rollup._hours(t, "2025-01-01T12:00:01+00:00") == (h, h + 3)
    assert rollup._hours(t, "2025-01-01T12:00:00+00:00") == (h, h + 3)  # inclusive
    assert rollup._hours(*rollup._row(h, h + 2)) == (h, h + 2)  # written back as read


def test_a_stale_chart_with_another_writer_at_work_takes_the_rentals_path_at_once(store):  # type: ignore[no-untyped-def]
    """Another process holding the write lock (a long import): the chart does not wait out the
    busy timeout to re-derive its hours, it sums the rentals and leaves the rollup stale."""
    import sqlite3
    import threading

    pid = HostRegistry(store).save_platform(Platform("vast.ai", "", "second", "USD")).id
    ledger = SpendLedger(store, ManualClock(NOW), tz=UTC)
    s = NOW - timedelta(days=10)
    ledger.add_rental(Rental(pid or 0, Decimal("1"), "USD", s, ended_at=s + timedelta(hours=2),
                             cost_minor=500))  # fmt: skip
    with store.transaction() as db:  # a raw write: its hours stale until derived
        db.execute("UPDATE rentals SET cost_minor = 600")
    held, done = threading.Event(), threading.Event()

    def writer() -> None:
        other = sqlite3.connect(store.path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        held.set()
        done.wait(60)
        other.execute("ROLLBACK")
        other.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        held.wait(10)
        window = (NOW - timedelta(days=14), NOW)
        chart = reports.chart_data(ledger, *window, "day")  # raised "locked" after 30 s before
    finally:
        done.set()
        thread.join()
    assert sum(m for day in chart.values() for m in day.values()) == 600
    assert chart == _by_rentals(ledger, *window, "day")
    assert rollup.stale(store.db)  # left for the always-on loop
    assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000


def test_a_rental_with_fractions_of_a_second_spans_its_stored_instants(store):  # type: ignore[no-untyped-def]
    """Stored instants are whole seconds: the span the cost is spread over is theirs (it was
    taken before the cut, 3599 s for a stored hour, and the rollup split the cost unevenly)."""
    pid = HostRegistry(store).save_platform(Platform("vast.ai", "", "second", "USD")).id
    ledger = SpendLedger(store, ManualClock(NOW), tz=UTC)
    start = datetime(2025, 3, 10, 23, 30, 0, 700_000, tzinfo=UTC)
    r = ledger.add_rental(Rental(pid or 0, Decimal("1"), "USD", start,
                                 ended_at=datetime(2025, 3, 11, 0, 30, 0, 200_000, tzinfo=UTC),
                                 cost_minor=1_000_000))  # fmt: skip
    span = store.db.execute("SELECT span_s FROM rentals WHERE id = ?", [r.id]).fetchone()[0]
    assert span == 3600
    for day in (datetime(2025, 3, 10, tzinfo=UTC), datetime(2025, 3, 11, tzinfo=UTC)):
        window = (day, day + timedelta(days=1))
        assert reports.spend_between(ledger, *window) == {"USD": 500_000}
