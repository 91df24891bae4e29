"""Bounded history per GPU: a ring buffer of raw samples for the live window, per-minute aggregates
for 24 h. Minutes are persisted so the 24 h view and the idle rule survive a restart.

Writers are collector threads, the reader is the GUI's redraw timer: one lock per host, and
`series()` hands out copies, so a redraw never sees a half-written row.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpu_companion.core.monitor.nvsmi import MAX_GPUS_PER_HOST, GpuSample
from gpu_companion.core.storage.store import Store

Array = npt.NDArray[np.float64]
METRICS = ("util", "mem_used", "mem_total", "temp", "power", "power_limit")
RAW_CAPACITY = 3600  # samples per GPU: one hour at 1 Hz
MINUTE_CAPACITY = 24 * 60 + 5
NAN = float("nan")


def sample_values(s: GpuSample) -> tuple[float, ...]:
    def f(v: float | None) -> float:
        return NAN if v is None else float(v)

    return (
        f(s.utilization_gpu),
        f(s.memory_used_mib),
        f(s.memory_total_mib),
        f(s.temperature_c),
        f(s.power_draw_w),
        f(s.power_limit_w),
    )


class Ring:
    """Fixed-size rows of (t, values...); the oldest row is overwritten when full."""

    def __init__(self, capacity: int, width: int) -> None:
        self.t = np.full(capacity, NAN)
        self.v = np.full((capacity, width), NAN)
        self.n = 0  # rows ever written
        self.capacity = capacity

    def append(self, t: float, values: Iterable[float]) -> None:
        i = self.n % self.capacity
        self.t[i] = t
        self.v[i] = tuple(values)
        self.n += 1

    def ordered(self) -> tuple[Array, Array]:
        """Copies, oldest first."""
        if self.n <= self.capacity:
            return self.t[: self.n].copy(), self.v[: self.n].copy()
        i = self.n % self.capacity
        return np.concatenate((self.t[i:], self.t[:i])), np.concatenate((self.v[i:], self.v[:i]))


@dataclass(frozen=True)
class MinuteRow:
    """One GPU's minute: means of each metric (NaN when no reading), and the highest utilisation."""

    alias: str
    gpu: int
    minute: int  # epoch seconds // 60
    samples: int
    means: tuple[float, ...]  # in METRICS order
    util_max: float


class _MinuteAccumulator:
    """Sums of one GPU's minute. Plain floats: six values per sample, where numpy's per-call
    cost was half of taking a sample in (100 hosts x 8 GPUs a second); the same additions in
    the same order, so the same means."""

    def __init__(self, minute: int) -> None:
        self.minute = minute
        self.n = 0
        self.sums = [0.0] * len(METRICS)
        self.counts = [0] * len(METRICS)
        self.util_max = NAN

    def add(self, values: tuple[float, ...]) -> None:
        sums, counts = self.sums, self.counts
        for i, v in enumerate(values):
            if v == v:  # not NaN
                sums[i] += v
                counts[i] += 1
        self.n += 1
        util = values[0]
        if util == util:
            self.util_max = util if self.util_max != self.util_max else max(self.util_max, util)

    def row(self, alias: str, gpu: int) -> MinuteRow:
        means = tuple(s / c if c else NAN for s, c in zip(self.sums, self.counts, strict=True))
        return MinuteRow(alias, gpu, self.minute, self.n, means, float(self.util_max))


