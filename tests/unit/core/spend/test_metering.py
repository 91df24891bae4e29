"""Time travel: the meter at chosen instants for each billing rule, no sleeping."""

from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from gpu_companion.core.common.money import format_money, to_minor
from gpu_companion.core.spend.metering import (
    Rental,
    accrued_minor,
    billed_seconds,
    bucket_label,
    bucket_start,
    next_bucket,
)

T0 = datetime(2025, 3, 1, 10, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("elapsed", "granularity", "billed"),
    [
        (0, "second", 0),
        (1, "second", 1),
        (61, "second", 61),
        (1, "minute", 60),
        (60, "minute", 60),
        (61, "minute", 120),
        (1, "hour", 3600),
        (3600, "hour", 3600),
        (3601, "hour", 7200),
    ],
)
def test_each_started_unit_is_billed_whole(elapsed, granularity, billed):
    assert billed_seconds(elapsed, granularity) == billed


@pytest.mark.parametrize(
    ("granularity", "after", "cents"),
    [
        # $2.40/h: per second 90 min 30 s = 5430 s -> 2.40 * 5430 / 3600 = 3.62
        ("second", timedelta(minutes=90, seconds=30), 362),
        # per minute: 91 started minutes -> 2.40 * 91 / 60 = 3.64
        ("minute", timedelta(minutes=90, seconds=30), 364),
        # started hour: 2 hours -> 4.80
        ("hour", timedelta(minutes=90, seconds=30), 480),
        ("hour", timedelta(seconds=1), 240),
        ("second", timedelta(0), 0),
    ],
)
def test_cost_at_chosen_instants(granularity, after, cents):
    r = Rental(1, Decimal("2.40"), "USD", T0, granularity=granularity)
    assert r.cost_at(T0 + after) == cents


def test_weekly_and_monthly_plans_charge_each_started_period():
    week = Rental(1, Decimal("300"), "USD", T0, billing_mode="weekly")
    assert week.cost_at(T0 + timedelta(hours=1)) == 30000
    assert week.cost_at(T0 + timedelta(days=7)) == 30000
    assert week.cost_at(T0 + timedelta(days=7, seconds=1)) == 60000
    month = Rental(1, Decimal("5000"), "CNY", T0, billing_mode="monthly")
    assert month.cost_at(T0 + timedelta(days=31)) == 1_000_000


def test_yen_have_no_minor_unit_and_rounding_is_half_up():
    assert (
        accrued_minor(Decimal("100"), "JPY", "on-demand", "second", T0, T0 + timedelta(seconds=90))
        == 3
    )  # 2.5 yen -> 3
    assert to_minor(Decimal("0.005"), "USD") == 1
    assert format_money(2400, "CNY", compact=True) == "¥24"
    assert format_money(-1250, "EUR") == "-€12.50"
    assert format_money(300, "JPY") == "¥300"
    assert format_money(400, "CHF") == "CHF 4.00"


def test_an_ended_rental_keeps_its_final_cost_and_splits_exactly_across_days():
    end = T0 + timedelta(hours=20)  # 10:00 -> 06:00 next day
    r = Rental(1, Decimal("1.00"), "USD", T0, ended_at=end, cost_minor=2000)
    later = end + timedelta(days=3)
    assert r.cost_at(later) == 2000
    midnight = datetime(2025, 3, 2, tzinfo=timezone.utc)
    first, second = r.cost_between(T0, midnight, later), r.cost_between(midnight, end, later)
    assert (first, second) == (1400, 600)


def test_a_running_rental_books_its_meter_into_each_day():
    r = Rental(1, Decimal("1.00"), "USD", T0, granularity="hour")
    now = T0 + timedelta(hours=15, minutes=1)  # 01:01 next day: 16 started hours
    midnight = datetime(2025, 3, 2, tzinfo=timezone.utc)
    assert r.cost_between(T0, midnight, now) == 1400
    assert r.cost_between(midnight, midnight + timedelta(days=1), now) == 200
    assert r.cost_at(now) == 1600


def test_local_periods_follow_the_users_offset():
    tz = timezone(timedelta(hours=8))
    when = datetime(2025, 3, 2, 17, 0, tzinfo=timezone.utc)  # Monday 01:00 in UTC+8
    assert bucket_start(when, "day", tz) == datetime(2025, 3, 2, 16, 0, tzinfo=timezone.utc)
    assert bucket_label(bucket_start(when, "week", tz), "week", tz) == "2025-03-03"
    month = bucket_start(when, "month", tz)
    assert bucket_label(month, "month", tz) == "2025-03"
    assert bucket_label(next_bucket(month, "month", tz), "month", tz) == "2025-04"
    dec = bucket_start(datetime(2025, 12, 5, tzinfo=timezone.utc), "month", timezone.utc)
    assert bucket_label(next_bucket(dec, "month", timezone.utc), "month", timezone.utc) == (
        "2026-01"
    )
