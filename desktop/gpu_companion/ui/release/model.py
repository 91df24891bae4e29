"""The checklist table model and the words the release page shows."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from gpu_companion.core.release import (
    ChecklistItem,
    ItemState,
    ItemUpdate,
    ReleaseChecklist,
    ReleaseContext,
    ReleaseRecord,
)
from gpu_companion.ui.common.models import RowTableModel

STATE_COLORS = {
    ItemState.PASSED: "#2f855a",
    ItemState.FAILED: "#c53030",
    ItemState.STALE: "#b7791f",
    ItemState.RUNNING: "#2b6cb0",
}


class ChecklistModel(RowTableModel[ChecklistItem]):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            [
                ("Item", lambda it: it.title),
                ("State", lambda it: it.state.value),
                ("Evidence", lambda it: it.evidence.summary if it.evidence else ""),
                (
                    "Checked",
                    lambda it: f"{it.evidence.at.astimezone():%H:%M:%S}" if it.evidence else "",
                ),
            ],
            parent,
        )

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role == Qt.ItemDataRole.ForegroundRole and index.isValid() and index.column() == 1:
            color = STATE_COLORS.get(self.row(index.row()).state)
            return QColor(color) if color else None
        return super().data(index, role)

    def changed(self) -> None:
        if self.rowCount():
            self.dataChanged.emit(self.index(0, 0), self.index(self.rowCount() - 1, 3))


def stream(steps: Callable[[], Iterator[ItemUpdate]], ctx: ReleaseContext) -> Iterator[ItemUpdate]:
    """Worker body: the checklist's generator, then the SSH connection closed in the worker."""
    try:
        yield from steps()
    finally:
        ctx.close()


KIND_WORDS = {
    "release": "Released, checklist passed",
    "override": "Released anyway",
    "failed": "The provider refused, host kept",
    "unconfirmed": "Not confirmed by the provider, host kept and metered",
    "auto-notified": "Auto-release countdown started",
    "auto-busy-again": "Working again, countdown stopped",
    "auto-kept": "Keep running",
    "auto-snoozed": "Countdown snoozed",
    "auto-blocked": "Auto-release held back, checklist not passed",
    "auto-stopped": "Stopped automatically, checklist passed",
    "auto-failed": "Auto-release failed",
}
RULE_WORDS = {
    "idle": "idle",
    "stalled": "stalled",
    "finished": "job finished",
    "max-runtime": "past the planned end",
    "budget": "budget reached",
    "forgotten": "unattended too long",
}


def _auto_reason(reason: str) -> tuple[str, str, str]:
    """An automatic step's reason is "rule: readings — text" (AutoReleaseService.record)."""
    rule, _, rest = reason.partition(": ")
    readings, _, text = rest.partition(" — ")
    return rule, readings, text


def describe_record(record: ReleaseRecord) -> str:
    text = f"{record.at.astimezone():%Y-%m-%d %H:%M} {KIND_WORDS.get(record.kind, record.kind)}"
    if record.kind.startswith("auto-") and record.reason:
        rule, readings, _ = _auto_reason(record.reason)
        if rule in RULE_WORDS and record.kind not in ("auto-kept", "auto-snoozed"):
            text += f" — {RULE_WORDS[rule]}"
            text += f" ({readings})" if readings else ""
    elif record.reason:
        text += f" — reason: {record.reason}"
    if record.failing_items:
        text += " — not passed: " + "; ".join(record.failing_items)
    if record.kind in ("release", "auto-stopped"):
        text += f" — evidence of {len(record.evidence)} items"
    if record.release_command:
        text += " — " + " ".join(record.release_command)
    return text


def record_details(record: ReleaseRecord) -> str:
    """Everything the record holds, for the history's tooltip: the words, evidence, output."""
    lines = [describe_record(record)]
    if record.kind.startswith("auto-"):
        lines.append(_auto_reason(record.reason)[2] or record.reason)
    for ev in record.evidence:
        lines.append(f"• {ev.get('checked') or ev.get('item', '')}: {ev.get('summary', '')}")
    if record.command_output:
        lines += ["Command output:", record.command_output.strip()[-600:]]
    return "\n".join(lines)


def verdict(checklist: ReleaseChecklist) -> str:
    total = len(checklist.items)
    blockers = checklist.blockers()
    if checklist.ready():
        return f"All {total} items passed: ready to release."
    named = ", ".join(f"{b.title}: {b.state.value}" for b in blockers[:3])
    more = ", …" if len(blockers) > 3 else ""
    return f"Release is blocked: {len(blockers)} of {total} items not passed ({named}{more})."
