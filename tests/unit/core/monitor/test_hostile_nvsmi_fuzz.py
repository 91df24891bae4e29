"""Fuzz: whatever line a hostile nvidia-smi prints, the parser returns a sample or raises its own
NvsmiParseError (a dropped line, counted) - nothing else escapes - in time linear in the line."""

from __future__ import annotations

import math
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_companion.core.monitor.nvsmi import (
    DEFAULT_COMPUTE_APPS_FIELDS,
    DEFAULT_FIELDS,
    NvsmiParseError,
    parse_compute_apps_csv,
    parse_compute_apps_line,
    parse_query_gpu_csv,
    parse_query_gpu_line,
)
from gpu_companion.core.monitor.nvsmi import (
    GpuSample as _GpuSample,
)

values = st.one_of(
    st.sampled_from(
        ["0", "87 %", "5120 MiB", "[N/A]", "N/A", "inf", "nan", "-1", "1e999", "9" * 400, ""]
    ),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.integers().map(str),
    st.text(max_size=20),
)


def _finite_numbers(sample: _GpuSample) -> bool:
    return all(
        not isinstance(v, float) or math.isfinite(v)
        for v in vars(sample).values()
        if isinstance(v, int | float)
    )


@settings(max_examples=400, deadline=None)
@given(st.lists(values, min_size=0, max_size=len(DEFAULT_FIELDS) + 2))
def test_fuzz_a_gpu_line_parses_or_is_refused(cells: list[str]) -> None:
    try:
        sample = parse_query_gpu_line(", ".join(cells), DEFAULT_FIELDS)
    except NvsmiParseError:
        return
    assert _finite_numbers(sample)


@settings(max_examples=200, deadline=None)
@given(st.lists(values, max_size=len(DEFAULT_COMPUTE_APPS_FIELDS) + 2))
def test_fuzz_a_process_line_parses_or_is_refused(cells: list[str]) -> None:
    try:
        parse_compute_apps_line(", ".join(cells), DEFAULT_COMPUTE_APPS_FIELDS)
    except NvsmiParseError:
        return


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=3000))
def test_fuzz_whole_outputs_never_raise(text: str) -> None:
    parse_query_gpu_csv(text, DEFAULT_FIELDS)
    parse_compute_apps_csv(text, DEFAULT_COMPUTE_APPS_FIELDS)


def test_time_is_linear_in_the_line() -> None:
    def seconds(n: int) -> float:
        line = ", ".join(["0"] + ["9" * n] * (len(DEFAULT_FIELDS) - 1))
        start = time.process_time()
        for _ in range(20):
            try:
                parse_query_gpu_line(line, DEFAULT_FIELDS)
            except NvsmiParseError:
                pass
        return time.process_time() - start

    small, large = seconds(10_000), seconds(100_000)
    assert large < max(small, 0.02) * 30  # 10x the input: nowhere near 100x the time
