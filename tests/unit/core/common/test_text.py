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


def test_a_table_with_chinese_headers_stays_aligned() -> None:
    """A CJK character takes two terminal columns: the next column starts at the same place on
    every line."""
    from gpu_companion.core.common.text import format_table, width

    rows = [["gpu-1", "203.0.113.7", "H100"], ["本机", "-", "-"]]
    out = format_table(["别名", "主机", "GPU"], rows)
    lines = out.splitlines()
    third = ("GPU", "H100", "-")
    starts = {width(line[: line.rindex(col)]) for line, col in zip(lines, third, strict=True)}
    assert len(starts) == 1, out
    assert width("显存 24 GB") == 10
