"""Billing advice, checked on the issue's hand-worked example and on the edge cases.

Hand-worked example (currency CNY, written ¥ below): 160 h/month for 36 months, renting at ¥5-10/h,
against buying a ¥20,000 card drawing 350 W at ¥0.8/kWh, written off over 36 months.

    hours:          160 h/month x 36 months                  = 5,760 h
    rent at ¥5/h:   5,760 h x ¥5                              = ¥28,800.00
    rent at ¥10/h:  5,760 h x ¥10                             = ¥57,600.00
    buy, card:      ¥20,000 / 36 months x 36 months used      = ¥20,000.00
    buy, power:     350 W x 5,760 h / 1,000 = 2,016 kWh x ¥0.8 = ¥1,612.80
    buy, total:                                                 ¥21,612.80
    per month:      rent ¥5 x 160 = ¥800; power 0.35 kW x 160 h x ¥0.8 = ¥44.80
    pay-back at ¥5/h:  ¥20,000 / (¥800 - ¥44.80)   = 20,000 / 755.20   = 26.48 months
    pay-back at ¥10/h: ¥20,000 / (¥1,600 - ¥44.80) = 20,000 / 1,555.20 = 12.86 months
    monthly plan at ¥1,200: beats hourly above 1,200 / 5 = 240 h/month (1,200 / 10 = 120)
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.planning.billing import (
    Money,
    PurchaseOption,
    RentalPrices,
    UsagePlan,
    advise,
    to_decimal,
)

D = Decimal
CARD = PurchaseOption(D("20000"), D("350"), D("0.8"), 36)
PLAN = UsagePlan.from_months(160, 36)


def test_hand_worked_example_at_5_per_hour() -> None:
    advice = advise(PLAN, RentalPrices("CNY", D("5"), monthly_price=D("1200")), CARD)
    assert PLAN.total_hours == 5760
    on_demand = advice.option("on-demand")
    assert on_demand.total == Money(D("28800.00"), "CNY")
    assert on_demand.lines == (
        "160 h/month × 36 months = 5,760 h",
        "5,760 h × CNY 5.00/h = CNY 28,800.00",
    )
    buy = advice.option("buy")
    assert buy.total == Money(D("21612.80"), "CNY")
    assert buy.lines[0] == ("Card: CNY 20,000.00 ÷ 36 months × 36 months used = CNY 20,000.00")
    assert buy.lines[1] == (
        "Power: 350 W × 5,760 h ÷ 1,000 = 2,016 kWh × CNY 0.80/kWh = CNY 1,612.80"
    )
    monthly_vs_hourly, buy_vs_rent = advice.break_evens
    assert monthly_vs_hourly.value == D("240.0") and monthly_vs_hourly.unit == "hours/month"
    assert "CNY 1,200.00 per month ÷ CNY 5.00/h = 240 h/month" in monthly_vs_hourly.lines[0]
    assert buy_vs_rent.value == D("26.48") and buy_vs_rent.unit == "months"
    assert buy_vs_rent.lines == (
        "Renting: 160 h/month × CNY 5.00/h = CNY 800.00/month",
        "Power if you own it: 350 W × 160 h ÷ 1,000 = 56 kWh × CNY 0.80/kWh = CNY 44.80/month",
        "CNY 20,000.00 ÷ (CNY 800.00 − CNY 44.80) = 26.48 months",
    )
    assert advice.cheapest.key == "buy"
    assert advice.warnings == ()  # pays back within the 36-month write-off, no spot priced


def test_hand_worked_example_at_10_per_hour() -> None:
    advice = advise(PLAN, RentalPrices("CNY", D("10"), monthly_price=D("1200")), CARD)
    assert advice.option("on-demand").total.amount == D("57600.00")
    assert advice.option("monthly").total.amount == D("43200.00")  # 36 x 1,200
    assert [be.value for be in advice.break_evens] == [D("120.0"), D("12.86")]


def test_first_run_is_told_to_use_on_demand() -> None:
    advice = advise(PLAN, RentalPrices("CNY", D("5"), D("3")), CARD)
    assert advice.recommendation.startswith("For a first run, rent on demand")
    assert "consider spot instances (CNY 19,008.00 for this plan)" in advice.recommendation
    later = advise(PLAN, RentalPrices("CNY", D("5"), D("3")), CARD, first_run=False)
    assert later.recommendation == (
        "Cheapest for this plan: spot instances at CNY 19,008.00. Only with checkpoint-and-resume "
        "in place."
    )


def test_spot_costs_rework_and_warns_about_checkpoints() -> None:
    # 5,760 h x 1.10 = 6,336 h x ¥3 = ¥19,008.
    advice = advise(PLAN, RentalPrices("CNY", D("5"), spot_per_hour=D("3")))
    spot = advice.option("spot")
    assert spot.total.amount == D("19008.00")
    assert "5,760 h × 1.10 (10% of the work redone after interruptions) = 6,336 h" in spot.lines
    assert any("checkpoint" in w and "resume" in w for w in advice.warnings)
    no_rework = advise(PLAN, RentalPrices("CNY", D("5"), D("3")), spot_rework=D("0"))
    assert no_rework.option("spot").total.amount == D("17280.00")


def test_weekly_plans_and_whole_billed_months() -> None:
    # 40 h/week x 10 weeks = 400 h; 10 weeks = 10 x 12 / 52 = 2.3 months, billed as 3.
    plan = UsagePlan.from_weeks(40, 10)
    assert plan.total_hours == 400
    assert plan.hours_per_month == D(40) * 52 / 12
    advice = advise(plan, RentalPrices("USD", D("2.50"), monthly_price=D("1500")))
    assert advice.option("on-demand").total.amount == D("1000.00")
    monthly = advice.option("monthly")
    assert monthly.total.amount == D("4500.00")
    assert monthly.lines[0] == "2.3 months are billed as 3 whole months"
    assert advice.recommendation.endswith("It is also the cheapest option for this plan.")


def test_break_evens_that_never_come() -> None:
    # A monthly plan dearer than 730 hours of on-demand never wins.
    never = advise(PLAN, RentalPrices("USD", D("1"), monthly_price=D("1000")))
    assert never.break_evens[0].value is None
    assert "never" in never.break_evens[0].lines[0]
    # Renting at 0.10/h costs less than the card's own power (0.35 kWh x 0.8 = 0.28/h).
    cheap = advise(PLAN, RentalPrices("CNY", D("0.10")), CARD)
    assert cheap.break_evens[0].value is None
    assert any("does not pay for itself" in w for w in cheap.warnings)
    # Short depreciation: pay-back after 26.48 months, written off after 12.
    short = advise(
        PLAN, RentalPrices("CNY", D("5")), PurchaseOption(D(20000), D(350), D("0.8"), 12)
    )
    assert any("12-month depreciation" in w for w in short.warnings)


def test_a_plan_shorter_than_the_write_off_pays_only_its_share_of_the_card() -> None:
    # 6 months of 36: ¥20,000 x 6 / 36 = ¥3,333.33; power 350 W x 960 h = 336 kWh x ¥0.8 = ¥268.80.
    advice = advise(UsagePlan.from_months(160, 6), RentalPrices("CNY", D("5")), CARD)
    assert advice.option("buy").total.amount == D("3602.13")


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: UsagePlan.from_weeks(200, 4), "hours_per_week"),
        (lambda: UsagePlan.from_months(800, 4), "hours_per_month"),
        (lambda: UsagePlan.from_months(100, 0), "months"),
        (lambda: UsagePlan.from_months("lots", 3), "hours_per_month"),
        (lambda: advise(PLAN, RentalPrices("yuan", D(5))), "currency"),
        (lambda: advise(PLAN, RentalPrices("CNY", D(-5))), "on_demand_price"),
        (lambda: advise(PLAN, RentalPrices("CNY", D(5), monthly_price=D(0))), "monthly_price"),
        (
            lambda: advise(PLAN, RentalPrices("CNY", D(5)), PurchaseOption(D(1), D(1), D(1), 0)),
            "depreciation_months",
        ),
    ],
)
def test_bad_inputs_name_the_field(make: object, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        make()  # type: ignore[operator]
    assert info.value.field == field


def test_floats_are_refused_because_they_round_money() -> None:
    with pytest.raises(TypeError, match="not a float"):
        advise(PLAN, RentalPrices("CNY", 5.0))  # type: ignore[arg-type]
    # Text from an input field is fine, thousands separators included.
    assert UsagePlan.from_months(" 160 ", "36").total_hours == 5760
    assert to_decimal("card_price", "20,000") == D(20000)
