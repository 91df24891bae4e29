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
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.common.money import digits, from_minor, parse_decimal, sentence, to_minor

HOURS_PER_MONTH_MAX = Decimal(730)  # 24 h x 365 days / 12: no plan can use more
WEEKS_PER_MONTH = Decimal(52) / Decimal(12)
DEFAULT_SPOT_REWORK = Decimal("0.10")  # share of spot hours repeated after interruptions
CENT = Decimal("0.01")
_CURRENCY_RE = re.compile(r"^[A-Z]{3}$")
_PHRASES = {
    "on-demand": N_("on-demand hours"),
    "spot": N_("spot instances"),
    "monthly": N_("a monthly plan"),
    "buy": N_("buying the card"),
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
        raise ValidationError(
            field,
            _("The {field} must be above 0, not {value}.").format(
                field=_(_FIELD_NAMES.get(field, field.replace("_", " "))), value=value
            ),
        )
    return number


# What to_decimal's message calls each field (the words of its field name)
_FIELD_NAMES = {
    "hours_per_week": N_("hours per week"),
    "weeks": N_("weeks"),
    "hours_per_month": N_("hours per month"),
    "months": N_("months"),
    "on_demand_price": N_("on demand price"),
    "spot_price": N_("spot price"),
    "monthly_price": N_("monthly price"),
    "card_price": N_("card price"),
    "power_w": N_("power w"),
    "electricity_price": N_("electricity price"),
    "spot_rework": N_("spot rework"),
}


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
            raise ValidationError("hours_per_week", _("A week has only 168 hours."))
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
            raise ValidationError("hours_per_month", _("A month has only about 730 hours."))
        if months > 120:
            raise ValidationError("months", _("Plans longer than 10 years are not supported."))
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
        raise ValidationError(
            "currency",
            _("{code} is not a 3-letter currency code.").format(code=repr(prices.currency)),
        )
    spot, monthly = prices.spot_per_hour, prices.monthly_price
    return RentalPrices(
        prices.currency,
        to_decimal("on_demand_price", prices.on_demand_per_hour),
        None if spot is None else to_decimal("spot_price", spot),
        None if monthly is None else to_decimal("monthly_price", monthly),
    )


def _rentals(plan: UsagePlan, p: RentalPrices, rework: Decimal) -> list[OptionCost]:
    c, hours = p.currency, plan.total_hours
    plan_line = _("{per_month} h/month × {months} months = {hours} h").format(
        per_month=_qty(plan.hours_per_month), months=_qty(plan.months), hours=_qty(hours)
    )
    total = Money.of(hours * p.on_demand_per_hour, c)
    options = [
        OptionCost(
            "on-demand",
            _("On demand (hourly)"),
            total,
            (
                plan_line,
                _("{hours} h × {rate}/h = {total}").format(
                    hours=_qty(hours), rate=Money.of(p.on_demand_per_hour, c), total=total
                ),
            ),
        )
    ]
    if p.spot_per_hour is not None:
        redone = hours * (1 + rework)
        total = Money.of(redone * p.spot_per_hour, c)
        options.append(
            OptionCost(
                "spot",
                _("Spot (interruptible)"),
                total,
                (
                    plan_line,
                    _(
                        "{hours} h × {factor} ({share} of the work redone after interruptions) = "
                        "{redone} h"
                    ).format(
                        hours=_qty(hours),
                        factor=1 + rework,
                        share=f"{rework:.0%}",
                        redone=_qty(redone),
                    ),
                    _("{hours} h × {rate}/h = {total}").format(
                        hours=_qty(redone), rate=Money.of(p.spot_per_hour, c), total=total
                    ),
                ),
            )
        )
    if p.monthly_price is not None:
        billed = Decimal(math.ceil(plan.months))
        total = Money.of(billed * p.monthly_price, c)
        lines = [
            _("{months} months × {price} = {total}").format(
                months=_qty(billed), price=Money.of(p.monthly_price, c), total=total
            )
        ]
        if billed != plan.months:
            lines.insert(
                0,
                _("{months} months are billed as {billed} whole months").format(
                    months=_qty(plan.months), billed=_qty(billed)
                ),
            )
        options.append(OptionCost("monthly", _("Monthly plan"), total, tuple(lines)))
    return options


def _checked_purchase(buy: PurchaseOption) -> PurchaseOption:
    if not 1 <= buy.depreciation_months <= 120:
        raise ValidationError("depreciation_months", _("Depreciation must be 1 to 120 months."))
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
        _("Card: {price} ÷ {months} months × {used} months used = {cost}").format(
            price=Money.of(price, c), months=_qty(dep), used=_qty(used),
            cost=Money.of(card_cost, c)),
        _("Power: {watts} W × {hours} h ÷ 1,000 = {kwh} kWh × {rate}/kWh = {cost}").format(
            watts=_qty(watts), hours=_qty(plan.total_hours), kwh=_qty(kwh),
            rate=Money.of(kwh_price, c), cost=Money.of(power, c)),
        _("Total: {card} + {power} = {total} (paid up front: {price}; the host PC, resale value "
          "and your time are not counted)").format(
            card=Money.of(card_cost, c), power=Money.of(power, c), total=total,
            price=Money.of(price, c)),
    )  # fmt: skip
    return OptionCost("buy", _("Buy the card"), total, lines), watts * plan.hours_per_month / 1000


