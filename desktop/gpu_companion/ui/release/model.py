"""The checklist table model and the words the release page shows."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QCoreApplication,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)
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
STATE_NAMES = {
    ItemState.NOT_RUN: str(QT_TRANSLATE_NOOP("ChecklistModel", "not run")),
    ItemState.RUNNING: str(QT_TRANSLATE_NOOP("ChecklistModel", "running")),
    ItemState.PASSED: str(QT_TRANSLATE_NOOP("ChecklistModel", "passed")),
    ItemState.FAILED: str(QT_TRANSLATE_NOOP("ChecklistModel", "failed")),
    ItemState.STALE: str(QT_TRANSLATE_NOOP("ChecklistModel", "stale")),
}


def _tr(text: str) -> str:
    """A word marked with str(QT_TRANSLATE_NOOP("ChecklistModel", ...)), in the user's language."""
    return QCoreApplication.translate("ChecklistModel", text)


def state_word(state: ItemState) -> str:
    """An item's state as the user reads it (the enum's value stays the stored word)."""
    return _tr(STATE_NAMES.get(state, state.value))


class ChecklistModel(RowTableModel[ChecklistItem]):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(
            [
                (QCoreApplication.translate("ChecklistModel", "Item"), lambda it: it.title),
                (
                    QCoreApplication.translate("ChecklistModel", "State"),
                    lambda it: state_word(it.state),
                ),
                (
                    QCoreApplication.translate("ChecklistModel", "Evidence"),
                    lambda it: it.evidence.summary if it.evidence else "",
                ),
                (
                    QCoreApplication.translate("ChecklistModel", "Checked"),
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
    "release": str(QT_TRANSLATE_NOOP("ChecklistModel", "Released, checklist passed")),
    "override": str(QT_TRANSLATE_NOOP("ChecklistModel", "Released anyway")),
    "failed": str(QT_TRANSLATE_NOOP("ChecklistModel", "The provider refused, host kept")),
    "unconfirmed": str(
        QT_TRANSLATE_NOOP("ChecklistModel", "Not confirmed by the provider, host kept and metered")
    ),
    "auto-notified": str(QT_TRANSLATE_NOOP("ChecklistModel", "Auto-release countdown started")),
    "auto-busy-again": str(QT_TRANSLATE_NOOP("ChecklistModel", "Working again, countdown stopped")),
    "auto-kept": str(QT_TRANSLATE_NOOP("ChecklistModel", "Keep running")),
    "auto-snoozed": str(QT_TRANSLATE_NOOP("ChecklistModel", "Countdown snoozed")),
    "auto-blocked": str(
        QT_TRANSLATE_NOOP("ChecklistModel", "Auto-release held back, checklist not passed")
    ),
    "auto-stopped": str(
        QT_TRANSLATE_NOOP("ChecklistModel", "Stopped automatically, checklist passed")
    ),
    "auto-failed": str(QT_TRANSLATE_NOOP("ChecklistModel", "Auto-release failed")),
}
RULE_WORDS = {
    "idle": str(QT_TRANSLATE_NOOP("ChecklistModel", "idle")),
    "stalled": str(QT_TRANSLATE_NOOP("ChecklistModel", "stalled")),
    "finished": str(QT_TRANSLATE_NOOP("ChecklistModel", "job finished")),
    "max-runtime": str(QT_TRANSLATE_NOOP("ChecklistModel", "past the planned end")),
    "budget": str(QT_TRANSLATE_NOOP("ChecklistModel", "budget reached")),
    "forgotten": str(QT_TRANSLATE_NOOP("ChecklistModel", "unattended too long")),
}


def _auto_reason(reason: str) -> tuple[str, str, str]:
    """An automatic step's reason is "rule: readings — text" (AutoReleaseService.record)."""
    rule, _, rest = reason.partition(": ")
    readings, _, text = rest.partition(" — ")
    return rule, readings, text


def describe_record(record: ReleaseRecord) -> str:
    kind = _tr(KIND_WORDS[record.kind]) if record.kind in KIND_WORDS else record.kind
    text = f"{record.at.astimezone():%Y-%m-%d %H:%M} {kind}"
    if record.kind.startswith("auto-") and record.reason:
        rule, readings, _ = _auto_reason(record.reason)
        if rule in RULE_WORDS and record.kind not in ("auto-kept", "auto-snoozed"):
            text += f" — {_tr(RULE_WORDS[rule])}"
            text += f" ({readings})" if readings else ""
    elif record.reason:
        text += " — " + QCoreApplication.translate("ChecklistModel", "reason: {reason}").format(
            reason=record.reason
        )
    if record.failing_items:
        text += " — " + QCoreApplication.translate("ChecklistModel", "not passed: {items}").format(
            items="; ".join(record.failing_items)
        )
    if record.kind in ("release", "auto-stopped"):
        text += " — " + QCoreApplication.translate(
            "ChecklistModel", "evidence of {n} items"
        ).format(n=len(record.evidence))
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
        lines += [
            QCoreApplication.translate("ChecklistModel", "Command output:"),
            record.command_output.strip()[-600:],
        ]
    return "\n".join(lines)


def verdict(checklist: ReleaseChecklist) -> str:
    total = len(checklist.items)
    blockers = checklist.blockers()
    if checklist.ready():
        return QCoreApplication.translate(
            "ChecklistModel", "All {total} items passed: ready to release."
        ).format(total=total)
    separator = QCoreApplication.translate("ChecklistModel", ", ", "between the items of a list")
    named = separator.join(
        QCoreApplication.translate("ChecklistModel", "{item}: {state}").format(
            item=b.title, state=state_word(b.state)
        )
        for b in blockers[:3]
    )
    more = separator + "…" if len(blockers) > 3 else ""
    return QCoreApplication.translate(
        "ChecklistModel", "Release is blocked: {blocked} of {total} items not passed ({items})."
    ).format(blocked=len(blockers), total=total, items=named + more)
