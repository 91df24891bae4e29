"""What the tray shows, computed from the ledger and the budgets (no Qt): loaded after the first
paint, with the spend modules it reads (the tray starts as "nothing running")."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpu_companion.core.common.money import format_money, format_totals
from gpu_companion.core.common.text import format_duration
from gpu_companion.core.spend.alerts import rental_name
from gpu_companion.core.spend.budgets import Budgets
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.reports import burn_text, today

STOPPED = " (stopped: disk billed)"
STATES = ("idle", "ok", "warning", "over")  # nothing running / within budget / warning / over
STATE_WORDS = {
    "idle": "nothing running",
    "ok": "running within budget",
    "warning": "budget warning",
    "over": "over budget",
}


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
    """What the tray shows, computed from the ledger and the budgets (no Qt)."""

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
        count = f"{len(running) - stopped} running" + (f", {stopped} stopped" if stopped else "")
        head = f"{count}, {burn}" if running and burn else STATE_WORDS["idle"]
        if running and not burn:
            head = f"{count}, not billed"
        tooltip = f"GPU Companion — {head}\nToday: {format_totals(today(self.ledger))}"
        if state in ("warning", "over"):
            tooltip += f"\n{STATE_WORDS[state].capitalize()}"
        entries = [
            TrayEntry(
                r.id or 0,
                f"{rental_name(r)}{STOPPED if r.billing_mode == 'stopped' else ''} · "
                f"{format_duration(r.elapsed(now))} · "
                f"{format_money(r.cost_at(now), r.currency)}",
                r.host_alias,
            )
            for r in running
        ]
        return TraySnapshot(state, tooltip, entries)
