"""Money as integer minor units per currency (no floats, no silent conversion) and its display."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from gpu_companion.core.hosts.registry import CURRENCIES

# ISO 4217 minor-unit digits for the currencies the app knows; everything else has 2.
_DIGITS = {"JPY": 0, "KRW": 0}
ZERO_DIGIT_CURRENCIES = tuple(c for c, d in _DIGITS.items() if d == 0)
_SYMBOLS = {
    "USD": "$",
    "EUR": "€",
    "GBP": "£",
    "CNY": "¥",
    "JPY": "¥",
    "KRW": "₩",
    "INR": "₹",
}


def digits(currency: str) -> int:
    return _DIGITS.get(currency, 2)


def check_currency(currency: str) -> str:
    code = currency.strip().upper()
    if code not in CURRENCIES:
        raise ValueError(f"unknown currency {currency!r}; use one of {', '.join(CURRENCIES)}")
    return code


def parse_decimal(text: str | Decimal | int, what: str = "amount") -> Decimal:
    """A decimal from user text ('1,234.50' accepted); ValueError with a plain message."""
    if isinstance(text, Decimal | int):
        return Decimal(text)
    cleaned = text.strip().replace(",", "").replace("_", "")
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        raise ValueError(f"{what} {text!r} is not a number") from None
    if not value.is_finite():
        raise ValueError(f"{what} {text!r} is not a number")
    return value


def to_minor(amount: Decimal, currency: str) -> int:
    """Round half up to the currency's smallest unit (cents, fen, yen)."""
    scaled = amount.scaleb(digits(currency)).quantize(Decimal(1), rounding=ROUND_HALF_UP)
    return int(scaled)


def from_minor(minor: int, currency: str) -> Decimal:
    return Decimal(minor).scaleb(-digits(currency))


def decimal_text(minor: int, currency: str) -> str:
    """The plain decimal form used in CSV files: '-12.50', '300' (JPY)."""
    d = digits(currency)
    if not d:
        return str(minor)
    whole, frac = divmod(abs(minor), 10**d)
    return f"{'-' if minor < 0 else ''}{whole}.{frac:0{d}d}"


def format_money(minor: int, currency: str, compact: bool = False) -> str:
    """'$12.50', '¥24', '-€3.00', 'CHF 4.00'; `compact` drops a zero fraction."""
    value = from_minor(abs(minor), currency)
    d = digits(currency)
    text = f"{value:,.{d}f}"
    if compact and d and value == value.to_integral_value():
        text = f"{value:,.0f}"
    sign = "-" if minor < 0 else ""
    symbol = _SYMBOLS.get(currency)
    return f"{sign}{symbol}{text}" if symbol else f"{sign}{currency} {text}"


def format_totals(totals: dict[str, int], compact: bool = False) -> str:
    """Totals per currency side by side ('$12.50 + ¥300'); '0' when empty."""
    parts = [format_money(v, c, compact) for c, v in sorted(totals.items()) if v]
    return " + ".join(parts) if parts else "0"
