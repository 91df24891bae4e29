"""Auto-release wired to the app: the live monitor's readings feed one detector per billed host,
`tick()` (every 30 s from the tray, the window or `gpu-companion watch`) applies the policies,
runs the ladder, and reports sleeps and unreachable hosts. Nothing here runs without a passed,
fresh checklist."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from datetime import datetime, timedelta, timezone
from decimal import Decimal

from gpu_companion.core.autorelease.away import Reachability, SleepDetector
from gpu_companion.core.autorelease.ladder import (
    Answer,
    AutoRelease,
    Case,
    ChecklistOutcome,
    Step,
)
from gpu_companion.core.autorelease.policy import Detector, Policy, Trigger
from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.money import format_money, to_minor
from gpu_companion.core.common.notifier import Level, Message, Notifier
from gpu_companion.core.common.text import format_duration
from gpu_companion.core.hosts.registry import Host, HostRegistry
from gpu_companion.core.monitor.collector import HostState, PollEvent, SamplesEvent, StatusEvent
from gpu_companion.core.release import ItemState, ReleaseChecklist, ReleaseRecord, release_host
from gpu_companion.core.release.wiring import ReleaseWiring
from gpu_companion.core.spend.budgets import Budgets
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.metering import Rental
from gpu_companion.core.storage.store import Store

log = logging.getLogger(__name__)
# the states in which a billed host may have gone (preempted, down, off the network)
SILENT = frozenset({HostState.CONNECTING, HostState.RECONNECTING, HostState.STOPPED})
SETTING = "autorelease.policy.{host_id}"


def load_policy(store: Store, host_id: int) -> Policy | None:
    """The host's policy; None when auto-release is off for it (the default)."""
    return parse_policy(store.get_setting(SETTING.format(host_id=host_id)), host_id)


def parse_policy(raw: str | None, host_id: int) -> Policy | None:
    """A policy setting's value as a policy; None when empty or unreadable."""
    if not raw:
        return None
    try:
        return Policy(**json.loads(raw)).validated()
    except (TypeError, ValueError):
        log.warning("unreadable auto-release policy for host %s", host_id)
        return None


def save_policy(store: Store, host_id: int, policy: Policy | None) -> None:
    key = SETTING.format(host_id=host_id)
    store.set_setting(key, json.dumps(asdict(policy.validated())) if policy else "")


