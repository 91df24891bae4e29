"""History: ring buffers, minute roll-up, the merged series, and the minutes table."""

from __future__ import annotations

import math

import numpy as np

from gpu_companion.core.monitor.history import HostHistory, MinuteStore, Ring
from gpu_companion.core.monitor.nvsmi import GpuSample


def _s(gpu: int, util: int | None, mem: int = 100) -> GpuSample:
    return GpuSample(index=gpu, utilization_gpu=util, memory_used_mib=mem, memory_total_mib=1000,
                     temperature_c=50, power_draw_w=100.0, power_limit_w=300.0)  # fmt: skip


def test_ring_keeps_the_newest_rows_in_order():
    ring = Ring(3, 1)
    for i in range(5):
        ring.append(float(i), [i * 10.0])
    t, v = ring.ordered()
    assert t.tolist() == [2.0, 3.0, 4.0] and v[:, 0].tolist() == [20.0, 30.0, 40.0]


def test_minutes_roll_up_and_series_merges_them_before_the_raw_samples():
    h = HostHistory("gpu1", raw_capacity=5)
    rows = []
    for i in range(180):  # three minutes at 1 Hz, utilisation 0..59 each minute
        row = h.add(6000.0 + i, _s(0, i % 60 if i != 30 else None))
        if row:
            rows.append(row)
    assert [r.minute for r in rows] == [100, 101]
    assert rows[0].samples == 60 and rows[0].util_max == 59
    assert rows[0].means[0] == sum(u for u in range(60) if u != 30) / 59  # None is not 0
    t, v = h.series(0, since=0)
    assert t.tolist() == [6030.0, 6090.0, 6175.0, 6176.0, 6177.0, 6178.0, 6179.0]
    assert v.shape == (7, 6) and v[-1, 0] == 59
    t, _ = h.series(0, since=6177)
    assert t.tolist() == [6177.0, 6178.0, 6179.0]
    (still_open,) = h.flush_open()
    assert still_open.minute == 102 and still_open.samples == 60


def test_missing_values_stay_missing():
    h = HostHistory("mig")
    h.add(60.0, GpuSample(index=0, memory_used_mib=5, memory_total_mib=10))
    _, v = h.series(0, 0)
    assert math.isnan(v[0, 0]) and v[0, 1] == 5
    assert h.gpus() == [0]


def test_minutes_are_saved_loaded_and_pruned(store):
    h = HostHistory("gpu1")
    rows = [r for i in range(125) if (r := h.add(60.0 * 1000 + i, _s(1, 5)))]
    minutes = MinuteStore(store, keep_days=1)
    minutes.save(rows)
    minutes.save(rows)  # idempotent
    loaded = minutes.load("gpu1", 0)
    assert [(r.gpu, r.minute, r.samples, r.util_max) for r in loaded] == [
        (1, 1000, 60, 5.0), (1, 1001, 60, 5.0)]  # fmt: skip
    again = HostHistory("gpu1")
    again.add_minutes(loaded)
    t, v = again.series(1, 0)
    assert t.tolist() == [60030.0, 60090.0] and np.allclose(v[:, 0], 5)
    assert minutes.prune(now=1001 * 60 + 86400 + 1) == 1
    assert [r.minute for r in minutes.load("gpu1", 0)] == [1001]
