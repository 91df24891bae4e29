"""Billing advice: what a plan of GPU hours costs on demand, on spot, on a monthly plan or on a card
you buy, and where each option starts to win.

Amounts are `Decimal` in any currency (an ISO code travels with them); each result carries its
arithmetic as text lines, so the user can check the sums before committing money.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.money import digits, from_minor, parse_decimal, sentence, to_minor

HOURS_PER_MONTH_MAX = Decimal(730)  # 24 h x 365 days / 12: no plan can use more
WEEKS_PER_MONTH = Decimal(52) / Decimal(12)
DEFAULT_SPOT_REWORK = Decimal("0.10")  # share of spot hours repeated after interruptions
CENT = Decimal("0.01")
_CURRENCY_RE = re.compile(r"^[A-Z]{3}$")
_PHRASES = {
    "on-demand": "on-demand hours",
    "spot": "spot instances",
    "monthly": "a monthly plan",
    "buy": "buying the card",
}


def to_decimal(field: str, value: Decimal | int | str, *, allow_zero: bool = False) -> Decimal:
    """A money or quantity input as Decimal (parsed by the one money module); floats are refused
    because they round money."""
    if isinstance(value, float):
        raise TypeError(f"{field}: pass a Decimal or a string, not a float")
    try:
        number = parse_decimal(value, repr(value) if isinstance(value, str) else str(value))
    except ValueError as exc:
        raise ValidationError(field, sentence(exc)) from None
    if not number.is_finite() or number < 0 or (number == 0 and not allow_zero):
        raise ValidationError(field, f"The {field.replace('_', ' ')} must be above 0, not {value}.")
    return number


def _qty(value: Decimal) -> str:
    """1,234 for whole numbers, 1,234.5 otherwise: hours, months and kWh read best that way."""
    if value == value.to_integral_value():
        return f"{int(value):,}"
    return f"{value.quantize(Decimal('0.1'), ROUND_HALF_UP):,}"


@dataclass(frozen=True)
class Money:
    """An amount rounded to cents with its ISO currency code."""

    amount: Decimal
    currency: str

    @classmethod
    def of(cls, amount: Decimal, currency: str) -> Money:
        """Round half up to the currency's smallest unit (cents, yen), as bills do."""
        return cls(from_minor(to_minor(amount, currency), currency), currency)

    def __str__(self) -> str:
        return f"{self.currency} {self.amount:,.{digits(self.currency)}f}"


@dataclass(frozen=True)
class UsagePlan:
    """How much GPU time the user expects to need: hours per month over a number of months."""

    hours_per_month: Decimal
    months: Decimal
    total_hours: Decimal

    @classmethod
    def from_weeks(
        cls, hours_per_week: Decimal | int | str, weeks: Decimal | int | str
    ) -> UsagePlan:
        """From the wizard's weekly inputs; a month is 52/12 weeks."""
        per_week, count = to_decimal("hours_per_week", hours_per_week), to_decimal("weeks", weeks)
        if per_week > 168:
            raise ValidationError("hours_per_week", "A week has only 168 hours.")
        return cls._checked(per_week * WEEKS_PER_MONTH, count / WEEKS_PER_MONTH, per_week * count)

    @classmethod
    def from_months(
        cls, hours_per_month: Decimal | int | str, months: Decimal | int | str
    ) -> UsagePlan:
        """From hours per month, the way monthly prices are quoted."""
        per_month, count = (
            to_decimal("hours_per_month", hours_per_month),
            to_decimal("months", months),
        )
        return cls._checked(per_month, count, per_month * count)

    @classmethod
    def _checked(cls, per_month: Decimal, months: Decimal, total: Decimal) -> UsagePlan:
        if per_month > HOURS_PER_MONTH_MAX:
            raise ValidationError("hours_per_month", "A month has only about 730 hours.")
        if months > 120:
            raise ValidationError("months", "Plans longer than 10 years are not supported.")
        return cls(per_month, months, total)


@dataclass(frozen=True)
class RentalPrices:
    """Hourly on-demand price, and optionally spot per hour and a monthly plan's price."""

    currency: str
    on_demand_per_hour: Decimal
    spot_per_hour: Decimal | None = None
    monthly_price: Decimal | None = None


@dataclass(frozen=True)
class PurchaseOption:
    """Buying the card: its price, its power draw under load, electricity and write-off period."""

    card_price: Decimal
    power_w: Decimal
    electricity_per_kwh: Decimal
    depreciation_months: int = 36


@dataclass(frozen=True)
class OptionCost:
    """One billing option's cost for the whole plan, with the arithmetic."""

    key: str  # "on-demand", "spot", "monthly", "buy"
    label: str
    total: Money
    lines: tuple[str, ...]


