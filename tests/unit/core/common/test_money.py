"""One money module: text from users and files in either decimal convention, minor units per
currency, and the per-GPU to per-instance rate with its derivation."""

from decimal import Decimal as D

import pytest

from gpu_companion.core.common.money import (
    decimal_text,
    format_amount,
    parse_decimal,
    parse_money,
    rate_derivation,
    to_minor,
)
from gpu_companion.core.planning.billing import Money, to_decimal


@pytest.mark.parametrize(
    ("text", "locale_sep", "value"),
    [
        ("0,39", ".", D("0.39")),  # a decimal comma stays a decimal comma, never 39
        ("0,39", ",", D("0.39")),
        ("0,39", None, D("0.39")),
        ("0.39", ",", D("0.39")),
        ("1,234.56", ",", D("1234.56")),
        ("1.234,56", ".", D("1234.56")),
        ("1,234", ".", D("1234")),  # ambiguous: the locale decides
        ("1,234", ",", D("1.234")),
        ("1.234", ",", D("1234")),
        ("1.234", ".", D("1.234")),
        ("1 234,50", ",", D("1234.50")),
        ("1\u202f234,50", ",", D("1234.50")),
        ("12,34,567.8", ".", D("1234567.8")),
        ("$2.65", ".", D("2.65")),
        ("-12.50", ".", D("-12.50")),
        (" 7 ", ".", D("7")),
    ],
)
def test_both_decimal_conventions_read_right(text, locale_sep, value):
    assert parse_decimal(text, "the rate", locale_sep) == value


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1,2,3", "is not a number"),
        ("1.234.56", "is not a number"),
        ("1,23.45,6", "is not a number"),
        ("abc", "is not a number; write digits with one decimal separator"),
        ("", "is not a number"),
        ("NaN", "is not a number"),
        ("1e30", "is out of range"),
        ("1000000000000", "is out of range"),
    ],
)
def test_bad_text_is_refused_with_a_message(text, message):
    with pytest.raises(ValueError, match=message):
        parse_decimal(text, "the rate")


def test_minor_units_follow_each_currencys_digits():
    assert parse_money("0,39", "USD") == 39
    assert parse_money("1.234,5", "JPY") == 1235
    assert to_minor(D("1.2345"), "KWD") == 1235
    assert decimal_text(1235, "KWD") == "1.235" and decimal_text(300, "JPY") == "300"
    assert str(Money.of(D("1234.5"), "JPY")) == "JPY 1,235"
    assert str(Money.of(D("2.0004"), "KWD")) == "KWD 2.000"


def test_planning_parses_through_the_same_module():
    assert to_decimal("on_demand_price", "0,39") == D("0.39")
    assert to_decimal("card_price", "20,000") == D(20000)


def test_the_instance_rate_is_shown_with_its_derivation():
    assert rate_derivation(D("2.65"), 8, "USD") == "8 × $2.65 = $21.20/h"
    assert rate_derivation(D("300"), 2, "JPY", "month") == "2 × ¥300 = ¥600/month"
    assert format_amount(D("0.3945"), "USD") == "$0.3945"
    with pytest.raises(ValueError, match="at least one GPU"):
        rate_derivation(D("1"), 0, "USD")


def test_an_exponent_from_a_spreadsheet_is_kept_as_the_plain_number() -> None:
    """A rate typed as 1e3 reads as 1000 and is written back as 1000, never "1E+3"."""
    assert str(parse_decimal("1e3", "the rate")) == "1000"
    assert str(parse_decimal("2.5E-1", "the rate")) == "0.25"
    assert decimal_text(to_minor(parse_decimal("1e3"), "USD"), "USD") == "1000.00"
