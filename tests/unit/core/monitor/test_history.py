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


def test_minute_means_equal_the_numpy_accumulation_on_random_samples():
    """The minute accumulator adds plain floats (numpy per sample cost half of taking a sample
    in): the rows must be exactly those of the numpy masked sums it replaced, NaNs included."""
    import random

    from gpu_companion.core.monitor.history import METRICS, _MinuteAccumulator

    rng = random.Random(11)
    for _ in range(200):
        acc = _MinuteAccumulator(5)
        sums, counts, util_max = np.zeros(len(METRICS)), np.zeros(len(METRICS)), float("nan")
        for _ in range(rng.randint(1, 70)):
            values = tuple(float("nan") if rng.random() < 0.2 else rng.uniform(0, 90000) * 1.0001
                           for _ in METRICS)  # fmt: skip
            acc.add(values)
            arr = np.array(values)  # the replaced path, step by step
            ok = ~np.isnan(arr)
            sums[ok] += arr[ok]
            counts[ok] += 1
            if not np.isnan(arr[0]):
                util_max = arr[0] if np.isnan(util_max) else max(util_max, arr[0])
        with np.errstate(invalid="ignore", divide="ignore"):
            means = sums / counts
        row = acc.row("a", 0)
        for got, want in zip(row.means, means, strict=True):
            assert (math.isnan(got) and math.isnan(want)) or got == float(want)
        assert (math.isnan(row.util_max) and math.isnan(util_max)) or row.util_max == util_max
