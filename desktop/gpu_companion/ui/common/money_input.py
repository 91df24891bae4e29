"""Money typed by the user, read in the user's locale: the one UI door to `core.common.money`.

The locale only decides the ambiguous "1,234"; "0,39" is 0.39 in every locale.
"""

from __future__ import annotations

from decimal import Decimal

from PySide6.QtCore import QLocale

from gpu_companion.core.common.money import parse_decimal


def decimal_point() -> str:
    """The decimal separator of the locale the app runs in ('.' or ',')."""
    point = QLocale().decimalPoint()
    return "," if point == "," else "."


def parse_user_amount(text: str, what: str) -> Decimal:
    """An amount or rate from an input field; ValueError with a message for the user."""
    return parse_decimal(text, what, decimal_point())
