"""What a checklist item is: a state, the evidence of its last check, and how to run it."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

from gpu_companion.core.common.i18n import N_, _

if TYPE_CHECKING:
    from gpu_companion.core.release.context import ReleaseContext

Figure = int | float | str


class Label:
    """A class-level word of an item (its title, its fix button), marked with N_() and
    translated each time it is read: the catalog is installed after this module is imported.
    An instance's own value (a manual item's label, the user's words) still wins."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __get__(self, obj: object, owner: type | None = None) -> str:
        return _(self.text)


class ItemState(Enum):
    NOT_RUN = "not run"
    RUNNING = "running"
    PASSED = "passed"
    FAILED = "failed"
    STALE = "stale"

    @property
    def text(self) -> str:
        """The state as the user reads it (`value` stays the stored, compared word)."""
        return _(_STATE_TEXT[self.value])


_STATE_TEXT = {
    "not run": N_("not run"),
    "running": N_("running"),
    "passed": N_("passed"),
    "failed": N_("failed"),
    "stale": N_("stale"),
}


@dataclass(frozen=True)
class Evidence:
    """What was checked, when, with which figures; `details` lists paths or processes found.

    `remote_time` is the host's own clock when the check began (epoch seconds): staleness is
    judged against it, so a skewed laptop clock cannot hide a newer file.
    """

    item: str
    passed: bool
    summary: str
    checked: str
    at: datetime
    figures: dict[str, Figure] = field(default_factory=dict)
    details: tuple[str, ...] = ()
    remote_time: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "passed": self.passed,
            "summary": self.summary,
            "checked": self.checked,
            "at": self.at.isoformat(timespec="seconds"),
            "figures": dict(self.figures),
            "details": list(self.details),
            "remote_time": self.remote_time,
        }


@dataclass(frozen=True)
class ItemUpdate:
    """One change of one item, streamed to the UI while a check or a fix runs."""

    key: str
    state: ItemState
    evidence: Evidence | None = None
    message: str = ""


class ChecklistItem(ABC):
    """One thing that must be true before the instance can be destroyed.

    `run` checks and returns evidence (passed or not); it never changes the host. `fix` is the
    action the app can take itself (sync, pack); `changed_since` is a cheap probe that says why
    a passed check no longer holds.
    """

    key: str = ""
    title: str = ""
    fix_label: ClassVar[str] = ""

    def __init__(self) -> None:
        self.state = ItemState.NOT_RUN
        self.evidence: Evidence | None = None

    @abstractmethod
    def run(self, ctx: ReleaseContext) -> Evidence: ...

    def changed_since(self, ctx: ReleaseContext, evidence: Evidence) -> str | None:
        """Why the host no longer matches `evidence`, or None when it still does."""
        return None

    def fix(self, ctx: ReleaseContext) -> Iterator[str]:
        """Act on the host (progress lines); items without a fix have an empty `fix_label`."""
        return iter(())

    @property
    def passed(self) -> bool:
        return self.state is ItemState.PASSED
