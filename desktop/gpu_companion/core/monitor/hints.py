"""Money-wasting hints from the live samples: idle GPUs while billed, an IO-bound pipeline, memory
almost full, throttling, and a process on the GPU the user did not start.

Each hint fires once per episode (the condition becoming true) and is posted to the notifier with a
stable key (`idle:<alias>`, ...); it clears when the condition ends. Time comes from an injected
clock so tests move it without sleeping.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.common.notifier import Level, Message, Notifier
from gpu_companion.core.monitor.counters import HostCounters
from gpu_companion.core.monitor.nvsmi import ComputeApp, GpuSample

# clocks_event_reasons bits that mean the GPU is held back (NVML's "clocks event reasons").
THROTTLE_BITS = {
    0x4: N_("software power cap"),
    0x8: N_("hardware slowdown"),
    0x20: N_("software thermal slowdown"),
    0x40: N_("hardware thermal slowdown"),
    0x80: N_("hardware power brake"),
}


@dataclass(frozen=True)
class HintConfig:
    idle_util_pct: float = 10.0  # every GPU under this ...
    idle_minutes: float = 15.0  # ... for this long, while billed
    io_util_below_pct: float = 50.0  # mean utilisation under this, while ...
    io_read_mb_s: float = 100.0  # ... the disks read at least this (MB/s), or ...
    io_iowait_pct: float = 20.0  # ... the CPUs wait on IO at least this share of the time
    memory_full_pct: float = 95.0
    hot_c: float = 85.0


@dataclass(frozen=True)
class Hint:
    kind: str  # idle | io_bound | memory_full | throttling | foreign_process
    alias: str
    key: str
    text: str
    since: float
    level: Level = Level.WARNING


class HintEngine:
    """Evaluates the rules per host; thread-safe (collector threads call it)."""

    def __init__(
        self,
        notifier: Notifier | None = None,
        config: HintConfig | None = None,
        clock: Callable[[], float] = time.time,
        is_billed: Callable[[str], bool] = lambda alias: True,
        idle_minutes_for: Callable[[str], float | None] = lambda alias: None,
    ) -> None:
        self.notifier = notifier
        self.config = config or HintConfig()
        self.clock = clock
        self.is_billed = is_billed
        self.idle_minutes_for = idle_minutes_for  # a host's own threshold (the wizard's), or None
        self._lock = threading.Lock()
        self._active: dict[str, dict[str, Hint]] = {}  # alias -> key -> hint
        self._idle_since: dict[str, float] = {}
        self._utils: dict[str, dict[int, int | None]] = {}

    def active(self, alias: str) -> list[Hint]:
        with self._lock:
            return list(self._active.get(alias, {}).values())

    def forget(self, alias: str) -> None:
        with self._lock:
            self._active.pop(alias, None)
            self._idle_since.pop(alias, None)
            self._utils.pop(alias, None)

    # --- episodes -----------------------------------------------------------------------

    def _update(
        self,
        alias: str,
        family: str,
        wanted: Mapping[str, tuple[str, str]],
        since: float | None = None,
    ) -> list[Hint]:
        """Make the hints of one family (key prefix) exactly `wanted` (key -> (kind, text)).
        `since`: when the condition began, if earlier than now (an idle stretch's cost counts
        from its start, not from when the hint fired)."""
        started = self.clock() if since is None else since
        new: list[Hint] = []
        with self._lock:
            active = self._active.setdefault(alias, {})
            for key in [k for k in active if k.startswith(family) and k not in wanted]:
                del active[key]  # the episode is over
            for key, (kind, text) in wanted.items():
                if key not in active:
                    active[key] = hint = Hint(kind, alias, key, text, started)
                    new.append(hint)
        if self.notifier is not None:
            for hint in new:
                self.notifier.post(Message(hint.level, hint.text, source="monitor", key=hint.key))
        return new

    # --- rules on samples ---------------------------------------------------------------

    def on_samples(self, alias: str, samples: Sequence[GpuSample]) -> list[Hint]:
        cfg = self.config
        with self._lock:
            utils = self._utils.setdefault(alias, {})
            for s in samples:
                utils[s.index if s.index is not None else 0] = s.utilization_gpu
        new = self._idle(alias, utils)
        memory: dict[str, tuple[str, str]] = {}
        throttle: dict[str, tuple[str, str]] = {}
        for s in samples:
            gpu = s.index if s.index is not None else 0
            if s.memory_used_mib is not None and s.memory_total_mib:
                pct = 100.0 * s.memory_used_mib / s.memory_total_mib
                if pct >= cfg.memory_full_pct:
                    memory[f"memory:{alias}:{gpu}"] = (
                        "memory_full",
                        _(
                            "{alias}: GPU {gpu} memory is {pct}% full ({used} of {total} MiB); the "
                            "next allocation may fail."
                        ).format(
                            alias=alias,
                            gpu=gpu,
                            pct=f"{pct:.0f}",
                            used=s.memory_used_mib,
                            total=s.memory_total_mib,
                        ),
                    )
            reasons = throttle_reasons(s, cfg.hot_c)
            if reasons:
                throttle[f"throttle:{alias}:{gpu}"] = (
                    "throttling",
                    _("{alias}: GPU {gpu} is held back ({reasons}).").format(
                        alias=alias, gpu=gpu, reasons=", ".join(reasons)
                    ),
                )
        new += self._update_some(alias, f"memory:{alias}:", memory, samples)
        new += self._update_some(alias, f"throttle:{alias}:", throttle, samples)
        return new

    def _update_some(
        self, alias: str, family: str, wanted: dict[str, tuple[str, str]],
        samples: Sequence[GpuSample],
    ) -> list[Hint]:  # fmt: skip
        """Only GPUs present in this tick may end their episode."""
        present = {f"{family}{s.index if s.index is not None else 0}" for s in samples}
        with self._lock:
            keep = {
                k: (h.kind, h.text)
                for k, h in self._active.get(alias, {}).items()
                if k.startswith(family) and k not in present
            }
        return self._update(alias, family, {**keep, **wanted})

    def _idle(self, alias: str, utils: Mapping[int, int | None]) -> list[Hint]:
        cfg = self.config
        known = [u for u in utils.values() if u is not None]
        now = self.clock()
        key = f"idle:{alias}"
        if not known:
            return []  # MIG (no utilisation): no opinion
        if any(u >= cfg.idle_util_pct for u in known):  # busy: billed or not, not idle
            with self._lock:
                self._idle_since.pop(alias, None)
            return self._update(alias, key, {})
        # Asked only when every GPU is idle: `is_billed` reads the ledger, and a busy fleet of
        # 100 hosts ticking at 1 Hz made that 200 queries a second for no answer it needed.
        if not self.is_billed(alias):
            return []  # not billed: no opinion
        with self._lock:
            since = self._idle_since.setdefault(alias, now)
        minutes = (now - since) / 60
        if minutes < (self.idle_minutes_for(alias) or cfg.idle_minutes):
            return []
        if len(known) > 1:
            text = _(
                "{alias}: all {n} GPUs under {pct}% for {minutes} minutes while the rental "
                "is billed."
            )
        else:
            text = _(
                "{alias}: the GPU under {pct}% for {minutes} minutes while the rental is billed."
            )
        text = text.format(alias=alias, n=len(known), pct=f"{cfg.idle_util_pct:.0f}",
                           minutes=f"{minutes:.0f}")  # fmt: skip
        return self._update(alias, key, {key: ("idle", text)}, since=since)

    def seed_idle(self, alias: str, minutes: Iterable[tuple[int, float]]) -> None:
        """Carry an idle stretch over a restart: (minute, highest utilisation of any GPU)."""
        run_start: int | None = None
        last: int | None = None
        for minute, util_max in sorted(minutes):
            idle = util_max == util_max and util_max < self.config.idle_util_pct  # NaN: unknown
            if idle and (run_start is None or (last is not None and minute - last > 1)):
                run_start = minute
            elif not idle:
                run_start = None
            last = minute
        if run_start is not None and last is not None and self.clock() / 60 - last <= 2:
            with self._lock:
                self._idle_since.setdefault(alias, run_start * 60.0)

    # --- rules on the slow poll ---------------------------------------------------------

    def on_poll(
        self,
        alias: str,
        apps: Sequence[ComputeApp],
        counters: HostCounters,
        owners: Mapping[int, str],
        login_user: str,
    ) -> list[Hint]:
        cfg = self.config
        with self._lock:
            known = [u for u in self._utils.get(alias, {}).values() if u is not None]
        io: dict[str, tuple[str, str]] = {}
        if known:
            mean = sum(known) / len(known)
            read_mb = (counters.read_bytes_per_s or 0) / 1e6
            iowait = counters.iowait_pct or 0
            if mean < cfg.io_util_below_pct and (
                read_mb >= cfg.io_read_mb_s or iowait >= cfg.io_iowait_pct
            ):
                io[f"io:{alias}"] = (
                    "io_bound",
                    _(
                        "{alias}: GPUs at {pct}% while the disks read {mb} MB/s (iowait "
                        "{iowait}%): the data pipeline is likely the bottleneck. More loader "
                        "workers, local NVMe or a cached dataset usually help."
                    ).format(
                        alias=alias, pct=f"{mean:.0f}", mb=f"{read_mb:.0f}", iowait=f"{iowait:.0f}"
                    ),
                )
        new = self._update(alias, f"io:{alias}", io)
        foreign: dict[str, tuple[str, str]] = {}
        if owners:
            for app in apps:
                owner = owners.get(app.pid) if app.pid is not None else None
                if owner == login_user:
                    continue
                who = (
                    _("user {owner}").format(owner=owner)
                    if owner
                    else _("outside this machine's view")
                )
                name = app.process_name or _("a hidden process")
                foreign[f"foreign:{alias}:{app.pid or app.gpu_uuid}"] = (
                    "foreign_process",
                    _(
                        "{alias}: {name} (pid {pid}, {who}) uses a GPU and was not started by "
                        "you: the instance may be shared."
                    ).format(alias=alias, name=name, pid=app.pid or "?", who=who),
                )
        return new + self._update(alias, f"foreign:{alias}:", foreign)


def throttle_reasons(sample: GpuSample, hot_c: float) -> list[str]:
    reasons: list[str] = []
    mask_text = sample.extra.get("clocks_event_reasons.active")
    if mask_text:
        try:
            mask = int(mask_text, 16)
        except ValueError:
            mask = 0
        reasons += [_(name) for bit, name in THROTTLE_BITS.items() if mask & bit]
    if sample.temperature_c is not None and sample.temperature_c >= hot_c:
        reasons.append(f"{sample.temperature_c} °C")
    return reasons
