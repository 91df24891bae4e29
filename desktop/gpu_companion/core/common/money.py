"""Money, once: parsing user and file text, integer minor units per currency, and display.

Every amount or rate typed by a user or read from a file goes through `parse_decimal`, which knows
both decimal separators: a decimal comma is read as one ("0,39" is 0.39), never as a thousands
separator that makes the amount 100 times larger.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import cache

from gpu_companion.core.common import i18n
from gpu_companion.core.common.i18n import N_, _

# The currencies a platform, a rental or a budget can be in (ISO 4217 codes).
CURRENCIES = (
    "USD", "EUR", "GBP", "CNY", "JPY", "KRW", "INR", "CAD", "AUD", "CHF", "SGD", "HKD", "KWD",
)  # fmt: skip
# ISO 4217 minor-unit digits; a currency not listed has 2.
MINOR_DIGITS = {"JPY": 0, "KRW": 0, "VND": 0, "CLP": 0, "ISK": 0, "KWD": 3, "BHD": 3, "OMR": 3}
_SYMBOLS = {
    "USD": "$",
    "EUR": "€",
    "GBP": "£",
    "CNY": "¥",
    "JPY": "¥",
    "KRW": "₩",
    "INR": "₹",
}
# No bill, budget or rate is anywhere near this: a bigger number is a typo or a broken file.
MAX_AMOUNT = Decimal(10) ** 12
_IGNORED = " \u00a0\u202f\u2009'’_"  # spaces and apostrophes that group digits
_SYMBOL_CHARS = "$€£¥₩₹"
_PLAIN = re.compile(r"[+-]?[0-9.,]*[0-9][0-9.,]*")
_EXPONENT = re.compile(r"[+-]?[0-9]+(\.[0-9]+)?[eE][+-]?[0-9]+")
_SIMPLE = re.compile(r"-?[0-9]+(\.[0-9]+)?")  # "12", "0.39": read the same in every locale
HINT = N_("write digits with one decimal separator, e.g. 0.39 or 0,39")


def default_currency() -> str:
    """The currency a new platform or price starts in: yuan for a renter whose app speaks
    Chinese (the platforms they rent on bill in ¥), dollars otherwise."""
    return "CNY" if i18n.current() == "zh_CN" else "USD"


# The shipped languages' separators (CLDR), so showing money never loads Babel (~0.2 s)
_KNOWN_SYMBOLS = {"en_US": (".", ","), "zh_CN": (".", ",")}


@cache
def _symbols(locale: str) -> tuple[str, str]:
    """The locale's decimal and group separators (Babel's CLDR data for another language)."""
    if locale in _KNOWN_SYMBOLS:
        return _KNOWN_SYMBOLS[locale]
    from babel.numbers import get_decimal_symbol, get_group_symbol

    return get_decimal_symbol(locale), get_group_symbol(locale)


def _localised(text: str) -> str:
    """'1,234.50' written with the current language's separators."""
    decimal, group = _symbols(i18n.babel_locale())
    if (decimal, group) == (".", ","):
        return text
    return text.replace(",", "\0").replace(".", decimal).replace("\0", group)


def digits(currency: str) -> int:
    return MINOR_DIGITS.get(currency, 2)


def check_currency(currency: str) -> str:
    code = currency.strip().upper()
    if code not in CURRENCIES:
        raise ValueError(
            _("unknown currency {currency!r}; use one of {codes}").format(
                currency=currency, codes=", ".join(CURRENCIES)
            )
        )
    return code


def _decimal_separator(body: str, preferred: str | None) -> str | None:
    """Which of ',' and '.' separates the decimals in `body` (None: a whole number).

    Both present: the last one. One present once with exactly three digits after it is
    ambiguous ("1,234"): the locale's decimal separator decides (`preferred`, '.' by default);
    with any other digit count it can only be a decimal separator."""
    if "," in body and "." in body:
        return "," if body.rfind(",") > body.rfind(".") else "."
    sep = "," if "," in body else "." if "." in body else None
    if sep is None or body.count(sep) > 1:
        return None
    before, after = body.split(sep)
    can_group = len(after) == 3 and 1 <= len(before) <= 3 and not before.startswith("0")
    if not can_group:
        return sep
    return sep if sep == (preferred or ".") else None


def _grouped(whole: str, group: str) -> str | None:
    """The digits of `whole` with its thousands separators checked and removed."""
    parts = whole.split(group)
    if len(parts) == 1:
        return whole
    head, *middle, last = parts
    ok = 1 <= len(head) <= 3 and len(last) == 3 and all(len(p) in (2, 3) for p in middle)
    return "".join(parts) if ok else None


def parse_decimal(
    text: str | Decimal | int, what: str = "amount", decimal_sep: str | None = None
) -> Decimal:
    """A decimal from user or file text; ValueError with a message for the user.

    `decimal_sep` is the locale's (or the file's) decimal separator: it only decides the
    ambiguous "1,234" and "1.234"; "0,39", "0.39", "1,234.56" and "1.234,56" read the same
    everywhere."""
    if isinstance(text, Decimal | int):
        value = Decimal(text)
    else:
        value = _parse_text(text, what, decimal_sep)
    if not value.is_finite():
        raise ValueError(_("{what} {text!r} is not a number").format(what=what, text=text))
    if abs(value) >= MAX_AMOUNT:
        raise ValueError(
            _("{what} {text!r} is out of range (the most is {most})").format(
                what=what, text=text, most=f"{MAX_AMOUNT:,}"
            )
        )
    return value


