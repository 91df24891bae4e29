"""Budgets and alerts with an injected clock: each crossing once, also across a restart."""

from datetime import datetime, timedelta, timezone

import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.notifier import Level, Notifier
from gpu_companion.core.spend.alerts import SpendAlerts, idle_cost_message
from gpu_companion.core.spend.budgets import Budgets
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.storage.store import Store


def _ids(ledger):
    return (
        ledger.store.db.execute("SELECT id FROM platforms").fetchone()[0],
        ledger.store.db.execute("SELECT id FROM hosts").fetchone()[0],
    )


def _alerts(ledger, **kw):
    notifier = Notifier()
    got = []
    notifier.subscribe(got.append)
    return SpendAlerts(ledger, notifier, **kw), got


def test_budget_thresholds_fire_once_each_per_period_also_across_a_restart(ledger, manual_clock):
    pid, hid = _ids(ledger)
    Budgets(ledger).set_budget("day", "10", "USD")
    ledger.store.set_setting("alerts.quiet_hour", "")
    alerts, got = _alerts(ledger)
    ledger.start_rental(pid, "1", host_id=hid)  # $1/h from 09:00
    fired = []
    for _ in range(14):  # every 10 minutes until 11:20... then a restart, then the rest
        manual_clock.advance(minutes=10)
        fired += [m.text for m in alerts.check()]
    assert len(fired) == 0  # $2.33 spent: under 50%

    path = ledger.store.path
    for _ in range(3):
        manual_clock.advance(hours=1)  # $3.33, $4.33, $5.33: crosses 50%
        alerts.check()
    ledger.store.close()
    restarted = SpendLedger(Store(path), manual_clock, tz=timezone.utc)
    alerts2, got2 = _alerts(restarted)
    for _ in range(24):
        manual_clock.advance(minutes=20)  # on to 22:20: $13.33
        alerts2.check()
    texts = [m.text for m in got + got2]
    assert [t.split(":")[1].strip().split()[0] for t in texts] == ["50%", "80%", "100%"]
    assert "Daily budget (all platforms): 50% used — $5.33 of $10.00." in texts[0]
    assert "runs out" in texts[0] and "runs out" not in texts[2]
    assert [m.level for m in got + got2][-1] is Level.ERROR
    before = len(got2)
    manual_clock.advance(hours=10)  # 08:20 the next day: $8.33 today, past 50% and 80% at once
    alerts2.check()
    assert [m.text.split()[4] for m in got2[before:]] == ["80%"]  # says the highest, once
    alerts2.check()
    assert len(got2) == before + 1
    restarted.store.close()


def test_forecast_of_when_the_burn_rate_crosses_the_monthly_budget(ledger, manual_clock):
    pid, hid = _ids(ledger)
    budgets = Budgets(ledger)
    b = budgets.set_budget("month", "100", "USD", platform_id=pid, thresholds="50, 80, 100")
    assert b.title == "Monthly budget (vast.ai)"
    ledger.start_rental(pid, "2.50", host_id=hid)
    manual_clock.advance(hours=4)
    st = budgets.status(b)
    assert (st.spent_minor, st.percent, st.state) == (1000, 10, "ok")
    assert st.forecast == manual_clock.now() + timedelta(hours=36)
    assert budgets.overall_state() == "ok"
    manual_clock.advance(hours=30)
    assert budgets.overall_state() == "warning"
    manual_clock.advance(hours=6)
    assert budgets.overall_state() == "over"
    for bad in ("0", "-5", "ten"):
        with pytest.raises(ValidationError):
            budgets.set_budget("month", bad, "USD")
    with pytest.raises(ValidationError):
        budgets.set_budget("year", "5", "USD")
    with pytest.raises(ValidationError):
        budgets.set_budget("month", "5", "USD", thresholds="50, lots")
    assert len(budgets.all()) == 1


def test_planned_runtime_warns_15_minutes_before_and_when_past(ledger, manual_clock):
    pid, hid = _ids(ledger)
    ledger.store.set_setting("alerts.quiet_hour", "")
    alerts, got = _alerts(ledger)
    ledger.start_rental(pid, "2", host_id=hid, max_runtime=timedelta(hours=2))
    manual_clock.advance(minutes=100)
    assert alerts.check() == []
    manual_clock.advance(minutes=6)  # 14 min left
    (soon,) = alerts.check()
    assert "reaches its planned runtime in 14 min" in soon.text
    manual_clock.advance(minutes=5)
    assert alerts.check() == []
    manual_clock.advance(minutes=20)
    (late,) = alerts.check()
    assert "vast-4090 is 11 min past its planned runtime" in late.text and "$2.00/h" in late.text
    assert alerts.check() == []
    assert [m.key for m in got] == ["runtime:1", "runtime:1"]


