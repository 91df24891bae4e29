# ruff: noqa: F811  (the fixtures come from tests/harness/autorelease.py)
"""Auto-release against the harness: real sshd hosts, the nvidia-smi stand-in's scenarios, the
app's services as shipped (injected clock only), the real vastai client code against a local
server that answers like vast.ai's API, and the real release gate. No path releases with a
failing or stale checklist."""

from __future__ import annotations

import time

from tests.harness.autorelease import calls, rented, vast_api, wait_for_readings  # noqa: F401
from tests.harness.util import wait_for


def test_idle_is_notified_then_released_through_the_provider_cli_once_the_checklist_passes(
    rented, standin, vast_api
):
    s, host, rental, service, clock, marker, messages = rented
    standin.configure(util="idle")  # 0 %, 70 W of 700 W
    wait_for_readings(service)
    marker.write_text("saved\n")
    wait_for(lambda: service.detectors["box-a"].idle_since is not None, 30, "idle")
    clock.advance(1.1)
    service.tick()
    assert any("box-a: its GPUs are idle" in m and "released in 1 min" in m for m in messages)
    assert calls(vast_api) == []  # notified first, nothing done yet
    clock.advance(1.1)
    service.tick()
    assert calls(vast_api) == [["destroy", "instance", "4242"]]
    assert not s.ledger.running()  # the meter ended
    assert s.registry.host("box-a").state == "released"
    kinds = [r.kind for r in s.release.ledger.history("box-a")]
    assert "release" in kinds and "auto-notified" in kinds
    release = next(r for r in s.release.ledger.history("box-a") if r.kind == "release")
    assert release.release_command == (
        "ask vast.ai to destroy instance 4242, then read it back until vast.ai reports it gone",
    )
    assert "read back: gone" in release.command_output
    assert 4242 not in vast_api.instances  # the provider really has no such instance now


def test_a_failing_item_means_no_provider_call_and_a_repeated_alert(rented, standin, vast_api):
    s, host, rental, service, clock, marker, messages = rented
    standin.configure(util="idle")
    wait_for_readings(service)
    wait_for(lambda: service.detectors["box-a"].idle_since is not None, 30, "idle")
    clock.advance(1.1)
    service.tick()
    clock.advance(1.1)
    service.tick()  # the marker is missing: the checklist fails
    assert calls(vast_api) == []
    assert s.ledger.running() and s.registry.host("box-a").state == "active"
    assert any("was kept running" in m and "results saved" in m for m in messages)
    clock.advance(16)
    service.tick()
    assert calls(vast_api) == []
    assert sum("was kept running" in m for m in messages) == 2  # alerted again, escalating
    blocked = [r for r in s.release.ledger.history("box-a") if r.kind == "auto-blocked"]
    assert len(blocked) == 2 and "results saved" in blocked[0].failing_items[0]


def test_a_stalled_job_is_detected_and_a_busy_one_is_not(rented, standin, vast_api):
    s, host, rental, service, clock, marker, messages = rented
    standin.configure(util=100)  # busy: power follows utilisation
    wait_for_readings(service)
    time.sleep(1)
    clock.advance(2)
    service.tick()
    assert not [m for m in messages if "box-a:" in m]
    standin.configure(util=100, power=75.0)  # a hung collective: 100 % at idle power
    wait_for(lambda: service.detectors["box-a"].stall_since is not None, 30, "stall")
    clock.advance(1.1)
    service.tick()
    assert any("box-a: its job looks stalled" in m for m in messages)


def test_a_cut_connection_while_billed_raises_the_unreachable_alert(rented, standin, fleet):
    s, host, rental, service, clock, marker, messages = rented
    wait_for_readings(service)
    fleet.servers[0].kill_sessions()  # the instance vanished: live connections cut, no listener
    fleet.servers[0].stop()
    wait_for(lambda: "box-a" in service.reach.down_since, 30, "down")
    clock.advance(1.5)
    service.tick()
    assert not any("stopped answering" in m for m in messages)
    clock.advance(1)
    service.tick()
    alert = next(m for m in messages if "stopped answering" in m)
    assert "preempted or down?" in alert and "Last verified checkpoint sync: never" in alert
    assert "no answer" in s.ledger.running()[0].notes  # the ledger notes the gap


def test_a_sleep_jump_reports_what_the_idle_stretch_cost(rented, standin):
    s, host, rental, service, clock, marker, messages = rented
    standin.configure(util="idle")
    wait_for_readings(service)
    wait_for(lambda: service.detectors["box-a"].idle_since is not None, 30, "idle")
    mono = [100.0]
    service.sleep.mono = lambda: mono[0]
    service.tick()  # remembers the clocks
    clock.advance(5 * 60 + 10)  # the laptop slept 5 h 10 min: wall time moved, monotonic not
    service.tick()
    summary = next(m for m in messages if "While this computer slept" in m)
    assert "box-a was idle 5 h 10 min = $12.40" in summary
    assert any("box-a: its GPUs are idle" in m for m in messages)  # policies applied at once


def test_a_budget_reached_triggers_the_ladder(rented, standin, vast_api):
    from decimal import Decimal

    from gpu_companion.core.autorelease.policy import Policy
    from gpu_companion.core.autorelease.service import save_policy

    s, host, rental, service, clock, marker, messages = rented
    save_policy(s.store, host.id, Policy(idle_minutes=0, stall_minutes=0, notice_minutes=1))
    service.budgets = s.budgets
    standin.configure(util=90)
    wait_for_readings(service)
    service.tick()
    assert not any("box-a:" in m for m in messages)
    s.budgets.set_budget("month", Decimal("0.01"), "USD")  # already spent more than that
    s.ledger.add_charge(host.platform_id, "storage", "1.00", description="volume")
    service.tick()
    assert not any("box-a: its budget is reached" in m for m in messages)  # not asked for
    save_policy(s.store, host.id, Policy(idle_minutes=0, stall_minutes=0, notice_minutes=1,
                                         on_budget=True))  # fmt: skip
    service.tick()
    assert any("box-a: its budget is reached" in m for m in messages)


def test_a_refused_key_is_no_preemption_and_is_tried_again_once_the_key_is_back(
    rented, standin, fleet
):
    """The host answers "Permission denied": no "preempted or down?" alert; once the key is
    authorized again the monitor connects by itself (no restart)."""
    from gpu_companion.core.monitor.collector import HostState

    s, host, rental, service, clock, marker, messages = rented
    wait_for_readings(service)
    server = fleet.servers[0]
    authorized = server.authorized_keys.read_text()
    server.authorized_keys.write_text("")  # the key was removed at the provider
    server.kill_sessions()  # the next connection logs in again
    wait_for(lambda: s.monitor().status("box-a").state is HostState.AUTH_FAILED, 30,
             "auth failed")  # fmt: skip
    clock.advance(5)
    service.tick()
    assert not any("stopped answering" in m for m in messages)
    assert "box-a" not in service.reach.down_since
    server.authorized_keys.write_text(authorized)  # added back
    assert s.retry_refused_hosts() == ["box-a"]  # what the services do every minute
    wait_for(lambda: s.monitor().status("box-a").state is HostState.LIVE, 30, "live again")
