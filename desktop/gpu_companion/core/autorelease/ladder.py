"""The action ladder: never a blind release. A rule that holds first notifies, with a countdown
the user can stop ("Keep running"), cut short ("Release now") or push back (snooze). At the end
of the countdown the release checklist runs unattended; the instance is released (or stopped)
only when every item passed and none is stale. Otherwise it keeps running, the user hears what
failed, and the ladder tries again on a schedule. Every step is recorded.

The user's answer wins over the ladder until the provider is called: the checklist and the
provider call run outside the ladder's lock (held only to change a case), the case is checked
once more just before the provider is asked (`may_proceed`), and an answer that comes after
that is told so (`Answer.too_late`) instead of being recorded as kept."""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from gpu_companion.core.autorelease.policy import Policy, Trigger
from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.release.gate import Withdrawn  # the user answered first: nothing sent

ESCALATION_MINUTES = (15, 60, 240)  # after a blocked attempt: check and tell again
PRIORITY = ("finished", "stalled", "idle", "max-runtime", "budget", "forgotten")


class Stage(str, enum.Enum):
    NOTIFIED = "notified"  # counting down
    CHECKING = "checking"  # the unattended checklist runs: an answer still stops it
    RELEASING = "releasing"  # the provider was asked: too late to keep it
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

    def act(
        self,
        alias: str,
        action: str,
        outcome: ChecklistOutcome,
        trigger: Trigger,
        may_proceed: Callable[[], bool],
    ) -> str:
        """Release or stop through the provider and end (or change) the meter; raise UserError
        when the provider refused. `may_proceed()` is asked right before the provider is: False
        (the user answered meanwhile) means nothing is sent and `Withdrawn` is raised. Returns
        what the provider said."""
        ...

    def record(self, step: Step) -> None: ...


@dataclass(frozen=True)
class Answer:
    """What came of the user's answer, in words the banner shows as they are."""

    applied: bool
    text: str
    too_late: bool = False


@dataclass
class Case:
    alias: str
    trigger: Trigger
    stage: Stage
    deadline: float  # end of the countdown, or the next attempt
    attempts: int = 0
    steps: list[Step] = field(default_factory=list)
    action: str = "release"  # the policy's action: "release" or "stop"


