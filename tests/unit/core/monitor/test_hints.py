"""Hint rules with an injected clock: each fires once per episode and clears when it ends."""

from __future__ import annotations

from gpu_companion.core.common.notifier import Notifier
from gpu_companion.core.monitor.counters import HostCounters
from gpu_companion.core.monitor.hints import HintConfig, HintEngine, throttle_reasons
from gpu_companion.core.monitor.nvsmi import ComputeApp, GpuSample


class Clock:
    now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _engine(**cfg):  # type: ignore[no-untyped-def]
    notifier, got, clock = Notifier(), [], Clock()
    notifier.subscribe(got.append)
    return HintEngine(notifier, HintConfig(**cfg), clock), got, clock


def _gpus(*utils, mem=100, total=1000, temp=50, reasons="0x0"):  # type: ignore[no-untyped-def]
    return [GpuSample(index=i, utilization_gpu=u, memory_used_mib=mem, memory_total_mib=total,
                      temperature_c=temp, extra={"clocks_event_reasons.active": reasons})
            for i, u in enumerate(utils)]  # fmt: skip


def test_idle_fires_once_per_episode_with_configurable_thresholds():
    engine, got, clock = _engine(idle_util_pct=20, idle_minutes=5)
    for _ in range(4):
        engine.on_samples("a", _gpus(10, 19))
        clock.now += 2 * 60
    assert [m.key for m in got] == ["idle:a"]  # after 6 minutes, once
    engine.on_samples("a", _gpus(10, 19))
    assert len(got) == 1
    engine.on_samples("a", _gpus(10, 25))  # busy again: the episode ends
    assert engine.active("a") == []
    engine.on_samples("a", _gpus(0, 0))
    clock.now += 6 * 60
    engine.on_samples("a", _gpus(0, 0))
    assert [m.key for m in got] == ["idle:a", "idle:a"]  # a second episode


def test_an_idle_hint_is_dated_from_the_start_of_the_stretch():
    # the spend alert prices the stretch from `since`: dated when it fired, it cost "$0"
    engine, _got, clock = _engine(idle_minutes=15)
    started = clock.now
    engine.on_samples("a", _gpus(0, 0))
    clock.now += 16 * 60
    [hint] = engine.on_samples("a", _gpus(0, 0))
    assert hint.since == started and "for 16 minutes" in hint.text


def test_a_hosts_own_idle_minutes_replace_the_default():
    notifier, got, clock = Notifier(), [], Clock()
    notifier.subscribe(got.append)
    own = {"a": 40.0}  # the wizard's "alert when idle for 40 min"; "b" has none
    engine = HintEngine(notifier, HintConfig(idle_minutes=15), clock,
                        idle_minutes_for=own.get)  # fmt: skip
    for alias in ("a", "b"):
        engine.on_samples(alias, _gpus(0))
    clock.now += 31 * 60
    for alias in ("a", "b"):
        engine.on_samples(alias, _gpus(0))
    assert [m.key for m in got] == ["idle:b"]
    clock.now += 10 * 60
    engine.on_samples("a", _gpus(0))
    assert [m.key for m in got] == ["idle:b", "idle:a"]


def test_idle_needs_a_reading_and_a_bill():
    engine, got, clock = _engine()
    engine.on_samples("mig", _gpus(None, None))
    clock.now += 3600
    engine.on_samples("mig", _gpus(None, None))
    free = HintEngine(None, HintConfig(), clock, is_billed=lambda alias: False)
    free.on_samples("b", _gpus(0))
    clock.now += 3600
    assert free.on_samples("b", _gpus(0)) == [] and got == []


