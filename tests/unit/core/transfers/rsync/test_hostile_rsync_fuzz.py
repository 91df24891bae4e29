"""Fuzz: rsync's itemized lists, progress lines and stats as a hostile host (its file names, its
rsync) can shape them: no exception escapes the parsers, in time linear in the output."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_companion.core.transfers.rsync.engine import deletions, itemized_differences
from gpu_companion.core.transfers.rsync.progress import (
    RsyncProgressParser,
    classify_line,
    parse_stats,
)

pieces = st.one_of(
    st.sampled_from(
        [
            ">f+++++++++ ",
            "*deleting   ",
            "cd+++++++++ ",
            ".f..t...... ",
            "\r",
            "\n",
            "  1,234,567  45%  12.34MB/s    0:01:02",
            " (xfr#1, to-chk=0/3)",
            "rsync error: ",
            "Number of files: 3",
            "Total file size: 9" + "9" * 300 + " bytes",
            "\x1b]52;c;eA==\x07",
        ]
    ),
    st.text(max_size=30),
)
outputs = st.lists(pieces, max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(outputs)
def test_fuzz_itemized_and_stats_never_raise(text: str) -> None:
    itemized_differences(text)
    deletions(text)
    parse_stats(text)
    for line in text.splitlines():
        classify_line(line)


@settings(max_examples=200, deadline=None)
@given(st.lists(outputs, max_size=10))
def test_fuzz_progress_chunks_never_raise(chunks: list[str]) -> None:
    parser = RsyncProgressParser()
    for chunk in chunks:
        parser.feed(chunk)


def test_progress_parser_is_linear_in_an_endless_line() -> None:
    def seconds(n: int) -> float:
        parser = RsyncProgressParser()
        start = time.process_time()
        for _ in range(n):
            parser.feed("x" * 4096)  # no newline, no carriage return: one endless name
        return time.process_time() - start

    small, large = seconds(20), seconds(200)
    assert large < max(small, 0.02) * 30
