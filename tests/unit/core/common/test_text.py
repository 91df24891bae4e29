from __future__ import annotations

from datetime import timedelta

from gpu_companion.core.common.text import format_duration, format_table


def test_durations() -> None:
    assert format_duration(timedelta(minutes=45)) == "45 min"
    assert format_duration(timedelta(hours=3)) == "3 h"
    assert format_duration(timedelta(hours=3, minutes=10)) == "3 h 10 min"


def test_tables_align_with_a_header_and_no_trailing_blanks() -> None:
    out = format_table(("A", "LONG HEADER", "C"), [("xx", None, "last"), ("y", "z", "")])
    assert out.splitlines() == ["A   LONG HEADER  C", "xx  -            last", "y   z"]
