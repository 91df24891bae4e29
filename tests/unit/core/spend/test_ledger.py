"""The ledger on a real SQLite store and a manual clock: meters survive restarts, reports add up."""

from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.spend.ledger import HistoryFilter, SpendLedger
from gpu_companion.core.spend.reports import (
    burn_rate,
    chart_data,
    experiment_costs,
    period_report,
    report,
    today,
)
from gpu_companion.core.storage.store import Store


def _host_id(ledger):
    return ledger.store.db.execute("SELECT id FROM hosts").fetchone()[0]


def _platform_id(ledger):
    return ledger.store.db.execute("SELECT id FROM platforms").fetchone()[0]


def test_a_meter_started_before_a_restart_keeps_metering_after_it(ledger, manual_clock):
    r = ledger.start_rental(_platform_id(ledger), "2.40", host_id=_host_id(ledger))
    assert (r.currency, r.granularity, r.host_alias) == ("USD", "second", "vast-4090")
    path = ledger.store.path
    ledger.store.close()
    manual_clock.advance(hours=5)  # the app was closed (or the laptop slept) for five hours

    reopened = SpendLedger(Store(path), manual_clock, tz=timezone.utc)
    try:
        (again,) = reopened.running()
        assert again.cost_at(reopened.now()) == 1200
        ended = reopened.end_rental(again.id, reason="released", evidence={"checks": ["ok"]})
        assert (ended.cost_minor, ended.end_reason, ended.evidence) == (
            1200,
            "released",
            {"checks": ["ok"]},
        )
        manual_clock.advance(days=2)
        assert reopened.rental(again.id).cost_at(reopened.now()) == 1200
        assert not reopened.has_running()
    finally:
        reopened.store.close()


def test_bad_input_is_refused_with_the_field_named(ledger):
    pid = _platform_id(ledger)
    with pytest.raises(ValidationError) as exc:
        ledger.start_rental(pid, "-1")
    assert exc.value.field == "rate"
    with pytest.raises(ValidationError) as exc:
        ledger.start_rental(pid, "abc")
    assert exc.value.field == "rate" and "not a number" in exc.value.message
    with pytest.raises(ValidationError) as exc:
        ledger.start_rental(pid, "1", currency="XYZ")
    assert exc.value.field == "currency"
    with pytest.raises(ValidationError) as exc:
        ledger.start_rental(pid, "1", billing_mode="yearly")
    assert exc.value.field == "billing_mode"
    with pytest.raises(ValidationError):
        ledger.start_rental(999, "1")
    with pytest.raises(ValidationError):
        ledger.add_charge(pid, "traffic", "-3")
    assert ledger.history() == [] and ledger.charges() == []


def test_one_meter_per_host_and_one_stop_per_meter(ledger, manual_clock):
    r = ledger.start_rental(_platform_id(ledger), "1", host_id=_host_id(ledger))
    with pytest.raises(ValidationError, match="already being metered"):
        ledger.start_rental(_platform_id(ledger), "1", host_id=_host_id(ledger))
    manual_clock.advance(minutes=1)
    ledger.end_rental(r.id)
    with pytest.raises(UserError, match="already ended"):
        ledger.end_rental(r.id)
    assert ledger.running_for_host(_host_id(ledger)) is None


def test_month_report_splits_rentals_at_the_edges_and_adds_charges(ledger, manual_clock):
    pid = _platform_id(ledger)
    jan31 = datetime(2025, 1, 31, 20, 0, tzinfo=timezone.utc)
    # 20:00 Jan 31 -> 04:00 Feb 1 at $1/h: $4 in January, $4 in February
    r = ledger.start_rental(pid, "1", started_at=jan31)
    ledger.end_rental(r.id, at=jan31 + timedelta(hours=8))
    inside = ledger.start_rental(pid, "2", started_at=datetime(2025, 2, 3, tzinfo=timezone.utc))
    ledger.end_rental(inside.id, at=datetime(2025, 2, 3, 1, 30, tzinfo=timezone.utc))
    ledger.add_charge(pid, "storage", "5.00", at=datetime(2025, 2, 10, tzinfo=timezone.utc))
    ledger.add_charge(pid, "credit", "2", at=datetime(2025, 2, 11, tzinfo=timezone.utc))
    manual_clock.set(datetime(2025, 2, 28, 23, tzinfo=timezone.utc))
    running = ledger.start_rental(
        pid, "3", started_at=datetime(2025, 2, 28, 22, tzinfo=timezone.utc)
    )
    feb = period_report(ledger, "month")
    (line,) = feb.lines
    assert line.rentals == 3
    assert line.rentals_minor == 400 + 300 + 300
    assert line.charges_minor == 500 - 200
    assert line.hours == Decimal("6.50")
    assert feb.totals == {"USD": 1300}
    jan = report(
        ledger, datetime(2025, 1, 1, tzinfo=timezone.utc), datetime(2025, 2, 1, tzinfo=timezone.utc)
    )
    assert jan.totals == {"USD": 400}
    assert burn_rate(ledger) == {"USD": Decimal("3")}
    assert today(ledger) == {"USD": 300}
    assert ledger.running() == [running]


