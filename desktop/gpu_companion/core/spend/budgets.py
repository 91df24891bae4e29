"""Budgets: daily, weekly and monthly, per platform or overall, with thresholds and a forecast
of when the current burn rate crosses them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.common.money import check_currency, digits, parse_decimal, to_minor
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.metering import BUCKETS, period_of
from gpu_companion.core.spend.reports import report

DEFAULT_THRESHOLDS = (50, 80, 100)
PERIOD_WORDS = {"day": "Daily", "week": "Weekly", "month": "Monthly"}
# A budget's name as the user reads it, per period (translated where shown).
_TITLES = {
    "day": N_("Daily budget ({scope})"),
    "week": N_("Weekly budget ({scope})"),
    "month": N_("Monthly budget ({scope})"),
}


@dataclass(frozen=True)
class Budget:
    period: str  # day, week, month
    amount_minor: int
    currency: str
    platform_id: int | None = None  # None: all platforms
    thresholds: tuple[int, ...] = DEFAULT_THRESHOLDS
    id: int | None = None
    platform_name: str = ""

    @property
    def scope(self) -> str:
        return self.platform_name or _("all platforms")

    @property
    def title(self) -> str:
        if self.period in _TITLES:
            return _(_TITLES[self.period]).format(scope=self.scope)
        return f"{PERIOD_WORDS.get(self.period, self.period)} budget ({self.scope})"


@dataclass(frozen=True)
class BudgetStatus:
    budget: Budget
    start: datetime
    end: datetime
    spent_minor: int
    burn_per_hour: Decimal
    forecast: datetime | None  # when the burn rate reaches 100%, if within this period

    @property
    def percent(self) -> int:
        if self.budget.amount_minor <= 0:
            return 100 if self.spent_minor > 0 else 0
        return int(self.spent_minor * 100 // self.budget.amount_minor)

    def crossed(self) -> list[int]:
        return [t for t in self.budget.thresholds if self.percent >= t]

    @property
    def warning_level(self) -> int:
        """The highest threshold below 100% (80 with the defaults)."""
        below = [t for t in self.budget.thresholds if t < 100]
        return max(below) if below else 100

    @property
    def state(self) -> str:
        if self.percent >= 100:
            return "over"
        return "warning" if self.percent >= self.warning_level else "ok"


def parse_thresholds(text: str) -> tuple[int, ...]:
    try:
        values = sorted({int(p.strip().rstrip("%")) for p in text.split(",") if p.strip()})
    except ValueError:
        raise ValidationError(
            "thresholds", _("Thresholds are percentages separated by commas, e.g. 50, 80, 100.")
        ) from None
    if not values or any(not 1 <= v <= 1000 for v in values):
        raise ValidationError("thresholds", _("Each threshold is a percentage from 1 to 1000."))
    return tuple(values)


class Budgets:
    """Budget CRUD and their status against the ledger (one budget per scope, period and
    currency: saving another replaces it)."""

    def __init__(self, ledger: SpendLedger) -> None:
        self.ledger = ledger
        self.store = ledger.store

    def set_budget(
        self,
        period: str,
        amount: Decimal | str | int,
        currency: str,
        platform_id: int | None = None,
        thresholds: tuple[int, ...] | str = DEFAULT_THRESHOLDS,
    ) -> Budget:
        if period not in BUCKETS:
            raise ValidationError("period", _("A budget is daily, weekly or monthly."))
        try:
            code = check_currency(currency)
            value = parse_decimal(amount, N_("the budget"))
        except ValueError as exc:
            raise ValidationError("amount", f"{str(exc).capitalize()}.") from None
        if value <= 0:
            raise ValidationError("amount", _("A budget must be more than zero."))
        if isinstance(thresholds, str):
            thresholds = parse_thresholds(thresholds)
        if platform_id is not None:
            known = self.store.db.execute("SELECT 1 FROM platforms WHERE id = ?", [platform_id])
            if known.fetchone() is None:
                raise ValidationError("platform", _("The chosen platform no longer exists."))
        row = {
            "platform_id": platform_id,
            "period": period,
            "amount_minor": to_minor(value, code),
            "currency": code,
            "thresholds": ",".join(str(t) for t in thresholds),
        }
        with self.store.transaction() as db:
            db.execute(
                "DELETE FROM budgets WHERE platform_id IS ? AND period = ? AND currency = ?",
                [platform_id, period, code],
            )
            rowid = db.table("budgets").insert(row).last_rowid
        assert rowid is not None
        return next(b for b in self.all() if b.id == rowid)

    def find(self, period: str, currency: str, platform_id: int | None) -> Budget | None:
        """The budget `set_budget` would replace, so a caller can ask first."""
        return next(
            (
                b
                for b in self.all()
                if (b.period, b.currency, b.platform_id) == (period, currency, platform_id)
            ),
            None,
        )

    def all(self) -> list[Budget]:
        rows = self.store.db.execute(
            "SELECT b.id, b.platform_id, b.period, b.amount_minor, b.currency, b.thresholds, "
            "p.name FROM budgets b LEFT JOIN platforms p ON p.id = b.platform_id "
            "ORDER BY b.platform_id IS NOT NULL, p.name, "
            "CASE b.period WHEN 'day' THEN 0 WHEN 'week' THEN 1 ELSE 2 END"
        ).fetchall()
        return [
            Budget(r[2], r[3], r[4], r[1], parse_thresholds(r[5]), r[0], r[6] or "") for r in rows
        ]

    def delete(self, budget_id: int) -> None:
        with self.store.transaction() as db:
            db.execute("DELETE FROM budgets WHERE id = ?", [budget_id])

    def status(self, budget: Budget, now: datetime | None = None) -> BudgetStatus:
        now = now or self.ledger.now()
        start, end = period_of(now, budget.period, self.ledger.tz)
        spent = sum(
            ln.total_minor
            for ln in report(self.ledger, start, end).lines
            if ln.currency == budget.currency
            and (budget.platform_id is None or ln.platform == budget.platform_name)
        )
        burn = sum(
            (
                r.hourly_rate()
                for r in self.ledger.running()
                if r.billed
                and r.currency == budget.currency
                and (budget.platform_id is None or r.platform_id == budget.platform_id)
            ),
            Decimal(0),
        )
        forecast = None
        remaining = budget.amount_minor - spent
        if remaining <= 0:
            forecast = now
        elif burn > 0:
            hours = Decimal(remaining) / (burn * Decimal(10) ** digits(budget.currency))
            when = now + timedelta(seconds=int(hours * 3600))
            forecast = when if when < end else None
        return BudgetStatus(budget, start, end, spent, burn, forecast)

    def statuses(self, now: datetime | None = None) -> list[BudgetStatus]:
        return [self.status(b, now) for b in self.all()]

    def overall_state(self, now: datetime | None = None) -> str:
        """'none' without budgets, else the worst of 'ok' < 'warning' < 'over'."""
        states = [s.state for s in self.statuses(now)]
        for worst in ("over", "warning", "ok"):
            if worst in states:
                return worst
        return "none"
