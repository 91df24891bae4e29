"""Idle needs low utilisation *and* low power with no compute process; stalled is busy
utilisation at idle power; each rule fires only after its minutes."""

from __future__ import annotations

from gpu_companion.core.autorelease.policy import Detector, Policy
from gpu_companion.core.monitor.nvsmi import ComputeApp, GpuSample

LIMIT = 700.0


def gpus(*pairs: tuple[int, float]) -> list[GpuSample]:
    return [
        GpuSample(index=i, utilization_gpu=u, power_draw_w=p, power_limit_w=LIMIT)
        for i, (u, p) in enumerate(pairs)
    ]


def feed(det: Detector, start: float, minutes: int, samples: list[GpuSample]) -> float:
    t = start
    for _ in range(minutes * 6 + 1):  # a reading every 10 s
        det.on_samples(t, samples)
        t += 10
    return t - 10


def rules(det: Detector, now: float, **kw: object) -> list[str]:
    return [t.rule for t in det.triggers(now, **kw)]  # type: ignore[arg-type]


def test_idle_fires_after_its_minutes_on_every_gpu_low_in_use_and_power():
    det = Detector(Policy(idle_minutes=30))
    now = feed(det, 0, 29, gpus((0, 70), (1, 65)))
    assert rules(det, now) == []
    now = feed(det, now + 10, 2, gpus((0, 70), (2, 66)))
    fired = det.triggers(now)
    assert [t.rule for t in fired] == ["idle"] and fired[0].since == 0
    assert "GPU0: 0 %, 70/700 W" in fired[0].readings


def test_zero_utilisation_at_high_power_is_not_idle():
    det = Detector(Policy(idle_minutes=1))
    now = feed(det, 0, 5, gpus((0, 420)))  # a kernel nvidia-smi samples between
    assert rules(det, now) == []


def test_one_busy_gpu_or_a_compute_process_keeps_the_host_working():
    det = Detector(Policy(idle_minutes=1))
    assert rules(det, feed(det, 0, 5, gpus((0, 70), (97, 610)))) == []
    det = Detector(Policy(idle_minutes=1))
    det.on_processes(0, [ComputeApp(pid=7, process_name="python", used_memory_mib=900)])
    assert rules(det, feed(det, 0, 5, gpus((0, 70)))) == []


def test_a_reading_without_power_never_counts_as_idle():
    det = Detector(Policy(idle_minutes=1))
    samples = [GpuSample(index=0, utilization_gpu=0, power_draw_w=None, power_limit_w=LIMIT)]
    assert rules(det, feed(det, 0, 5, samples)) == []


def test_busy_utilisation_at_idle_power_is_stalled_and_real_work_is_not():
    det = Detector(Policy(idle_minutes=0, stall_minutes=20))
    now = feed(det, 0, 21, gpus((100, 80), (100, 82)))  # a hung NCCL collective
    fired = det.triggers(now)
    assert [t.rule for t in fired] == ["stalled"]
    assert fired[0].readings.startswith("utilisation high at idle power")
    det = Detector(Policy(idle_minutes=0, stall_minutes=20))
    assert rules(det, feed(det, 0, 30, gpus((100, 650), (100, 640)))) == []


def test_going_back_to_work_resets_the_clock():
    det = Detector(Policy(idle_minutes=10))
    now = feed(det, 0, 8, gpus((0, 70)))
    now = feed(det, now + 10, 1, gpus((90, 600)))
    now = feed(det, now + 10, 8, gpus((0, 70)))
    assert rules(det, now) == []


def test_runtime_budget_forgotten_and_finished():
    det = Detector(Policy(idle_minutes=0, runtime_grace_minutes=30, forgotten_hours=12,
                          finished_session="train"))  # fmt: skip
    assert rules(det, 1000, planned_end=0) == []  # within the grace
    assert rules(det, 1800, planned_end=0) == ["max-runtime"]
    assert rules(det, 5, budget_reached="Monthly budget reached") == []  # not asked for
    det.policy = Policy(idle_minutes=0, on_budget=True)
    assert rules(det, 5, budget_reached="Monthly budget reached") == ["budget"]
    det.policy = Policy(idle_minutes=0, runtime_grace_minutes=30, forgotten_hours=12,
                        finished_session="train")  # fmt: skip
    assert rules(det, 12 * 3600, started_at=0) == ["forgotten"]
    assert rules(det, 12 * 3600, started_at=0, kept_since=4 * 3600) == []
    det.on_session_gone(50)
    assert rules(det, 60) == ["finished"]
