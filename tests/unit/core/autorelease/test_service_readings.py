"""The auto-release service as the monitor feeds it: every tick of every watched host passes here,
so finding the host's policy is one indexed read, and a changed policy is seen at the next tick."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpu_companion.core.autorelease.policy import Policy
from gpu_companion.core.autorelease.service import save_policy
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.monitor.collector import SamplesEvent, TimedSample
from gpu_companion.core.monitor.nvsmi import GpuSample


@pytest.fixture
def services(app_paths):  # type: ignore[no-untyped-def]
    from gpu_companion.services import build_services

    s = build_services(app_paths)
    yield s
    s.close()


def _tick(alias: str, t: float) -> SamplesEvent:
    return SamplesEvent(alias, tuple(
        TimedSample(t, GpuSample(index=g, utilization_gpu=3, power_draw_w=50.0,
                                 power_limit_w=700.0)) for g in range(8)))  # fmt: skip


def test_a_tick_costs_one_indexed_read_and_a_changed_policy_is_seen(services):
    for i in range(30):  # listing every host to find one was the old cost of a tick
        services.registry.save_host(Host(f"box{i:02d}", f"10.0.0.{i + 1}"))
    host = services.registry.host("box07")
    service = services.autorelease
    policy = Policy(idle_minutes=20)
    save_policy(services.store, host.id, policy)

    statements: list[str] = []
    conn = services.store.db.conn  # this thread's connection: the one on_event reads with
    conn.set_trace_callback(statements.append)
    try:
        for t in range(5):
            service.on_event(_tick("box07", 1000.0 + t))
    finally:
        conn.set_trace_callback(None)
    assert len(statements) == 5, statements  # one read per tick, no second one for the setting
    det = service.detectors["box07"]
    assert det.policy == policy

    plan = " ".join(str(r[-1]) for r in services.store.db.execute(
        "EXPLAIN QUERY PLAN " + statements[0].replace("?", "''")).fetchall())  # fmt: skip
    assert "SCAN" not in plan, plan  # the hosts' alias index and the settings' key

    changed = replace(policy, idle_minutes=45)
    save_policy(services.store, host.id, changed)
    service.on_event(_tick("box07", 2000.0))
    assert service.detectors["box07"].policy == changed
    save_policy(services.store, host.id, None)
    service.on_event(_tick("box07", 2001.0))
    assert "box07" not in service.detectors  # auto-release switched off: no detector
    service.on_event(_tick("nobody", 2002.0))  # an alias no host has: nothing, no error
    assert "nobody" not in service.detectors