def test_chart_buckets_match_the_report(ledger, manual_clock):
    pid = _platform_id(ledger)
    lam = (
        ledger.store.db.table("platforms")
        .insert({"name": "Lambda", "currency": "USD", "billing_granularity": "minute"})
        .last_rowid
    )
    start = datetime(2025, 1, 6, 22, tzinfo=timezone.utc)  # Monday 22:00
    for day in range(10):
        r = ledger.start_rental(
            pid if day % 2 else lam, "1", started_at=start + timedelta(days=day)
        )
        ledger.end_rental(r.id, at=r.started_at + timedelta(hours=4))
    manual_clock.set(datetime(2025, 2, 1, tzinfo=timezone.utc))
    lo, hi = datetime(2025, 1, 1, tzinfo=timezone.utc), datetime(2025, 2, 1, tzinfo=timezone.utc)
    days = chart_data(ledger, lo, hi, "day")
    assert len(days) == 31
    assert days["2025-01-06"] == {("Lambda", "USD"): 200}
    assert days["2025-01-07"] == {("Lambda", "USD"): 200, ("vast.ai", "USD"): 200}
    weeks = chart_data(ledger, lo, hi, "week")
    assert weeks["2025-01-13"] == {("Lambda", "USD"): 600, ("vast.ai", "USD"): 800}
    months = chart_data(ledger, lo, hi, "month")
    assert sum(months["2025-01"].values()) == report(ledger, lo, hi).totals["USD"] == 4000


def test_history_filters_and_experiment_cost(ledger, manual_clock):
    pid = _platform_id(ledger)
    for i, (tag, outcome) in enumerate(
        [("lora-a", "success"), ("lora-a", "failure"), ("lora-a", "success"), ("sweep", "")]
    ):
        r = ledger.start_rental(pid, "2", gpu_model="RTX 4090" if i else "H100", tag=tag)
        manual_clock.advance(hours=1)
        ledger.end_rental(r.id)
        ledger.update_rental(r.id, outcome=outcome)
    assert [r.tag for r in ledger.history(HistoryFilter(tag="lora-a"))] == ["lora-a"] * 3
    assert len(ledger.history(HistoryFilter(gpu_model="H100"))) == 1
    assert ledger.distinct("tag") == ["lora-a", "sweep"]
    costs = {c.tag: c for c in experiment_costs(ledger)}
    assert (costs["lora-a"].runs, costs["lora-a"].successes) == (3, 2)
    assert costs["lora-a"].total_minor == 600
    assert costs["lora-a"].per_success_minor == 300
    assert costs["sweep"].per_success_minor is None
    with pytest.raises(ValidationError):
        ledger.update_rental(1, outcome="maybe")


def test_the_release_gate_ends_the_hosts_meter_with_its_evidence(ledger, manual_clock):
    from gpu_companion.core.hosts.registry import HostRegistry

    hid = _host_id(ledger)
    assert ledger.end_for_host(hid) is None  # nothing metered: nothing to end
    ledger.start_rental(_platform_id(ledger), "3", host_id=hid)
    manual_clock.advance(hours=2)
    evidence = {"override_reason": "provider outage", "failing": ["Checkpoints synced"]}
    ended = ledger.end_for_host(hid, reason="released (override)", evidence=evidence)
    assert (ended.cost_minor, ended.evidence, ended.end_reason) == (
        600,
        evidence,
        "released (override)",
    )
    HostRegistry(ledger.store).delete_host(hid)  # the history keeps the host's name
    assert ledger.history()[0].host_alias == "vast-4090"
    with pytest.raises(ValidationError, match="spend ledger has rentals"):
        HostRegistry(ledger.store).delete_platform(_platform_id(ledger))
    assert ledger.history()[0].platform_name == "vast.ai"
