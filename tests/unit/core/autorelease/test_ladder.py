"""The ladder never releases blind: notify first, then only a passed, fresh checklist releases."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from gpu_companion.core.autorelease.ladder import (
    AutoRelease,
    ChecklistOutcome,
    Stage,
    Step,
    Withdrawn,
)
from gpu_companion.core.autorelease.policy import Policy, Trigger
from gpu_companion.core.common.errors import UserError

POLICY = Policy(notice_minutes=10)
IDLE = [Trigger("idle", 0, "GPU0: 0 %, 70/700 W")]
PASS = ChecklistOutcome(True, evidence=({"key": "checkpoints", "passed": True},))


@dataclass
class Recorder:
    outcomes: list[ChecklistOutcome] = field(default_factory=list)
    acts: list[tuple[str, str]] = field(default_factory=list)
    notes: list[tuple[str, bool, str, float | None]] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    refuse: bool = False

    def notify(self, alias, warning, text, countdown_s):  # type: ignore[no-untyped-def]
        self.notes.append((alias, warning, text, countdown_s))

    def run_checklist(self, alias):  # type: ignore[no-untyped-def]
        return self.outcomes.pop(0)

    def act(self, alias, action, outcome, trigger, may_proceed):  # type: ignore[no-untyped-def]
        if self.refuse:
            raise UserError("The release command exited 1.")
        if not may_proceed():
            raise Withdrawn(alias)
        self.acts.append((alias, action))
        return "destroying instance 12345"

    def record(self, step):  # type: ignore[no-untyped-def]
        self.steps.append(step)


def test_idle_notifies_with_a_countdown_then_releases_on_a_passed_checklist():
    rec = Recorder(outcomes=[PASS])
    ladder = AutoRelease(rec)
    ladder.evaluate("vast", IDLE, POLICY, now=1000)
    assert rec.notes[-1][1] is True and rec.notes[-1][3] == 600
    assert "It will be released in 10 min" in rec.notes[-1][2] and rec.acts == []
    assert ladder.countdown("vast", 1300) == 300
    ladder.evaluate("vast", IDLE, POLICY, now=1599)
    assert rec.acts == []
    ladder.evaluate("vast", IDLE, POLICY, now=1600)
    assert rec.acts == [("vast", "release")]
    assert [s.kind for s in rec.steps] == ["notified", "released"]
    assert rec.steps[-1].command_output == "destroying instance 12345"
    ladder.evaluate("vast", IDLE, POLICY, now=9999)  # done: nothing more
    assert rec.acts == [("vast", "release")]


@pytest.mark.parametrize(
    "outcome",
    [
        ChecklistOutcome(False, failing=("Checkpoints synced: 3 files pending",)),
        ChecklistOutcome(True, stale=("Checkpoints synced",)),
    ],
)
def test_a_failing_or_stale_item_keeps_the_instance_and_alerts_again_later(outcome):
    rec = Recorder(outcomes=[outcome, outcome, PASS])
    ladder = AutoRelease(rec)
    ladder.evaluate("vast", IDLE, POLICY, now=0)
    ladder.evaluate("vast", IDLE, POLICY, now=600)
    assert rec.acts == [] and ladder.cases["vast"].stage is Stage.BLOCKED
    assert "kept running" in rec.notes[-1][2] and "checks again in 15 min" in rec.notes[-1][2]
    ladder.evaluate("vast", IDLE, POLICY, now=600 + 14 * 60)
    assert len(rec.outcomes) == 2  # not yet
    ladder.evaluate("vast", IDLE, POLICY, now=600 + 15 * 60)
    assert rec.acts == [] and "in 60 min" in rec.notes[-1][2]  # escalates
    ladder.evaluate("vast", IDLE, POLICY, now=600 + 75 * 60)
    assert rec.acts == [("vast", "release")]  # fixed meanwhile: released on a passed check
    assert [s.kind for s in rec.steps] == ["notified", "blocked", "blocked", "released"]


def test_a_refused_provider_command_keeps_it_blocked():
    rec = Recorder(outcomes=[PASS], refuse=True)
    ladder = AutoRelease(rec)
    ladder.evaluate("vast", IDLE, POLICY, now=0)
    ladder.evaluate("vast", IDLE, POLICY, now=600)
    assert ladder.cases["vast"].stage is Stage.BLOCKED
    assert "provider command" in rec.steps[-1].failing[0]


def test_keep_running_cancels_and_busy_again_stops_the_countdown():
    rec = Recorder(outcomes=[PASS])
    ladder = AutoRelease(rec)
    ladder.evaluate("vast", IDLE, POLICY, now=0)
    ladder.keep_running("vast", now=60, hours=4)
    ladder.evaluate("vast", IDLE, POLICY, now=600)
    ladder.evaluate("vast", IDLE, POLICY, now=4 * 3600)
    assert rec.acts == []
    ladder.evaluate("vast", IDLE, POLICY, now=4 * 3600 + 61)  # kept time over: asks again
    assert rec.steps[-1].kind == "notified"
    ladder.evaluate("vast", [], POLICY, now=4 * 3600 + 120)  # the GPUs work again
    assert rec.steps[-1].kind == "busy-again" and "vast" not in ladder.cases


def test_snooze_and_release_now_still_need_the_checklist():
    rec = Recorder(outcomes=[ChecklistOutcome(False, failing=("Archive",)), PASS])
    ladder = AutoRelease(rec)
    ladder.evaluate("vast", IDLE, POLICY, now=0)
    ladder.snooze("vast", now=100, minutes=30)
    ladder.evaluate("vast", IDLE, POLICY, now=600)
    assert rec.acts == []  # snoozed past the first deadline
    ladder.release_now("vast", POLICY, now=700)
    assert rec.acts == [] and ladder.cases["vast"].stage is Stage.BLOCKED
    ladder.release_now("vast", POLICY, now=800)
    assert rec.acts == [("vast", "release")]


def test_the_highest_rule_names_the_case():
    rec = Recorder(outcomes=[])
    ladder = AutoRelease(rec)
    ladder.evaluate("vast", [Trigger("forgotten", 0, ""), Trigger("stalled", 0, "hung")],
                    POLICY, now=0)  # fmt: skip
    assert ladder.cases["vast"].trigger.rule == "stalled"
    assert "looks stalled" in rec.notes[-1][2]
