"""A hostile nvidia-smi row with one absurd value (400 digits, inf, nan, a 10 KiB number) loses
that value only, counted; the rest of the reading stands. `inspect --json` prints strict JSON."""

from __future__ import annotations

import json
import math

import pytest

from gpu_companion.commands.inspect import json_text
from gpu_companion.core.monitor.nvsmi import NvsmiParseError, parse_query_gpu_line

FIELDS = ("index", "utilization.gpu", "memory.used", "power.draw", "temperature.gpu")


@pytest.mark.parametrize(
    "bad", ["9" * 400, "1e999", "inf", "nan", "-" + "9" * 400 + " W", "7" * 10_000]
)
def test_one_absurd_value_drops_that_field_only(bad: str) -> None:
    sample = parse_query_gpu_line(f"0, 87 %, 5120 MiB, {bad}, 61", FIELDS)
    assert sample.index == 0 and sample.utilization_gpu == 87
    assert sample.memory_used_mib == 5120 and sample.temperature_c == 61
    assert sample.power_draw_w is None and sample.dropped == ("power.draw",)


def test_an_absurd_integer_field_is_dropped_not_an_overflow() -> None:
    sample = parse_query_gpu_line(f"1, {'9' * 400}, 5120 MiB, 100.5 W, 61", FIELDS)
    assert sample.utilization_gpu is None and sample.dropped == ("utilization.gpu",)
    assert sample.power_draw_w == 100.5


def test_an_unreadable_index_drops_the_row() -> None:
    with pytest.raises(NvsmiParseError):
        parse_query_gpu_line(f"{'9' * 400}, 87, 5120, 100, 61", FIELDS)


def test_json_output_never_has_infinity_or_nan() -> None:
    text = json_text([{"gpus": [{"power": math.inf, "util": math.nan, "ok": 1.5}]}])
    assert "Infinity" not in text and "NaN" not in text
    assert json.loads(text) == [{"gpus": [{"power": None, "util": None, "ok": 1.5}]}]
