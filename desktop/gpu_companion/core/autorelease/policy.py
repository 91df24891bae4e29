"""When a rental is wasting money, judged from the monitor's readings (GPU utilisation *and*
power, compute processes) and the rental itself. Pure: time comes in as numbers, so tests move
it without sleeping.

Idle needs every GPU under a utilisation and a power threshold with no compute process; stalled
is the hung job utilisation alone calls busy (utilisation high, power at idle level).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpu_companion.core.common.i18n import _
from gpu_companion.core.monitor.nvsmi import ComputeApp, GpuSample

RULES = ("idle", "stalled", "finished", "max-runtime", "budget", "forgotten")


@dataclass(frozen=True)
class Policy:
    """Per rental; 0 minutes switches a rule off."""

    idle_minutes: int = 30
    idle_util_pct: int = 5
    idle_power_share: float = 0.30  # of each GPU's power limit
    stall_minutes: int = 45
    stall_util_pct: int = 90
    finished_session: str = ""  # a tmux session on the host: gone means the job ended
    runtime_grace_minutes: int = 30  # after the rental's planned end
    forgotten_hours: int = 12  # act regardless, M hours after the last "Keep running"
    on_budget: bool = False  # act when a budget covering the rental is used up (opt-in)
    notice_minutes: int = 10  # the countdown before anything is done
    action: str = "release"  # or "stop" where the platform distinguishes them

    def validated(self) -> Policy:
        from gpu_companion.core.common.errors import ValidationError

        if self.action not in ("release", "stop"):
            raise ValidationError("action", _("The action is either release or stop."))
        if not 0 <= self.idle_util_pct <= 100 or not 0 <= self.stall_util_pct <= 100:
            raise ValidationError("idle_util_pct", _("Utilisation thresholds are 0-100 %."))
        if not 0 < self.idle_power_share < 1:
            raise ValidationError("idle_power_share", _("The idle power share is between 0 and 1."))
        for name in ("idle_minutes", "stall_minutes", "runtime_grace_minutes", "notice_minutes"):
            if getattr(self, name) < 0:
                raise ValidationError(name, _("Minutes cannot be negative."))
        return self


@dataclass(frozen=True)
class Trigger:
    rule: str
    since: float  # epoch seconds: when the condition began
    readings: str  # what was seen, in words, for the record and the notification


def _low_power(s: GpuSample, share: float) -> bool | None:
    if s.power_draw_w is None or not s.power_limit_w:
        return None  # unknown: never counts as idle power
    return s.power_draw_w <= share * s.power_limit_w


def _describe(samples: Sequence[GpuSample]) -> str:
    parts = []
    for s in samples:
        power = "?" if s.power_draw_w is None else f"{s.power_draw_w:.0f}"
        limit = "?" if s.power_limit_w is None else f"{s.power_limit_w:.0f}"
        util = "?" if s.utilization_gpu is None else f"{s.utilization_gpu}"
        parts.append(f"GPU{s.index}: {util} %, {power}/{limit} W")
    return "; ".join(parts)


@dataclass
class Detector:
    """Fed with one host's readings as they arrive; says which rules hold and since when."""

    policy: Policy
    idle_since: float | None = None
    stall_since: float | None = None
    last_seen: float | None = None
    last_readings: str = ""
    apps: tuple[ComputeApp, ...] = ()
    finished_at: float | None = None

    def on_samples(self, t: float, samples: Sequence[GpuSample]) -> None:
        p = self.policy
        self.last_seen, self.last_readings = t, _describe(samples)
        if not samples:
            return
        low = [_low_power(s, p.idle_power_share) for s in samples]
        idle = not self.apps and all(
            s.utilization_gpu is not None and s.utilization_gpu < p.idle_util_pct and lp is True
            for s, lp in zip(samples, low, strict=True)
        )
        busy_util = [
            (s, lp)
            for s, lp in zip(samples, low, strict=True)
            if s.utilization_gpu is not None and s.utilization_gpu >= p.stall_util_pct
        ]
        working = any(
            lp is False and (s.utilization_gpu or 0) >= p.idle_util_pct
            for s, lp in zip(samples, low, strict=True)
        )
        stalled = bool(busy_util) and all(lp is True for _s, lp in busy_util) and not working
        self.idle_since = (t if self.idle_since is None else self.idle_since) if idle else None
        self.stall_since = (
            (t if self.stall_since is None else self.stall_since) if stalled else None
        )

    def on_processes(self, t: float, apps: Sequence[ComputeApp]) -> None:
        self.apps = tuple(apps)
        if self.apps:
            self.idle_since = None

    def on_session_gone(self, t: float) -> None:
        if self.finished_at is None:
            self.finished_at = t

    def triggers(
        self,
        now: float,
        *,
        planned_end: float | None = None,
        budget_reached: str = "",
        kept_since: float | None = None,
        started_at: float | None = None,
    ) -> list[Trigger]:
        p, out = self.policy, []
        if p.idle_minutes and self.idle_since is not None:
            if now - self.idle_since >= p.idle_minutes * 60:
                out.append(Trigger("idle", self.idle_since, self.last_readings))
        if p.stall_minutes and self.stall_since is not None:
            if now - self.stall_since >= p.stall_minutes * 60:
                seen = _("utilisation high at idle power: {readings}").format(
                    readings=self.last_readings
                )
                out.append(Trigger("stalled", self.stall_since, seen))
        if p.finished_session and self.finished_at is not None:
            ended = _("tmux session {name} has ended").format(name=repr(p.finished_session))
            out.append(Trigger("finished", self.finished_at, ended))
        if planned_end is not None and now >= planned_end + p.runtime_grace_minutes * 60:
            out.append(Trigger("max-runtime", planned_end, _("the planned end has passed")))
        if budget_reached and p.on_budget:
            out.append(Trigger("budget", now, budget_reached))
        anchor = kept_since if kept_since is not None else started_at
        if p.forgotten_hours and anchor is not None and now - anchor >= p.forgotten_hours * 3600:
            kept = _("no 'Keep running' for {hours} h").format(hours=p.forgotten_hours)
            out.append(Trigger("forgotten", anchor, kept))
        return out