def test_an_idle_stretch_survives_a_restart():
    engine, got, clock = _engine(idle_minutes=15)
    minute = int(clock.now // 60)
    engine.seed_idle("a", [(minute - m, 3.0) for m in range(12, 0, -1)] + [(minute - 20, 90.0)])
    engine.on_samples("a", _gpus(1))
    assert got == []
    clock.now += 4 * 60
    engine.on_samples("a", _gpus(1))
    assert [m.key for m in got] == ["idle:a"]
    stale, got2, clock2 = _engine(idle_minutes=15)
    stale.seed_idle("a", [(int(clock2.now // 60) - 60 + m, 0.0) for m in range(30)])  # old
    stale.on_samples("a", _gpus(0))
    assert got2 == []


def test_memory_full_and_throttling_per_gpu():
    engine, got, _ = _engine()
    engine.on_samples("a", _gpus(90, 90, mem=980, temp=86, reasons="0x0000000000000044"))
    keys = sorted(m.key for m in got)
    assert keys == ["memory:a:0", "memory:a:1", "throttle:a:0", "throttle:a:1"]
    assert "98% full" in got[0].text
    text = next(m.text for m in got if m.key == "throttle:a:0")
    assert "software power cap" in text and "hardware thermal slowdown" in text and "86 °C" in text
    engine.on_samples("a", _gpus(90, 90, mem=980, temp=86, reasons="0x44"))
    assert len(got) == 4
    engine.on_samples("a", _gpus(90, mem=100)[:1])  # GPU 0 recovers; GPU 1 not in this tick
    assert sorted(h.key for h in engine.active("a")) == ["memory:a:1", "throttle:a:1"]
    assert throttle_reasons(GpuSample(extra={"clocks_event_reasons.active": "junk"}), 85) == []


def test_io_bound_from_reads_or_iowait_only_when_utilisation_is_low():
    engine, got, clock = _engine()
    engine.on_samples("a", _gpus(30, 40))
    engine.on_poll("a", [], HostCounters(clock.now, read_bytes_per_s=50e6, iowait_pct=5), {}, "u")
    assert got == []
    engine.on_poll("a", [], HostCounters(clock.now, read_bytes_per_s=250e6), {}, "u")
    engine.on_poll("a", [], HostCounters(clock.now, iowait_pct=35), {}, "u")
    assert [m.key for m in got] == ["io:a"] and "GPUs at 35%" in got[0].text
    engine.on_samples("a", _gpus(90, 95))
    engine.on_poll("a", [], HostCounters(clock.now, read_bytes_per_s=900e6), {}, "u")
    assert engine.active("a") == []


def test_a_process_the_user_did_not_start():
    engine, got, clock = _engine()
    apps = [
        ComputeApp(pid=10, process_name="python"),
        ComputeApp(pid=11, process_name="miner"),
        ComputeApp(pid=12, process_name="ghost"),
        ComputeApp(pid=None, gpu_uuid="GPU-x"),
    ]
    owners = {10: "alice", 11: "bob"}
    engine.on_poll("a", apps, HostCounters(clock.now), owners, "alice")
    assert sorted(m.key for m in got) == ["foreign:a:11", "foreign:a:12", "foreign:a:GPU-x"]
    assert "user bob" in next(m.text for m in got if m.key == "foreign:a:11")
    assert "outside this machine's view" in next(m.text for m in got if m.key == "foreign:a:12")
    engine.on_poll("a", apps[:1], HostCounters(clock.now), owners, "alice")
    assert engine.active("a") == []
    engine.on_poll("a", apps, HostCounters(clock.now), {}, "alice")  # no ps: no opinion
    assert len(got) == 3


def test_billing_is_asked_only_while_every_gpu_is_idle():
    """`is_billed` reads the ledger: a busy host ticking at 1 Hz must not ask it every tick."""
    asked: list[str] = []
    clock = Clock()

    def billed(alias: str) -> bool:
        asked.append(alias)
        return True

    engine = HintEngine(None, HintConfig(idle_util_pct=5, idle_minutes=5), clock, billed)
    for _ in range(20):
        engine.on_samples("busy", _gpus(90, 3))  # one GPU busy: the host is not idle
        clock.now += 60
    assert asked == []
    for _ in range(7):
        engine.on_samples("idle", _gpus(0, 3))
        clock.now += 60
    assert len(asked) == 7 and [h.kind for h in engine.active("idle")] == ["idle"]
    engine.on_samples("idle", _gpus(50, 3))  # busy again: the episode ends without asking
    assert len(asked) == 7 and engine.active("idle") == []
