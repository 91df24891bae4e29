"""The action ladder: never a blind release. A rule that holds first notifies, with a countdown
the user can stop ("Keep running"), cut short ("Release now") or push back (snooze). At the end
of the countdown the release checklist runs unattended; the instance is released (or stopped)
only when every item passed and none is stale. Otherwise it keeps running, the user hears what
failed, and the ladder tries again on a schedule. Every step is recorded."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from gpu_companion.core.autorelease.policy import Policy, Trigger
from gpu_companion.core.common.errors import UserError

ESCALATION_MINUTES = (15, 60, 240)  # after a blocked attempt: check and tell again
PRIORITY = ("finished", "stalled", "idle", "max-runtime", "budget", "forgotten")


class Stage(str, enum.Enum):
    NOTIFIED = "notified"  # counting down
    BLOCKED = "blocked"  # the checklist failed: kept running, tried again later
    DONE = "done"  # released or stopped
    KEPT = "kept"  # the user said keep running


@dataclass(frozen=True)
class ChecklistOutcome:
    passed: bool
    stale: tuple[str, ...] = ()
    failing: tuple[str, ...] = ()
    evidence: tuple[dict[str, object], ...] = ()

    @property
    def safe(self) -> bool:
        return self.passed and not self.stale and not self.failing


@dataclass(frozen=True)
class Step:
    """One automatic step, as the release history shows it."""

    at: float
    alias: str
    kind: str  # notified | busy-again | kept | snoozed | blocked | released | stopped | failed
    rule: str
    readings: str
    text: str
    failing: tuple[str, ...] = ()
    evidence: tuple[dict[str, object], ...] = ()
    command_output: str = ""


class Actions(Protocol):
    def notify(self, alias: str, warning: bool, text: str, countdown_s: float | None) -> None: ...

    def run_checklist(self, alias: str) -> ChecklistOutcome: ...

    def act(self, alias: str, action: str, outcome: ChecklistOutcome, trigger: Trigger) -> str:
        """Run the provider's release/stop command and end (or change) the meter; raise
        UserError when the provider refused. Returns the command's output."""
        ...

    def record(self, step: Step) -> None: ...


@dataclass
class Case:
    alias: str
    trigger: Trigger
    stage: Stage
    deadline: float  # end of the countdown, or the next attempt
    attempts: int = 0
    steps: list[Step] = field(default_factory=list)


class AutoRelease:
    """One ladder per watched host; `evaluate` is called with the rules that hold right now."""

    def __init__(self, actions: Actions) -> None:
        self.actions = actions
        self.cases: dict[str, Case] = {}
        self.kept_since: dict[str, float] = {}

    def countdown(self, alias: str, now: float) -> float | None:
        case = self.cases.get(alias)
        if case is None or case.stage is not Stage.NOTIFIED:
            return None
        return max(0.0, case.deadline - now)

    def _step(self, case: Case, now: float, kind: str, text: str, **kw: object) -> Step:
        step = Step(now, case.alias, kind, case.trigger.rule, case.trigger.readings, text, **kw)  # type: ignore[arg-type]
        case.steps.append(step)
        self.actions.record(step)
        return step

    def evaluate(self, alias: str, triggers: Sequence[Trigger], policy: Policy, now: float) -> None:
        case = self.cases.get(alias)
        if case is not None and case.stage is Stage.DONE:
            return
        if case is not None and case.stage is Stage.KEPT:
            if now < case.deadline:
                return
            del self.cases[alias]
            case = None
        if not triggers:
            if case is not None:  # the GPUs got busy again: nothing is done
                self._step(case, now, "busy-again", f"{alias} is working again: nothing was done.")
                self.actions.notify(alias, False, f"{alias} is working again; the countdown "
                                    "stopped.", None)  # fmt: skip
                del self.cases[alias]
            return
        trigger = min(triggers, key=lambda t: PRIORITY.index(t.rule))
        if case is None:
            case = Case(alias, trigger, Stage.NOTIFIED, now + policy.notice_minutes * 60)
            self.cases[alias] = case
            verb = "stopped" if policy.action == "stop" else "released"
            text = (
                f"{alias}: {_rule_words(trigger)} ({trigger.readings}). It will be {verb} in "
                f"{policy.notice_minutes} min once its backup checklist passes, unless you keep "
                "it running."
            )
            self._step(case, now, "notified", text)
            self.actions.notify(alias, True, text, policy.notice_minutes * 60.0)
            return
        case.trigger = trigger
        if now >= case.deadline:
            self._attempt(case, policy, now)

    def _attempt(self, case: Case, policy: Policy, now: float) -> None:
        case.attempts += 1
        outcome = self.actions.run_checklist(case.alias)
        if outcome.safe:
            try:
                output = self.actions.act(case.alias, policy.action, outcome, case.trigger)
            except UserError as exc:
                outcome = ChecklistOutcome(False, (), (f"provider command: {exc}",),
                                           outcome.evidence)  # fmt: skip
            else:
                case.stage = Stage.DONE
                kind = "stopped" if policy.action == "stop" else "released"
                text = f"{case.alias} was {kind}: {_rule_words(case.trigger)}; checklist passed."
                self._step(case, now, kind, text, evidence=outcome.evidence,
                           command_output=output)  # fmt: skip
                self.actions.notify(case.alias, False, text, None)
                return
        wait = ESCALATION_MINUTES[min(case.attempts - 1, len(ESCALATION_MINUTES) - 1)]
        case.stage, case.deadline = Stage.BLOCKED, now + wait * 60
        failing = outcome.failing + tuple(f"{name} (stale)" for name in outcome.stale)
        text = (
            f"{case.alias} was kept running: its backup checklist did not pass "
            f"({'; '.join(failing) or 'not passed'}). It is still billing; the app checks again "
            f"in {wait} min."
        )
        self._step(case, now, "blocked", text, failing=failing, evidence=outcome.evidence)
        self.actions.notify(case.alias, True, text, None)

    # --- what the user says ------------------------------------------------------------------

    def keep_running(self, alias: str, now: float, hours: float = 4) -> None:
        case = self.cases.get(alias) or Case(alias, Trigger("forgotten", now, ""), Stage.KEPT, 0)
        case.stage, case.deadline = Stage.KEPT, now + hours * 3600
        self.cases[alias] = case
        self.kept_since[alias] = now
        self._step(case, now, "kept", f"Keep running: nothing is done for {hours:g} h.")

    def snooze(self, alias: str, now: float, minutes: float = 30) -> None:
        case = self.cases.get(alias)
        if case is not None and case.stage in (Stage.NOTIFIED, Stage.BLOCKED):
            case.deadline = max(case.deadline, now) + minutes * 60
            self._step(case, now, "snoozed", f"Snoozed for {minutes:g} min.")

    def release_now(self, alias: str, policy: Policy, now: float) -> None:
        """The user's "Release now": the checklist still has to pass."""
        case = self.cases.get(alias)
        if case is not None and case.stage in (Stage.NOTIFIED, Stage.BLOCKED):
            self._attempt(case, policy, now)


def _rule_words(trigger: Trigger) -> str:
    return {
        "idle": "its GPUs are idle",
        "stalled": "its job looks stalled",
        "finished": "its job has finished",
        "max-runtime": "it ran past its planned end",
        "budget": "its budget is reached",
        "forgotten": "it has run unattended for long",
    }.get(trigger.rule, trigger.rule)
