"""Formatters every feature shares (durations, aligned tables), so none imports another
feature for them."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from datetime import timedelta

from gpu_companion.core.common.i18n import _


def format_duration(delta: timedelta) -> str:
    """'45 min', '3 h', '3 h 10 min'."""
    minutes = int(delta.total_seconds() // 60)
    if minutes < 60:
        return _("{minutes} min").format(minutes=minutes)
    hours, rest = divmod(minutes, 60)
    if rest:
        return _("{hours} h {minutes} min").format(hours=hours, minutes=rest)
    return _("{hours} h").format(hours=hours)


def width(text: str) -> int:
    """Columns `text` takes in a terminal: a CJK character (汉字, full-width punctuation) takes
    two, a combining mark none."""
    return sum(
        0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns aligned with two spaces, a header line first; the last column is not padded
    (no trailing blanks). Values print as str; None as '-'. Chinese headers and values align:
    widths are terminal columns, not characters."""
    cells = [[("-" if v is None else str(v)) for v in row] for row in rows]
    table = [list(headers), *cells]
    widths = [max(width(r[i]) for r in table) for i in range(len(headers))]
    lines = []
    for r in table:
        padded = [c + " " * (w - width(c)) for c, w in zip(r[:-1], widths[:-1], strict=True)]
        lines.append("  ".join([*padded, r[-1]]).rstrip())
    return "\n".join(lines)
