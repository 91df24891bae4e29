"""Formatters every feature shares (durations, aligned tables), so none imports another
feature for them."""

from __future__ import annotations

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


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Columns aligned with two spaces, a header line first; the last column is not padded
    (no trailing blanks). Values print as str; None as '-'."""
    cells = [[("-" if v is None else str(v)) for v in row] for row in rows]
    table = [list(headers), *cells]
    widths = [max(len(r[i]) for r in table) for i in range(len(headers))]
    lines = []
    for r in table:
        padded = [c.ljust(w) for c, w in zip(r[:-1], widths[:-1], strict=True)]
        lines.append("  ".join([*padded, r[-1]]).rstrip())
    return "\n".join(lines)