class AutoRelease:
    """One ladder per watched host; `evaluate` is called with the rules that hold right now.
    Thread-safe: the loop evaluates while the user answers from the window or the tray."""

    def __init__(self, actions: Actions, clock: Callable[[], float] | None = None) -> None:
        self.actions = actions
        self.clock = clock  # the time after a checklist or a provider call; None: the caller's
        self.cases: dict[str, Case] = {}
        self.kept_since: dict[str, float] = {}
        self._lock = threading.RLock()  # held only while a case changes, never across work

    def _now(self, fallback: float) -> float:
        return self.clock() if self.clock is not None else fallback

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
        with self._lock:
            case = self._evaluate(alias, triggers, policy, now)
        if case is not None:
            self._attempt(case, policy, now)

    def _evaluate(
        self, alias: str, triggers: Sequence[Trigger], policy: Policy, now: float
    ) -> Case | None:
        """The case whose attempt is due now (its stage set to CHECKING), else None."""
        case = self.cases.get(alias)
        if case is not None and case.stage in (Stage.DONE, Stage.CHECKING, Stage.RELEASING):
            return None  # done, or an attempt (the loop's or the user's) is on its way
        if case is not None and case.stage is Stage.KEPT:
            if now < case.deadline:
                return None
            del self.cases[alias]
            case = None
        if not triggers:
            if case is not None:  # the GPUs got busy again: nothing is done
                text = _("{host} is working again: nothing was done.").format(host=alias)
                self._step(case, now, "busy-again", text)
                told = _("{host} is working again; the countdown stopped.").format(host=alias)
                self.actions.notify(alias, False, told, None)
                del self.cases[alias]
            return None
        trigger = min(triggers, key=lambda t: PRIORITY.index(t.rule))
        if case is None:
            case = Case(alias, trigger, Stage.NOTIFIED, now + policy.notice_minutes * 60)
            case.action = policy.action
            self.cases[alias] = case
            if policy.action == "stop":
                text = _(
                    "{host}: {rule} ({readings}). It will be stopped in {minutes} min once its "
                    "backup checklist passes, unless you keep it running."
                )
            else:
                text = _(
                    "{host}: {rule} ({readings}). It will be released in {minutes} min once its "
                    "backup checklist passes, unless you keep it running."
                )
            text = text.format(
                host=alias,
                rule=_rule_words(trigger),
                readings=trigger.readings,
                minutes=policy.notice_minutes,
            )
            self._step(case, now, "notified", text)
            self.actions.notify(alias, True, text, policy.notice_minutes * 60.0)
            return None
        case.trigger = trigger
        if now < case.deadline:
            return None
        return self._begin(case, policy)

    def _begin(self, case: Case, policy: Policy) -> Case:  # under the lock
        case.attempts += 1
        case.stage = Stage.CHECKING
        case.action = policy.action
        return case

    def _still_checking(self, case: Case) -> bool:
        """Under the lock: the attempt goes on only when nobody answered meanwhile; then the
        provider is as good as asked (RELEASING), so a later answer is told it came too late."""
        with self._lock:
            if self.cases.get(case.alias) is not case or case.stage is not Stage.CHECKING:
                return False
            case.stage = Stage.RELEASING
            return True

    def _attempt(self, case: Case, policy: Policy, now: float) -> None:
        """The checklist, then the provider: both outside the lock (they take minutes)."""
        try:
            outcome = self.actions.run_checklist(case.alias)
        except Exception:
            with self._lock:
                if case.stage is Stage.CHECKING:
                    case.stage = Stage.NOTIFIED  # tried again at the next tick
            raise
        if outcome.safe:
            try:
                output = self.actions.act(
                    case.alias, policy.action, outcome, case.trigger,
                    lambda: self._still_checking(case),
                )  # fmt: skip
            except Withdrawn:
                return  # the user's answer (kept or snoozed) is the case's state now
            except UserError as exc:
                failed = _("provider command: {error}").format(error=exc)
                outcome = ChecklistOutcome(False, (), (failed,), outcome.evidence)
            else:
                with self._lock:
                    case.stage = Stage.DONE
                    kind = "stopped" if policy.action == "stop" else "released"
                    if kind == "stopped":
                        text = _("{host} was stopped: {rule}; checklist passed.")
                    else:
                        text = _("{host} was released: {rule}; checklist passed.")
                    text = text.format(host=case.alias, rule=_rule_words(case.trigger))
                    self._step(case, self._now(now), kind, text, evidence=outcome.evidence,
                               command_output=output)  # fmt: skip
                self.actions.notify(case.alias, False, text, None)
                return
        with self._lock:
            if self.cases.get(case.alias) is not case or case.stage not in (
                Stage.CHECKING, Stage.RELEASING
            ):
                return  # answered while the checklist ran: the answer stands
            now = self._now(now)
            wait = ESCALATION_MINUTES[min(case.attempts - 1, len(ESCALATION_MINUTES) - 1)]
            case.stage, case.deadline = Stage.BLOCKED, now + wait * 60
            failing = outcome.failing + tuple(
                _("{item} (stale)").format(item=name) for name in outcome.stale
            )
            text = _(
                "{host} was kept running: its backup checklist did not pass ({failing}). It is "
                "still billing; the app checks again in {minutes} min."
            ).format(
                host=case.alias, failing="; ".join(failing) or _("not passed"), minutes=wait
            )
            self._step(case, now, "blocked", text, failing=failing, evidence=outcome.evidence)
        self.actions.notify(case.alias, True, text, None)

    # --- what the user says ------------------------------------------------------------------

    def _late(self, case: Case, now: float, what: str) -> Answer | None:
        """Under the lock: the answer that can no longer change anything, in words."""
        stop = case.action == "stop"
        if case.stage is Stage.RELEASING:
            if stop:
                text = _(
                    "Too late for {answer}: the stop of {host} was already sent to the provider. "
                    "The app reads the instance back and says whether it is gone."
                )
            else:
                text = _(
                    "Too late for {answer}: the release of {host} was already sent to the "
                    "provider. The app reads the instance back and says whether it is gone."
                )
            text = text.format(answer=_(what), host=case.alias)
            self._step(case, now, "answer-too-late", text)
            return Answer(False, text, too_late=True)
        if case.stage is Stage.DONE:
            done = _("{host} was already stopped.") if stop else _("{host} was already released.")
            return Answer(False, done.format(host=case.alias), too_late=True)
        return None

    def keep_running(self, alias: str, now: float, hours: float = 4) -> Answer:
        with self._lock:
            case = self.cases.get(alias)
            late = self._late(case, now, N_("Keep running")) if case is not None else None
            if late is not None:
                return late
            case = case or Case(alias, Trigger("forgotten", now, ""), Stage.KEPT, 0)
            was = case.stage
            case.stage, case.deadline = Stage.KEPT, now + hours * 3600
            self.cases[alias] = case
            self.kept_since[alias] = now
            if was is Stage.CHECKING:
                text = _(
                    "Keep running: nothing is done for {hours} h. The running checklist was "
                    "stopped."
                )
            else:
                text = _("Keep running: nothing is done for {hours} h.")
            self._step(case, now, "kept", text.format(hours=f"{hours:g}"))
            return Answer(
                True,
                _(
                    "{host} keeps running: auto-release does nothing for {hours} h, then looks "
                    "again."
                ).format(host=alias, hours=f"{hours:g}"),
            )

    def snooze(self, alias: str, now: float, minutes: float = 30) -> Answer:
        with self._lock:
            case = self.cases.get(alias)
            nothing = _("{host} has no auto-release countdown to snooze.").format(host=alias)
            if case is None:
                return Answer(False, nothing)
            late = self._late(case, now, N_("Snooze"))
            if late is not None:
                return late
            if case.stage not in (Stage.NOTIFIED, Stage.BLOCKED, Stage.CHECKING):
                return Answer(False, nothing)
            if case.stage is Stage.CHECKING:
                case.stage = Stage.NOTIFIED  # the running attempt sees it and sends nothing
            case.deadline = max(case.deadline, now) + minutes * 60
            text = _("Snoozed for {minutes} min.").format(minutes=f"{minutes:g}")
            self._step(case, now, "snoozed", text)
            return Answer(
                True,
                _("{host}: auto-release waits {minutes} min more.").format(
                    host=alias, minutes=f"{minutes:g}"
                ),
            )

    def release_now(self, alias: str, policy: Policy, now: float) -> Answer:
        """The user's "Release now": the checklist still has to pass."""
        with self._lock:
            case = self.cases.get(alias)
            if case is None or case.stage not in (Stage.NOTIFIED, Stage.BLOCKED):
                late = self._late(case, now, N_("Release now")) if case is not None else None
                if case is not None and case.stage is Stage.CHECKING:
                    return Answer(
                        False, _("{host}'s checklist is already running.").format(host=alias)
                    )
                return late or Answer(
                    False, _("{host} has no auto-release countdown.").format(host=alias)
                )
            self._begin(case, policy)
        self._attempt(case, policy, now)
        return Answer(True, case.steps[-1].text if case.steps else "")


_RULE_WORDS = {
    "idle": N_("its GPUs are idle"),
    "stalled": N_("its job looks stalled"),
    "finished": N_("its job has finished"),
    "max-runtime": N_("it ran past its planned end"),
    "budget": N_("its budget is reached"),
    "forgotten": N_("it has run unattended for long"),
}


def _rule_words(trigger: Trigger) -> str:
    words = _RULE_WORDS.get(trigger.rule)
    return _(words) if words else trigger.rule