def _monthly_break_even(plan: UsagePlan, p: RentalPrices) -> BreakEven | None:
    if p.monthly_price is None:
        return None
    c, hourly = p.currency, p.on_demand_per_hour
    hours = p.monthly_price / hourly
    line = _("{price} per month ÷ {rate}/h = {hours} h/month; you plan {plan} h/month").format(
        price=Money.of(p.monthly_price, c), rate=Money.of(hourly, c), hours=_qty(hours),
        plan=_qty(plan.hours_per_month),
    )  # fmt: skip
    if hours > HOURS_PER_MONTH_MAX:
        line += _(": never, since a month has only about 730 hours")
        return BreakEven(
            "monthly-vs-hourly", _("Monthly beats hourly above"), None, "hours/month", (line,)
        )
    value = hours.quantize(Decimal("0.1"), ROUND_HALF_UP)
    return BreakEven(
        "monthly-vs-hourly", _("Monthly beats hourly above"), value, "hours/month", (line,)
    )


def _buy_break_even(
    plan: UsagePlan, p: RentalPrices, buy: PurchaseOption, kwh_month: Decimal
) -> BreakEven:
    c = p.currency
    rent = plan.hours_per_month * p.on_demand_per_hour
    power = kwh_month * buy.electricity_per_kwh
    lines = [
        _("Renting: {hours} h/month × {rate}/h = {rent}/month").format(
            hours=_qty(plan.hours_per_month), rate=Money.of(p.on_demand_per_hour, c),
            rent=Money.of(rent, c)),
        _("Power if you own it: {watts} W × {hours} h ÷ 1,000 = {kwh} kWh × {rate}/kWh = "
          "{cost}/month").format(
            watts=_qty(buy.power_w), hours=_qty(plan.hours_per_month), kwh=_qty(kwh_month),
            rate=Money.of(buy.electricity_per_kwh, c), cost=Money.of(power, c)),
    ]  # fmt: skip
    label = _("Buying beats renting after")
    if rent <= power:
        lines.append(_("Never: the electricity alone costs as much as renting."))
        return BreakEven("buy-vs-rent", label, None, "months", tuple(lines))
    months = buy.card_price / (rent - power)
    lines.append(
        _("{price} ÷ ({rent} − {power}) = {months} months").format(
            price=Money.of(buy.card_price, c), rent=Money.of(rent, c), power=Money.of(power, c),
            months=f"{months:.2f}")
    )  # fmt: skip
    value = months.quantize(CENT, ROUND_HALF_UP)
    return BreakEven("buy-vs-rent", label, value, "months", tuple(lines))


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
            _(
                "Spot instances can be taken back at any moment: save a checkpoint to persistent "
                "storage regularly (every 15-30 minutes) and make your script resume from the "
                "latest one, or an interruption loses everything since the last save."
            )
        )
    if purchase is not None:
        purchase = _checked_purchase(purchase)
        bought, kwh_month = _buy(plan, purchase, p.currency)
        options.append(bought)
        pay_back = _buy_break_even(plan, p, purchase, kwh_month)
        break_evens.append(pay_back)
        if pay_back.value is None or pay_back.value > purchase.depreciation_months:
            warnings.append(
                _(
                    "At {hours} h/month the card does not pay for itself within its "
                    "{months}-month depreciation period."
                ).format(hours=_qty(plan.hours_per_month), months=purchase.depreciation_months)
            )
    advice = BillingAdvice(plan, tuple(options), tuple(break_evens), tuple(warnings), "")
    cheapest = advice.cheapest
    if first_run:
        text = _(
            "For a first run, rent on demand: you pay only for the hours you use, can stop at any "
            "time, and nothing interrupts you while you find the bugs and learn how many hours the "
            "job really takes."
        )
        if cheapest.key == "on-demand":
            text += _(" It is also the cheapest option for this plan.")
        else:
            text += _(
                " Once the job runs reliably, consider {option} ({total} for this plan)."
            ).format(option=_(_PHRASES[cheapest.key]), total=cheapest.total)
    else:
        text = _("Cheapest for this plan: {option} at {total}.").format(
            option=_(_PHRASES[cheapest.key]), total=cheapest.total
        )
        if cheapest.key == "spot":
            text += _(" Only with checkpoint-and-resume in place.")
    return BillingAdvice(plan, tuple(options), tuple(break_evens), tuple(warnings), text)