class AutoReleaseService:
    def __init__(
        self,
        store: Store,
        registry: HostRegistry,
        ledger: SpendLedger,
        wiring: ReleaseWiring,
        notifier: Notifier,
        *,
        wall: Callable[[], float] = time.time,
        mono: Callable[[], float] = time.monotonic,
        last_sync: Callable[[str], datetime | None] = lambda _alias: None,
        budgets: Budgets | None = None,
    ) -> None:
        self.store, self.registry, self.ledger = store, registry, ledger
        self.wiring, self.notifier = wiring, notifier
        self.wall, self.last_sync = wall, last_sync
        self.budgets = budgets
        self.ladder = AutoRelease(self, clock=wall)
        self.detectors: dict[str, Detector] = {}
        self._policies: dict[str, tuple[str, Policy | None]] = {}  # alias: (setting, parsed)
        self.sleep = SleepDetector(wall, mono)
        self.reach = Reachability()
        self._checklists: dict[str, ReleaseChecklist] = {}
        self._sessions_seen: set[str] = set()  # hosts whose policy's tmux session was seen

    # --- readings ------------------------------------------------------------------------------

    def _detector(self, alias: str) -> Detector | None:
        policy = self._policy_of(alias)
        if policy is None:
            self.detectors.pop(alias, None)
            return None
        det = self.detectors.get(alias)
        if det is None or det.policy != policy:
            det = self.detectors[alias] = replace(det, policy=policy) if det else Detector(policy)
        return det

    def _policy_of(self, alias: str) -> Policy | None:
        """The policy of the host called `alias` now (by its id: a rename keeps it). One indexed
        read: this runs for every tick of every watched host (100 hosts at 1 Hz), where listing
        every host to find one and then reading its setting made 100 Host objects a tick."""
        row = self.store.db.execute(
            "SELECT h.id, s.value FROM hosts h LEFT JOIN settings s "
            "ON s.key = ? || h.id WHERE h.alias = ?",
            [SETTING.split("{", 1)[0], alias],
        ).fetchone()
        if row is None or not row[1]:
            return None
        raw = str(row[1])
        cached = self._policies.get(alias)
        if cached is not None and cached[0] == raw:
            return cached[1]
        policy = parse_policy(raw, int(row[0]))  # parsed (and checked) once per change
        self._policies[alias] = (raw, policy)
        return policy

    def on_event(self, event: object) -> None:
        """Subscribe this to the monitor (`Monitor.subscribe`)."""
        if isinstance(event, StatusEvent):
            # a refused key, a changed host key or a GPU problem is an answer from the host: not
            # the silence of a preempted or dead one (the monitor shows what to fix)
            answered = event.status.state not in SILENT
            self.reach.on_status(event.alias, answered, self.wall())
            return
        if isinstance(event, SamplesEvent | PollEvent):
            det = self._detector(event.alias)
            if det is None:
                return
            if isinstance(event, SamplesEvent):
                t = max((s.t for s in event.samples), default=self.wall())
                det.on_samples(t, [s.sample for s in event.samples])
                self.reach.on_status(event.alias, True, t)
            else:
                det.on_processes(self.wall(), event.apps)

    # --- the clock -----------------------------------------------------------------------------

    def tick(self) -> None:
        now = self.wall()
        slept = self.sleep.check()
        running = {r.host_alias: r for r in self.ledger.running() if r.host_alias and r.computing}
        if slept is not None:
            self._catch_up(slept, running)
        for alias, since in self.reach.due(now, set(running)):
            self._unreachable(alias, since, running[alias])
        for alias, rental in running.items():
            det = self._detector(alias)
            if det is None:
                continue
            planned = rental.planned_end.timestamp() if rental.planned_end else None
            try:
                if det.policy.finished_session:
                    self._watch_session(alias, det, now)
                triggers = det.triggers(
                    now,
                    planned_end=planned,
                    budget_reached=self._budget_reached(rental) if det.policy.on_budget else "",
                    kept_since=self.ladder.kept_since.get(alias),
                    started_at=rental.started_at.timestamp(),
                )
                self.ladder.evaluate(alias, triggers, det.policy, now)
            except Exception:  # one host's failure never stops the others
                log.exception("auto-release on %s failed", alias)

    def _watch_session(self, alias: str, det: Detector, now: float) -> None:
        """The finished rule: the policy's tmux session was seen on the host and is gone now
        (a session never seen, e.g. a typo, never counts as finished)."""
        ctx = self.wiring.context(self._host(alias))
        try:
            name = f"={det.policy.finished_session}"  # "=": that exact name, not a prefix
            code = ctx.run(["tmux", "has-session", "-t", name], timeout=20).code
        except UserError:
            return  # not answering: the unreachable alert speaks for it
        finally:
            ctx.close()
        if code == 0:
            self._sessions_seen.add(alias)
        elif code == 1 and alias in self._sessions_seen:
            det.on_session_gone(now)

    def _budget_reached(self, rental: Rental) -> str:
        if self.budgets is None:
            return ""
        for status in self.budgets.statuses():
            scope = status.budget.platform_id
            if status.state == "over" and scope in (None, rental.platform_id):
                return _("{budget} reached").format(budget=status.budget.title)
        return ""

    def _catch_up(self, slept: tuple[float, float], running: dict[str, Rental]) -> None:
        """Hosts idle when the computer fell asleep are taken as idle throughout (the last
        reading before the sleep); their policies apply at once, countdown first."""
        asleep, woke = slept
        for alias, rental in running.items():
            det = self.detectors.get(alias)
            if det is None or det.idle_since is None or det.idle_since > asleep:
                continue
            idle_s = woke - det.idle_since
            cost = to_minor(rental.hourly_rate() * Decimal(str(idle_s)) / 3600, rental.currency)
            text = _(
                "While this computer slept, {host} was idle {duration} = {cost} (judged from "
                "the last reading before the sleep); its auto-release policy applies now."
            ).format(
                host=alias,
                duration=format_duration(timedelta(seconds=idle_s)),
                cost=format_money(cost, rental.currency),
            )
            self.notifier.post(Message(Level.WARNING, text, key=f"wake:{alias}",
                                       source="autorelease"))  # fmt: skip

    def _unreachable(self, alias: str, since: float, rental: Rental) -> None:
        synced = self.last_sync(alias)
        when = synced.astimezone().strftime("%Y-%m-%d %H:%M") if synced else _("never")
        text = _(
            "{host} stopped answering {minutes} min ago while billed: preempted or down? Last "
            "verified checkpoint sync: {when}."
        ).format(host=alias, minutes=int((self.wall() - since) // 60), when=when)
        self.notifier.post(Message(Level.WARNING, text, key=f"unreachable:{alias}",
                                   source="autorelease"))  # fmt: skip
        note = f"{datetime.fromtimestamp(since, timezone.utc):%Y-%m-%d %H:%M} UTC: no answer"
        if rental.id is not None:  # the ledger notes the gap
            self.ledger.update_rental(rental.id, notes=f"{rental.notes}\n{note}".strip())

    # --- what the user answers (banner, tray): called off the GUI thread --------------------

    def case(self, alias: str) -> Case | None:
        """The host's open case (counting down, blocked, kept or done), None when none."""
        return self.ladder.cases.get(alias)

    def countdown(self, alias: str) -> float | None:
        """Seconds until the unattended checklist runs, None when nothing counts down."""
        return self.ladder.countdown(alias, self.wall())

    def keep_running(self, alias: str, hours: float = 4) -> Answer:
        """Wins over a countdown or a running checklist at once; once the provider was asked,
        the answer says it came too late (the release is read back and reported as usual)."""
        return self.ladder.keep_running(alias, self.wall(), hours)

    def snooze(self, alias: str, minutes: float = 30) -> Answer:
        return self.ladder.snooze(alias, self.wall(), minutes)

    def release_now(self, alias: str) -> Answer:
        """The checklist still decides: a failing or stale item keeps the host."""
        det = self._detector(alias)
        return self.ladder.release_now(alias, det.policy if det else Policy(), self.wall())

    # --- Actions for the ladder -----------------------------------------------------------------

    def notify(self, alias: str, warning: bool, text: str, countdown_s: float | None) -> None:
        level = Level.WARNING if warning else Level.INFO
        self.notifier.post(Message(level, text, key=f"autorelease:{alias}", source="autorelease"))

    def _host(self, alias: str) -> Host:
        host = self.registry.host(alias)
        if host is None:
            raise LookupError(alias)
        return host

    def run_checklist(self, alias: str) -> ChecklistOutcome:
        host = self._host(alias)
        settings = self.wiring.settings  # what the user confirmed in the window counts here too
        confirmed = settings.confirmations(alias)
        checklist = ReleaseChecklist.build(host, settings.config(alias), confirmed)
        ctx = self.wiring.context(host)
        try:
            for _update in checklist.run_all(ctx):
                pass
        except Exception as exc:  # cannot check: not safe
            log.warning("unattended checklist on %s failed: %s", alias, exc)
            failed = _("checklist could not run: {error}").format(error=exc)
            return ChecklistOutcome(False, (), (failed,))
        finally:
            ctx.close()
        self._checklists[alias] = checklist
        stale = tuple(it.title for it in checklist.items if it.state is ItemState.STALE)
        failing = tuple(
            f"{it.title}: {it.evidence.summary if it.evidence else it.state.text}"
            for it in checklist.blockers()
            if it.state is not ItemState.STALE
        )
        evidence = tuple(e.as_dict() for e in checklist.evidence())
        return ChecklistOutcome(checklist.ready(), stale, failing, evidence)

    def act(
        self,
        alias: str,
        action: str,
        outcome: ChecklistOutcome,
        trigger: Trigger,
        may_proceed: Callable[[], bool],
    ) -> str:
        """Through the release gate, whatever the action: the provider is asked (unless the user
        answered meanwhile), the instance read back, and only a confirmed release or stop ends
        the meter."""
        host = self._host(alias)
        checklist = self._checklists.pop(alias)
        act = self.wiring.instance_action(host, "stop" if action == "stop" else "destroy")
        if act is None:
            raise UserError(
                _(
                    "{host}'s platform has no provider account or release command, so nothing "
                    "can release it while you are away."
                ).format(host=alias),
                hint=_("Add a provider account (gpu-companion providers add vast.ai|runpod)."),
            )
        record = release_host(checklist, self.wiring.services(), act, may_proceed=may_proceed)
        return record.command_output

    def record(self, step: Step) -> None:
        """Every automatic step on the release record (the release itself is the gate's)."""
        if step.kind == "released":
            return
        self.wiring.ledger.record_release(
            ReleaseRecord(
                host_alias=step.alias,
                kind=f"auto-{step.kind}",
                at=datetime.fromtimestamp(step.at, timezone.utc).replace(microsecond=0),
                evidence=step.evidence,
                failing_items=step.failing,
                reason=f"{step.rule}: {step.readings} — {step.text}",
                command_output=step.command_output,
            )
        )