def test_left_on_overnight_once_per_night(ledger, manual_clock):
    pid, hid = _ids(ledger)
    alerts, got = _alerts(ledger)
    alerts.set_quiet_hour("23:00")
    with pytest.raises(ValueError, match="not a time"):
        alerts.set_quiet_hour("late")
    ledger.start_rental(pid, "1.5", host_id=hid)
    manual_clock.set(datetime(2025, 1, 15, 22, 59, tzinfo=timezone.utc))
    assert alerts.check() == []
    for _ in range(6):
        manual_clock.advance(minutes=30)
        alerts.check()
    (night,) = got
    assert "still running at 23:00 — left on overnight?" in night.text
    manual_clock.advance(days=1)
    alerts.check()
    assert len(got) == 2


def test_snooze_and_mute_are_per_rental(ledger, manual_clock):
    pid, hid = _ids(ledger)
    alerts, got = _alerts(ledger)
    r = ledger.start_rental(pid, "1", host_id=hid, max_runtime=timedelta(minutes=30))
    other = ledger.start_rental(pid, "1", max_runtime=timedelta(minutes=30))
    alerts.snooze(r.id, "runtime", timedelta(hours=1))
    alerts.mute(other.id, "runtime")
    manual_clock.advance(minutes=40)
    assert alerts.check() == []
    manual_clock.advance(minutes=30)  # the snooze is over: the alert comes, the mute holds
    (late,) = alerts.check()
    assert late.key == f"runtime:{r.id}"
    with pytest.raises(ValueError):
        alerts.mute(r.id, "everything")


def test_idle_gpu_on_a_billed_rental_says_what_it_costs(ledger, manual_clock):
    pid, hid = _ids(ledger)
    alerts, got = _alerts(ledger)
    assert alerts.on_idle("vast-4090", manual_clock.now()) is None  # nothing billed
    r = ledger.start_rental(pid, "8", host_id=hid, currency="CNY")
    since = manual_clock.now()
    manual_clock.advance(hours=3)
    msg = alerts.on_idle("vast-4090", since)
    assert msg is not None and msg.key == "idle:vast-4090"
    assert msg.text.startswith("3 h idle = ¥24 so far on vast-4090 (¥8/h)")
    assert alerts.on_idle("vast-4090", since) is None  # the same idle stretch: once
    assert idle_cost_message(r, 45).startswith("45 min idle = ¥6 so far")
    alerts.mute(r.id, "idle")
    assert alerts.on_idle("vast-4090", manual_clock.now()) is None
    assert len(got) == 1


def test_spot_rental_without_a_recent_checkpoint_sync(ledger, manual_clock):
    pid, hid = _ids(ledger)
    syncs = {}
    ledger.store.set_setting("alerts.quiet_hour", "")
    alerts, got = _alerts(ledger, last_sync=syncs.get)
    ledger.start_rental(pid, "0.5", host_id=hid, billing_mode="spot")
    manual_clock.advance(minutes=20)
    assert alerts.check() == []
    manual_clock.advance(minutes=15)
    (never,) = alerts.check()
    assert "no checkpoint synced since it started" in never.text
    syncs[hid] = manual_clock.now()
    manual_clock.advance(minutes=29)
    assert alerts.check() == []
    manual_clock.advance(minutes=2)
    (stale,) = alerts.check()
    assert "for 31 min" in stale.text
    assert alerts.check() == []


def test_a_hosts_idle_minutes_are_kept_by_host_id_and_junk_reads_as_none(store):
    from gpu_companion.core.spend.alerts import IDLE_MINUTES, idle_minutes, save_idle_minutes

    assert idle_minutes(store, 7) is None  # not set: the monitor's default applies
    save_idle_minutes(store, 7, 40)
    assert (idle_minutes(store, 7), idle_minutes(store, 8)) == (40.0, None)
    for junk in ("0", "-5", "abc", ""):
        store.set_setting(f"{IDLE_MINUTES}7", junk)
        assert idle_minutes(store, 7) is None
