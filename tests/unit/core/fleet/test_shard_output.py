"""The end of a shard's output as the Runs page shows it: from a whole line, saying how much
came before; the whole file when it fits."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_companion.core.fleet.runs import Runs


@pytest.fixture
def runs(tmp_path: Path) -> Runs:
    (tmp_path / "r1" / "out" / "1").mkdir(parents=True)
    return Runs(tmp_path, ["ssh"])


def _write(runs: Runs, stream: str, data: bytes) -> None:
    (runs.root / "r1" / "out" / "1" / stream).write_bytes(data)


def test_a_short_output_is_shown_whole_with_its_errors(runs: Runs) -> None:
    _write(runs, "stdout", b"ok 1")
    _write(runs, "stderr", b"warning\n")
    assert runs.shard_text("r1", 1) == "ok 1\n--- stderr ---\nwarning\n"
    assert runs.shard_text("r1", 2) == ""  # no such shard yet: nothing, not an error


@pytest.mark.parametrize(
    ("data", "tail", "shown"),
    [
        (b"aaaa\nbbbb\ncccc\n", 6, "[… the first 10 bytes are not shown]\ncccc\n"),  # mid-line
        (b"aaaa\nbbbb\ncccc\n", 5, "[… the first 10 bytes are not shown]\ncccc\n"),  # line start
        (b"x" * 20, 6, "[… the first 14 bytes are not shown]\nxxxxxx"),  # no line to start at
    ],
)
def test_the_tail_starts_at_a_whole_line(runs: Runs, data: bytes, tail: int, shown: str) -> None:
    _write(runs, "stdout", data)
    assert runs.output("r1", 1, tail=tail) == shown
    assert runs.output("r1", 1) == data.decode()
