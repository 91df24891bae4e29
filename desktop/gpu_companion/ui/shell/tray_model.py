"""What the tray shows, computed from the ledger and the budgets (no widgets; QtCore only for its
words): loaded after the first paint, with the spend modules it reads (the tray starts as
"nothing running")."""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from gpu_companion.core.common.money import format_money, format_totals
from gpu_companion.core.common.text import format_duration
from gpu_companion.core.spend.alerts import rental_name
from gpu_companion.core.spend.budgets import Budgets
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.reports import burn_text, today

STATES = ("idle", "ok", "warning", "over")  # nothing running / within budget / warning / over
STATE_WORDS = {  # translated where shown (context "TrayModel")
    "idle": QT_TRANSLATE_NOOP("TrayModel", "nothing running"),
    "ok": QT_TRANSLATE_NOOP("TrayModel", "running within budget"),
    "warning": QT_TRANSLATE_NOOP("TrayModel", "budget warning"),
    "over": QT_TRANSLATE_NOOP("TrayModel", "over budget"),
}
# the tooltip's line under a budget warning (its own words: "Over budget", not a capitalised one)
STATE_LINES = {
    "warning": QT_TRANSLATE_NOOP("TrayModel", "Budget warning"),
    "over": QT_TRANSLATE_NOOP("TrayModel", "Over budget"),
}


def _tr(text: object) -> str:
    return QCoreApplication.translate("TrayModel", str(text))


@dataclass(frozen=True)
class TrayEntry:
    rental_id: int
    text: str
    host_alias: str = ""


@dataclass(frozen=True)
class TraySnapshot:
    state: str
    tooltip: str
    entries: list[TrayEntry] = field(default_factory=list)


class TrayModel:
    """What the tray shows, computed from the ledger and the budgets (no widgets): `snapshot()`
    runs on a worker thread (the tray applies it on the GUI thread), so it reads the store and
    translates (thread-safe) but touches no QObject."""

    def __init__(self, ledger: SpendLedger, budgets: Budgets) -> None:
        self.ledger = ledger
        self.budgets = budgets

    def snapshot(self) -> TraySnapshot:
        now = self.ledger.now()
        running = self.ledger.running()
        budget = self.budgets.overall_state(now)
        if budget in ("warning", "over"):
            state = budget
        else:
            state = "ok" if running else "idle"
        burn = burn_text(self.ledger)
        stopped = sum(r.billing_mode == "stopped" for r in running)
        head = _head(len(running) - stopped, stopped, burn) if running else _tr(STATE_WORDS["idle"])
        totals = format_totals(today(self.ledger))
        today_line = QCoreApplication.translate("TrayModel", "Today: {totals}").format(
            totals=totals
        )
        tooltip = f"GPU Companion — {head}\n{today_line}"
        if state in STATE_LINES:
            tooltip += "\n" + _tr(STATE_LINES[state])
        entries = [
            TrayEntry(
                r.id or 0,
                _entry_text(r.billing_mode == "stopped").format(
                    name=rental_name(r),
                    elapsed=format_duration(r.elapsed(now)),
                    cost=format_money(r.cost_at(now), r.currency),
                ),
                r.host_alias,
            )
            for r in running
        ]
        return TraySnapshot(state, tooltip, entries)


def _head(running: int, stopped: int, burn: str) -> str:
    """The tooltip's first line after the app's name: one whole phrase per case."""
    if stopped and burn:
        text = QCoreApplication.translate(
            "TrayModel", "{running} running, {stopped} stopped, {burn}"
        )
    elif stopped:
        text = QCoreApplication.translate(
            "TrayModel", "{running} running, {stopped} stopped, not billed"
        )
    elif burn:
        text = QCoreApplication.translate("TrayModel", "{running} running, {burn}")
    else:
        text = QCoreApplication.translate("TrayModel", "{running} running, not billed")
    return text.format(running=running, stopped=stopped, burn=burn)


def _entry_text(stopped: bool) -> str:
    """A rental's menu entry: name, time running and cost so far."""
    if stopped:
        return QCoreApplication.translate(
            "TrayModel", "{name} (stopped: disk billed) · {elapsed} · {cost}"
        )
    return QCoreApplication.translate("TrayModel", "{name} · {elapsed} · {cost}")