def _parse_text(text: str, what: str, decimal_sep: str | None) -> Decimal:
    if decimal_sep != "," and _SIMPLE.fullmatch(text):  # most cells of a file: the fast way
        return Decimal(text)
    body = text.strip().strip(_SYMBOL_CHARS).strip()
    for ch in _IGNORED:
        body = body.replace(ch, "")
    if _EXPONENT.fullmatch(body):
        # "1e3" from a spreadsheet, kept as the plain number it is (an export writes "1000",
        # not "1E+3"); "1e30": the range check names it
        return Decimal(format(Decimal(body), "f"))
    if not _PLAIN.fullmatch(body):
        raise ValueError(_not_a_number(what, text))
    sign = "-" if body.startswith("-") else ""
    body = body.lstrip("+-")
    dec = _decimal_separator(body, decimal_sep)
    if dec is None:
        group = "." if "." in body else ","
    else:
        group = "." if dec == "," else ","
    whole, _sep, frac = body.rpartition(dec) if dec else (body, "", "")
    number = _grouped(whole, group) if whole else "0"
    if number is None or not number.isdigit() or not (frac.isdigit() or frac == ""):
        raise ValueError(
            _("{what} {text!r} is not a number; {hint} ('{group}' may only group thousands)")
            .format(what=what, text=text, hint=_(HINT), group=group)
        )
    try:
        return Decimal(f"{sign}{number}.{frac}" if frac else f"{sign}{number}")
    except InvalidOperation:  # pragma: no cover - the checks above leave only digits
        raise ValueError(_not_a_number(what, text)) from None


def _not_a_number(what: str, text: str) -> str:
    return _("{what} {text!r} is not a number; {hint}").format(what=what, text=text, hint=_(HINT))


def to_minor(amount: Decimal, currency: str) -> int:
    """Round half up to the currency's smallest unit (cents, fils, yen)."""
    scaled = amount.scaleb(digits(currency)).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return int(scaled)


def from_minor(minor: int, currency: str) -> Decimal:
    return Decimal(minor).scaleb(-digits(currency))


def parse_money(
    text: str | Decimal | int, currency: str, what: str = "amount", decimal_sep: str | None = None
) -> int:
    """User or file text straight to minor units of `currency`."""
    return to_minor(parse_decimal(text, what, decimal_sep), currency)


def decimal_text(minor: int, currency: str) -> str:
    """The plain decimal form used in CSV files: '-12.50', '300' (JPY), '1.250' (KWD)."""
    d = digits(currency)
    if not d:
        return str(minor)
    whole, frac = divmod(abs(minor), 10**d)
    return f"{'-' if minor < 0 else ''}{whole}.{frac:0{d}d}"


def _with_symbol(sign: str, text: str, currency: str) -> str:
    symbol = _SYMBOLS.get(currency)
    return f"{sign}{symbol}{text}" if symbol else f"{sign}{currency} {text}"


def format_money(minor: int, currency: str, compact: bool = False) -> str:
    """'$12.50', '¥24', '-€3.00', 'CHF 4.00'; `compact` drops a zero fraction."""
    value = from_minor(abs(minor), currency)
    d = digits(currency)
    text = f"{value:,.{d}f}"
    if compact and d and value == value.to_integral_value():
        text = f"{value:,.0f}"
    return _with_symbol("-" if minor < 0 else "", _localised(text), currency)


def format_amount(value: Decimal, currency: str) -> str:
    """A rate or price as typed, never rounded away: '$2.65', '$0.3945', '¥300'."""
    exponent = value.normalize().as_tuple().exponent
    places = -exponent if isinstance(exponent, int) else 0
    shown = max(digits(currency), min(6, places))
    return _with_symbol("-" if value < 0 else "", _localised(f"{abs(value):,.{shown}f}"), currency)


def per_hour(amount: str) -> str:
    """'$2.65/h', '¥3.20/小时': a formatted amount as an hourly rate."""
    return _("{amount}/h").format(amount=amount)


def format_rate(minor: int, currency: str, compact: bool = False) -> str:
    """An hourly rate in minor units: '$2.40/h', '¥8/小时' (compact)."""
    return per_hour(format_money(minor, currency, compact))


def format_totals(totals: dict[str, int], compact: bool = False) -> str:
    """Totals per currency side by side ('$12.50 + ¥300'); '0' when empty."""
    parts = [format_money(v, c, compact) for c, v in sorted(totals.items()) if v]
    return " + ".join(parts) if parts else "0"


# --- prices per GPU and per instance ----------------------------------------------------------


def instance_rate(per_gpu: Decimal, gpu_count: int) -> Decimal:
    """What the instance costs per hour (or period) when each of its GPUs costs `per_gpu`."""
    if gpu_count < 1:
        raise ValueError(_("a price per GPU needs at least one GPU"))
    return per_gpu * gpu_count


def rate_derivation(per_gpu: Decimal, gpu_count: int, currency: str, unit: str = "h") -> str:
    """'8 × $2.65 = $21.20/h': the instance rate shown with the per-GPU price it comes from."""
    total = instance_rate(per_gpu, gpu_count)
    rate = per_hour(format_amount(total, currency)) if unit == "h" else (
        f"{format_amount(total, currency)}/{unit}"
    )
    return f"{gpu_count} × {format_amount(per_gpu, currency)} = {rate}"


def sentence(exc: ValueError) -> str:
    """A parse error as a sentence for a form ('The rate 'x' is not a number; ….')."""
    text = str(exc)
    return f"{text[:1].upper()}{text[1:]}{'' if text.endswith('.') else '.'}"