@dataclass(frozen=True)
class BreakEven:
    """Where one option starts to beat another; `value` None means it never does."""

    key: str  # "monthly-vs-hourly", "buy-vs-rent"
    label: str
    value: Decimal | None
    unit: str  # "hours/month" or "months"
    lines: tuple[str, ...]


@dataclass(frozen=True)
class BillingAdvice:
    """All options, the break-even points, warnings and one plain recommendation."""

    plan: UsagePlan
    options: tuple[OptionCost, ...]
    break_evens: tuple[BreakEven, ...]
    warnings: tuple[str, ...]
    recommendation: str

    @property
    def cheapest(self) -> OptionCost:
        """The option with the lowest total for the plan."""
        return min(self.options, key=lambda option: option.total.amount)

    def option(self, key: str) -> OptionCost:
        """The option with this key; KeyError if it was not priced."""
        for option in self.options:
            if option.key == key:
                return option
        raise KeyError(key)


def _checked_prices(prices: RentalPrices) -> RentalPrices:
    if not _CURRENCY_RE.match(prices.currency):
        raise ValidationError("currency", f"{prices.currency!r} is not a 3-letter currency code.")
    spot, monthly = prices.spot_per_hour, prices.monthly_price
    return RentalPrices(
        prices.currency,
        to_decimal("on_demand_price", prices.on_demand_per_hour),
        None if spot is None else to_decimal("spot_price", spot),
        None if monthly is None else to_decimal("monthly_price", monthly),
    )


def _rentals(plan: UsagePlan, p: RentalPrices, rework: Decimal) -> list[OptionCost]:
    c, hours = p.currency, plan.total_hours
    plan_line = (
        f"{_qty(plan.hours_per_month)} h/month × {_qty(plan.months)} months = {_qty(hours)} h"
    )
    total = Money.of(hours * p.on_demand_per_hour, c)
    options = [
        OptionCost(
            "on-demand",
            "On demand (hourly)",
            total,
            (plan_line, f"{_qty(hours)} h × {Money.of(p.on_demand_per_hour, c)}/h = {total}"),
        )
    ]
    if p.spot_per_hour is not None:
        redone = hours * (1 + rework)
        total = Money.of(redone * p.spot_per_hour, c)
        options.append(
            OptionCost(
                "spot",
                "Spot (interruptible)",
                total,
                (
                    plan_line,
                    f"{_qty(hours)} h × {1 + rework} ({rework:.0%} of the work redone after "
                    f"interruptions) = {_qty(redone)} h",
                    f"{_qty(redone)} h × {Money.of(p.spot_per_hour, c)}/h = {total}",
                ),
            )
        )
    if p.monthly_price is not None:
        billed = Decimal(math.ceil(plan.months))
        total = Money.of(billed * p.monthly_price, c)
        lines = [f"{_qty(billed)} months × {Money.of(p.monthly_price, c)} = {total}"]
        if billed != plan.months:
            lines.insert(0, f"{_qty(plan.months)} months are billed as {_qty(billed)} whole months")
        options.append(OptionCost("monthly", "Monthly plan", total, tuple(lines)))
    return options


def _checked_purchase(buy: PurchaseOption) -> PurchaseOption:
    if not 1 <= buy.depreciation_months <= 120:
        raise ValidationError("depreciation_months", "Depreciation must be 1 to 120 months.")
    return PurchaseOption(
        to_decimal("card_price", buy.card_price),
        to_decimal("power_w", buy.power_w),
        to_decimal("electricity_price", buy.electricity_per_kwh, allow_zero=True),
        buy.depreciation_months,
    )


def _buy(plan: UsagePlan, buy: PurchaseOption, c: str) -> tuple[OptionCost, Decimal]:
    """The card's depreciated share for the plan plus electricity; also the kWh per month."""
    price, watts, kwh_price = buy.card_price, buy.power_w, buy.electricity_per_kwh
    dep = Decimal(buy.depreciation_months)
    used = min(plan.months, dep)
    card_cost = price * used / dep
    kwh = watts * plan.total_hours / 1000
    power = kwh * kwh_price
    total = Money.of(card_cost + power, c)
    lines = (
        f"Card: {Money.of(price, c)} ÷ {_qty(dep)} months × {_qty(used)} months used = "
        f"{Money.of(card_cost, c)}",
        f"Power: {_qty(watts)} W × {_qty(plan.total_hours)} h ÷ 1,000 = {_qty(kwh)} kWh × "
        f"{Money.of(kwh_price, c)}/kWh = {Money.of(power, c)}",
        f"Total: {Money.of(card_cost, c)} + {Money.of(power, c)} = {total} (paid up front: "
        f"{Money.of(price, c)}; the host PC, resale value and your time are not counted)",
    )
    return OptionCost("buy", "Buy the card", total, lines), watts * plan.hours_per_month / 1000


