"""The Monitor hub: minutes persisted and reloaded, an idle stretch carried over a restart."""

from __future__ import annotations

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
