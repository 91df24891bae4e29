"""The Monitor hub: minutes persisted and reloaded, an idle stretch carried over a restart."""

from __future__ import annotations

import time

from gpu_companion.core.monitor.collector import SamplesEvent, TimedSample
from gpu_companion.core.monitor.hints import HintConfig
from gpu_companion.core.monitor.live import HintEvent, Monitor
from gpu_companion.core.monitor.nvsmi import GpuSample

T0 = 1_800_000_000.0  # a minute boundary


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def _tick(t: float, util: int) -> SamplesEvent:
    samples = tuple(TimedSample(t, GpuSample(index=g, utilization_gpu=util, memory_used_mib=10,
                                             memory_total_mib=100)) for g in range(2))  # fmt: skip
    return SamplesEvent("gpu1", samples)


def _monitor(store, clock):  # type: ignore[no-untyped-def]
    return Monitor(None, store=store, clock=clock, is_billed=lambda alias: True,
                   hint_config=HintConfig(idle_util_pct=10, idle_minutes=15))  # fmt: skip


def test_minutes_and_an_idle_stretch_survive_a_restart(store):
    clock = Clock(T0 + 13 * 60)
    first = _monitor(store, clock)
    for s in range(0, 13 * 60 + 1, 10):  # 13 idle minutes, one sample every 10 s
        first.ingest(_tick(T0 + s, 2))
    first.stop()
    saved = store.db.execute("SELECT count(*), max(util_max) FROM gpu_minutes").fetchone()
    assert saved == (2 * 14, 2.0)  # 13 full minutes and the open one, per GPU

    clock.now += 60  # the app restarts a minute later
    second = _monitor(store, clock)
    events: list = []
    second.subscribe(events.append)
    second.ingest(_tick(clock.now, 1))
    t, v = second.history("gpu1").series(0, since=0)
    assert len(t) == 14 + 1 and t[0] == T0 + 30 and (v[:14, 0] == 2).all()
    assert not [e for e in events if isinstance(e, HintEvent)]  # 14 minutes: not yet
    clock.now += 2 * 60
    second.ingest(_tick(clock.now, 1))
    (hint,) = [e.hint for e in events if isinstance(e, HintEvent)]
    assert hint.key == "idle:gpu1" and "for 16 minutes" in hint.text
    second.stop()


def test_old_minutes_are_pruned_when_a_host_is_first_seen(store):
    clock = Clock(T0)
    old = _monitor(store, clock)
    old.ingest(_tick(T0 - 8 * 86400, 50))
    old.stop()
    assert store.db.execute("SELECT count(*) FROM gpu_minutes").fetchone()[0] == 2
    fresh = _monitor(store, clock)
    fresh.ingest(_tick(T0, 50))
    assert store.db.execute("SELECT count(*) FROM gpu_minutes").fetchone()[0] == 0
    fresh.stop()


def test_a_busy_tick_of_a_billed_host_costs_one_statement_as_the_app_wires_it(app_paths):
    """Services' monitor with its glue (billing from the ledger, auto-release fed by it): each
    tick of each watched host (100 hosts at 1 Hz) runs on the collector's thread, so what it reads
    is counted per tick: the auto-release policy only (billing is asked only of idle hosts)."""
    from gpu_companion.core.hosts.registry import Host, Platform
    from gpu_companion.services import build_services

    services = build_services(app_paths)
    try:
        platform = services.registry.save_platform(Platform("cloud"))
        for i in range(20):
            box = Host(f"gpu{i}", f"10.0.0.{i + 1}", platform_id=platform.id)
            host = services.registry.save_host(box)
            services.ledger.start_rental(platform.id, "2.50", host_id=host.id)
        monitor = services.monitor()
        services.autorelease  # noqa: B018 - subscribes itself to the monitor, as at launch
        now = time.time()
        t0 = now - now % 60  # ticks inside one minute: no minute is saved meanwhile
        monitor.ingest(_busy("gpu1", t0))  # first sight: the host's minutes are loaded
        statements: list[str] = []
        conn = services.store.db.conn  # this thread's: the one the glue reads with
        conn.set_trace_callback(statements.append)
        try:
            for s in range(1, 31):
                monitor.ingest(_busy("gpu1", t0 + s))
        finally:
            conn.set_trace_callback(None)
        assert len(statements) <= 30, statements
        assert monitor.history("gpu1").version >= 31 * 8
    finally:
        services.close()


def _busy(alias: str, t: float) -> SamplesEvent:
    return SamplesEvent(alias, tuple(
        TimedSample(t, GpuSample(index=g, utilization_gpu=95, memory_used_mib=10,
                                 memory_total_mib=100, power_draw_w=400.0, power_limit_w=700.0))
        for g in range(8)))  # fmt: skip