def _monthly_break_even(plan: UsagePlan, p: RentalPrices) -> BreakEven | None:
    if p.monthly_price is None:
        return None
    c, hourly = p.currency, p.on_demand_per_hour
    hours = p.monthly_price / hourly
    line = (
        f"{Money.of(p.monthly_price, c)} per month ÷ {Money.of(hourly, c)}/h = {_qty(hours)} "
        f"h/month; you plan {_qty(plan.hours_per_month)} h/month"
    )
    if hours > HOURS_PER_MONTH_MAX:
        line += ": never, since a month has only about 730 hours"
        return BreakEven(
            "monthly-vs-hourly", "Monthly beats hourly above", None, "hours/month", (line,)
        )
    value = hours.quantize(Decimal("0.1"), ROUND_HALF_UP)
    return BreakEven(
        "monthly-vs-hourly", "Monthly beats hourly above", value, "hours/month", (line,)
    )


def _buy_break_even(
    plan: UsagePlan, p: RentalPrices, buy: PurchaseOption, kwh_month: Decimal
) -> BreakEven:
    c = p.currency
    rent = plan.hours_per_month * p.on_demand_per_hour
    power = kwh_month * buy.electricity_per_kwh
    lines = [
        f"Renting: {_qty(plan.hours_per_month)} h/month × {Money.of(p.on_demand_per_hour, c)}/h = "
        f"{Money.of(rent, c)}/month",
        f"Power if you own it: {_qty(buy.power_w)} W × {_qty(plan.hours_per_month)} h ÷ 1,000 = "
        f"{_qty(kwh_month)} kWh × {Money.of(buy.electricity_per_kwh, c)}/kWh = "
        f"{Money.of(power, c)}/month",
    ]
    if rent <= power:
        lines.append("Never: the electricity alone costs as much as renting.")
        return BreakEven("buy-vs-rent", "Buying beats renting after", None, "months", tuple(lines))
    months = buy.card_price / (rent - power)
    lines.append(
        f"{Money.of(buy.card_price, c)} ÷ ({Money.of(rent, c)} − {Money.of(power, c)}) = "
        f"{months:.2f} months"
    )
    value = months.quantize(CENT, ROUND_HALF_UP)
    return BreakEven("buy-vs-rent", "Buying beats renting after", value, "months", tuple(lines))


def advise(
    plan: UsagePlan,
    prices: RentalPrices,
    purchase: PurchaseOption | None = None,
    *,
    first_run: bool = True,
    spot_rework: Decimal = DEFAULT_SPOT_REWORK,
) -> BillingAdvice:
    """Cost of each option for the plan, the break-even points, warnings and a recommendation.

    Spot cost assumes `spot_rework` of the hours are repeated after interruptions (the work since
    the last checkpoint); buying counts the depreciated share of the card plus electricity only.
    """
    p = _checked_prices(prices)
    rework = to_decimal("spot_rework", spot_rework, allow_zero=True)
    options = _rentals(plan, p, rework)
    break_evens = [be for be in (_monthly_break_even(plan, p),) if be is not None]
    warnings: list[str] = []
    if p.spot_per_hour is not None:
        warnings.append(
            "Spot instances can be taken back at any moment: save a checkpoint to persistent "
            "storage regularly (every 15-30 minutes) and make your script resume from the latest "
            "one, or an interruption loses everything since the last save."
        )
    if purchase is not None:
        purchase = _checked_purchase(purchase)
        bought, kwh_month = _buy(plan, purchase, p.currency)
        options.append(bought)
        pay_back = _buy_break_even(plan, p, purchase, kwh_month)
        break_evens.append(pay_back)
        if pay_back.value is None or pay_back.value > purchase.depreciation_months:
            warnings.append(
                f"At {_qty(plan.hours_per_month)} h/month the card does not pay for itself within "
                f"its {purchase.depreciation_months}-month depreciation period."
            )
    advice = BillingAdvice(plan, tuple(options), tuple(break_evens), tuple(warnings), "")
    cheapest = advice.cheapest
    if first_run:
        text = (
            "For a first run, rent on demand: you pay only for the hours you use, can stop at any "
            "time, and nothing interrupts you while you find the bugs and learn how many hours the "
            "job really takes."
        )
        if cheapest.key == "on-demand":
            text += " It is also the cheapest option for this plan."
        else:
            text += f" Once the job runs reliably, consider {_PHRASES[cheapest.key]} "
            text += f"({cheapest.total} for this plan)."
    else:
        text = f"Cheapest for this plan: {_PHRASES[cheapest.key]} at {cheapest.total}."
        if cheapest.key == "spot":
            text += " Only with checkpoint-and-resume in place."
    return BillingAdvice(plan, tuple(options), tuple(break_evens), tuple(warnings), text)