class HostHistory:
    """Every GPU of one host: raw ring, minute ring, the minute being built, the latest sample."""

    def __init__(self, alias: str, raw_capacity: int = RAW_CAPACITY) -> None:
        self.alias = alias
        self.raw_capacity = raw_capacity
        self._lock = threading.Lock()
        self._raw: dict[int, Ring] = {}
        self._minutes: dict[int, Ring] = {}  # columns: METRICS means, then util_max
        self._open: dict[int, _MinuteAccumulator] = {}
        self.latest: dict[int, GpuSample] = {}
        self.version = 0  # bumped on every change; the GUI redraws when it moved

    def gpus(self) -> list[int]:
        with self._lock:
            return sorted(set(self._raw) | set(self._minutes))

    def add(self, t: float, sample: GpuSample) -> MinuteRow | None:
        """Record one sample; returns the GPU's previous minute when this one starts a new one."""
        gpu = sample.index if sample.index is not None else 0
        values = sample_values(sample)
        minute = int(t // 60)
        done: MinuteRow | None = None
        with self._lock:
            ring = self._raw.get(gpu)
            if ring is None and len(self._raw) >= MAX_GPUS_PER_HOST:
                return None
            if ring is None:
                ring = self._raw[gpu] = Ring(self.raw_capacity, len(METRICS))
            ring.append(t, values)
            self.latest[gpu] = sample
            acc = self._open.get(gpu)
            if acc is not None and acc.minute != minute:
                done = acc.row(self.alias, gpu)
                self._add_minute_locked(done)
                acc = None
            if acc is None:
                acc = self._open[gpu] = _MinuteAccumulator(minute)
            acc.add(values)
            self.version += 1
        return done

    def add_minutes(self, rows: Iterable[MinuteRow]) -> None:
        """Minutes loaded from the store at start-up (oldest first)."""
        with self._lock:
            for row in rows:
                self._add_minute_locked(row)
            self.version += 1

    def _add_minute_locked(self, row: MinuteRow) -> None:
        ring = self._minutes.get(row.gpu)
        if ring is None and len(self._minutes) >= MAX_GPUS_PER_HOST:
            return
        if ring is None:
            ring = self._minutes[row.gpu] = Ring(MINUTE_CAPACITY, len(METRICS) + 1)
        ring.append(row.minute * 60 + 30, (*row.means, row.util_max))

    def series(self, gpu: int, since: float) -> tuple[Array, Array]:
        """(t, values[:, METRICS]) from `since` on: minute means where raw samples no longer
        reach back, raw samples after that. Copies, safe to plot while collectors write."""
        with self._lock:
            raw = self._raw.get(gpu)
            mins = self._minutes.get(gpu)
            rt, rv = raw.ordered() if raw is not None else (np.empty(0), np.empty((0, 6)))
            start_raw = float(rt[0]) if len(rt) else np.inf
            mt, mv = mins.ordered() if mins is not None else (np.empty(0), np.empty((0, 7)))
        keep = (mt >= since) & (mt < start_raw)
        rkeep = rt >= since
        return (
            np.concatenate((mt[keep], rt[rkeep])),
            np.concatenate((mv[keep][:, : len(METRICS)], rv[rkeep])),
        )

    def flush_open(self) -> list[MinuteRow]:
        """The minutes still being built (at shutdown, so a restart keeps them)."""
        with self._lock:
            rows = [acc.row(self.alias, gpu) for gpu, acc in self._open.items() if acc.n]
            self._open.clear()
            for row in rows:
                self._add_minute_locked(row)
            return rows


class MinuteStore:
    """The `gpu_minutes` table: written by collector threads, read at start, pruned by age."""

    def __init__(self, store: Store, keep_days: float = 7.0) -> None:
        self.store = store
        self.keep_days = keep_days

    def save(self, rows: Iterable[MinuteRow]) -> None:
        records = [
            {
                "alias": r.alias,
                "gpu": r.gpu,
                "minute": r.minute,
                "samples": r.samples,
                **{m: _db(v) for m, v in zip(METRICS, r.means, strict=True)},
                "util_max": _db(r.util_max),
            }
            for r in rows
        ]
        if records:
            with self.store.transaction() as db:
                db.table("gpu_minutes").upsert_all(records, pk=("alias", "gpu", "minute"))

    def load(self, alias: str, since_minute: int) -> list[MinuteRow]:
        cols = ", ".join(METRICS)
        rows = self.store.db.execute(
            f"SELECT gpu, minute, samples, {cols}, util_max FROM gpu_minutes "  # noqa: S608
            "WHERE alias = ? AND minute >= ? ORDER BY minute",
            [alias, since_minute],
        ).fetchall()
        return [
            MinuteRow(alias, r[0], r[1], r[2], tuple(_py(x) for x in r[3:9]), _py(r[9]))
            for r in rows
        ]

    def prune(self, now: float) -> int:
        """Delete minutes older than `keep_days`; returns how many went."""
        cutoff = int((now - self.keep_days * 86400) // 60)
        with self.store.transaction() as db:
            cursor = db.execute("DELETE FROM gpu_minutes WHERE minute < ?", [cutoff])
            return int(cursor.rowcount)


def _db(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def _py(value: object) -> float:
    return NAN if value is None else float(value)  # type: ignore[arg-type]
