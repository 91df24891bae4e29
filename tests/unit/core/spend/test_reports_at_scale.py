"""Reports that stay quick after a year of use (issue 30): the chart summed by SQLite bucket by
bucket gives what metering each rental in Python gives, and the queries behind the reports and
the Spend page's filters read indexes, never the whole rentals table."""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import datetime, timedelta, timezone, tzinfo
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from gpu_companion.core.common.clock import ManualClock, to_iso
from gpu_companion.core.hosts.registry import HostRegistry, Platform
from gpu_companion.core.spend import reports
from gpu_companion.core.spend.ledger import (
    DISTINCT_SQL,
    HistoryFilter,
    SpendLedger,
    insert_rows,
    rental_row,
)
from gpu_companion.core.spend.metering import Rental, bucket_label, bucket_start, next_bucket

UTC = timezone.utc
NOW = datetime(2025, 11, 20, 12, 0, tzinfo=UTC)


def _fill(store, n: int = 600) -> None:  # type: ignore[no-untyped-def]
    """Rentals of 10 minutes to 3 days around the spring and autumn clock changes, some still
    running, some stored without a cost (an old import), and charges."""
    reg = HostRegistry(store)
    rng = random.Random(30)
    plats = [
        reg.save_platform(Platform("vast.ai", "", "second", "USD")),
        reg.save_platform(Platform("AutoDL", "", "hour", "CNY")),
    ]
    rows, charges = [], []
    for i in range(n):
        p = plats[i % 2]
        start = NOW - timedelta(days=rng.uniform(0, 300), seconds=rng.randrange(3600))
        start = start.replace(microsecond=0)
        end = start + timedelta(seconds=rng.choice((600, 3600, 7200, 30000, 90000, 260000)))
        r = Rental(p.id or 0, Decimal(rng.choice(("0.39", "2.49", "8.00"))), p.currency, start,
                   granularity=p.billing_granularity, ended_at=None if i % 97 == 0 else end,
                   tag=f"exp{i % 7}", gpu_model=("RTX 4090", "H100")[i % 2])  # fmt: skip
        if r.ended_at is not None and r.ended_at <= NOW:
            r = Rental(**{**r.__dict__, "cost_minor": None if i % 53 == 0 else r.cost_at(end)})
        elif r.ended_at is not None:
            r = Rental(**{**r.__dict__, "ended_at": None})  # still running at NOW
        rows.append(rental_row(r))
        at = NOW - timedelta(days=rng.uniform(0, 300))
        charges.append({"platform_id": p.id, "kind": "storage", "amount_minor": 100 + i,
                        "currency": p.currency, "at": to_iso(at), "description": ""})  # fmt: skip
    with store.transaction() as db:
        insert_rows(db, "rentals", rows)
        insert_rows(db, "charges", charges)


def _naive(ledger: SpendLedger, start: datetime, end: datetime, bucket: str):  # type: ignore[no-untyped-def]
    """Every rental metered in Python over the buckets it overlaps (ledger_scale's naive way)."""
    now, tz = ledger.now(), ledger.tz
    out: dict[str, dict[tuple[str, str], int]] = defaultdict(lambda: defaultdict(int))
    for r in ledger.history(HistoryFilter(since=start, until=end)):
        b = bucket_start(max(r.started_at, start), bucket, tz)
        while b < min(r.ended_at or now, end):
            nb = next_bucket(b, bucket, tz)
            cost = r.cost_between(max(b, start), min(nb, end), now)
            out[bucket_label(b, bucket, tz)][(r.platform_name, r.currency)] += cost
            b = nb
    for c in ledger.charges(start, end):
        out[bucket_label(bucket_start(c.at, bucket, tz), bucket, tz)][
            (c.platform_name, c.currency)
        ] += c.amount_minor
    return {k: {kk: v for kk, v in d.items() if v} for k, d in out.items() if any(d.values())}


@pytest.mark.parametrize("tz", [UTC, timezone(timedelta(hours=8)), ZoneInfo("Europe/Berlin")])
@pytest.mark.parametrize("bucket", ["day", "week", "month"])
def test_the_chart_summed_in_sql_is_what_metering_each_rental_gives(store, tz: tzinfo, bucket):  # type: ignore[no-untyped-def]
    _fill(store)
    ledger = SpendLedger(store, ManualClock(NOW), tz=tz)
    start, end = NOW - timedelta(days=250), NOW - timedelta(days=3, hours=5)
    got = {k: v for k, v in reports.chart_data(ledger, start, end, bucket).items() if v}
    assert got == _naive(ledger, start, end, bucket)
    assert len(got) > 5


def _plan(store, sql: str, args=()) -> str:  # type: ignore[no-untyped-def]
    return " | ".join(r[3] for r in store.db.execute(f"EXPLAIN QUERY PLAN {sql}", args))


def test_the_chart_and_the_month_report_read_covering_indexes_only(store):  # type: ignore[no-untyped-def]
    _fill(store, 50)
    store.db.execute(reports._BUCKETS_TABLE)
    window = {"start": to_iso(NOW - timedelta(days=30)), "end": to_iso(NOW), "reach": 3}
    for sql in (reports._INSIDE, reports._CROSSING, reports._CHARGES):
        plan = _plan(store, sql, window if ":" in sql else {})
        assert "USING COVERING INDEX rentals_started_covering" in plan or (
            "USING COVERING INDEX charges_at_covering" in plan
        ), plan
        assert "SCAN r" not in plan and "SCAN c" not in plan, plan
    plan = _plan(store, reports._WHOLLY_INSIDE, ["2025-06-01", "2025-07-01", "2025-07-01"])
    assert "USING COVERING INDEX rentals_started_covering" in plan, plan


def test_the_filters_values_come_from_a_loose_index_scan(store):  # type: ignore[no-untyped-def]
    _fill(store, 100)
    ledger = SpendLedger(store, ManualClock(NOW), tz=UTC)
    assert ledger.distinct("gpu_model") == ["H100", "RTX 4090"]
    assert ledger.distinct("tag") == [f"exp{i}" for i in range(7)]
    assert ledger.distinct("currency") == ["CNY", "USD"]
    for column in ("gpu_model", "tag", "currency"):
        plan = _plan(store, DISTINCT_SQL.format(column=column))
        assert f"USING COVERING INDEX rentals_{column}" in plan, plan
        assert "SCAN rentals" not in plan, plan
    with pytest.raises(ValueError):
        ledger.distinct("notes")
