"""RsyncProgressParser and parse_stats: samples written here, plus real local rsync runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_companion.core.transfers.rsync.progress import (
    MAX_LINE_CHARS,
    FileStarted,
    Progress,
    ProgressEvent,
    RsyncMessage,
    RsyncProgressParser,
    parse_progress,
    parse_size,
    parse_stats,
)
from tests.conftest import missing_component

KIB = 1024.0
MIB = 1024.0**2
GIB = 1024.0**3


def progresses(events: list[ProgressEvent]) -> list[Progress]:
    return [e for e in events if isinstance(e, Progress)]


def messages(events: list[ProgressEvent]) -> list[RsyncMessage]:
    return [e for e in events if isinstance(e, RsyncMessage)]


def only_progress(line: str) -> Progress:
    found = progresses(parse_progress(line))
    assert len(found) == 1, found
    return found[0]


# --- single lines -------------------------------------------------------------------------------


def test_progress2_redraw_has_eta_and_no_counters() -> None:
    p = only_progress("\r     73,400,320  37%   12.50MB/s    0:01:52  ")
    assert p.bytes_done == 73_400_320
    assert p.percent == 37
    assert p.rate_bps == pytest.approx(12.5 * MIB)
    assert p.eta_s == 112
    assert p.elapsed_s is None
    assert p.xfr is None and p.to_check_remaining is None and p.to_check_total is None
    assert not p.incremental_scan
    assert not p.is_final


def test_final_line_time_is_elapsed_and_counters_are_read() -> None:
    p = only_progress("    880,000,001 100%   45.10MB/s    0:00:19 (xfr#12, to-chk=7/40)\n")
    assert p.bytes_done == 880_000_001
    assert p.elapsed_s == 19 and p.eta_s is None
    assert (p.xfr, p.to_check_remaining, p.to_check_total) == (12, 7, 40)
    assert p.is_final


def test_incremental_scan_is_flagged() -> None:
    p = only_progress("  5,000  2%  1.00kB/s  0:00:01 (xfr#3, ir-chk=90/300)")
    assert p.incremental_scan
    assert (p.to_check_remaining, p.to_check_total) == (90, 300)


def test_rsync_30_format_without_separators() -> None:
    p = only_progress("   734003200 100%   20.00MB/s    0:00:35 (xfer#4, to-check=2/9)")
    assert p.bytes_done == 734_003_200
    assert (p.xfr, p.to_check_remaining, p.to_check_total) == (4, 2, 9)
    assert p.elapsed_s == 35


@pytest.mark.parametrize(
    ("token", "base", "expected"),
    [
        ("3.07K", 1000, 3070),
        ("812", 1000, 812),
        ("48.20M", 1000, 48_200_000),
        ("7.55G", 1000, 7_550_000_000),
        ("1.25T", 1000, 1_250_000_000_000),
        ("2.00K", 1024, 2048),
        ("1,234,567", 1000, 1_234_567),
        ("1.234.567", 1000, 1_234_567),  # dot-grouping locale
        ("3,50G", 1000, 3_500_000_000),  # comma-decimal locale with -h
        ("nonsense", 1000, None),
    ],
)
def test_parse_size(token: str, base: int, expected: int | None) -> None:
    assert parse_size(token, base) == expected


def test_human_readable_line() -> None:
    p = only_progress("          9.81G  63%   88.02MB/s    0:01:04  ")
    assert p.bytes_done == 9_810_000_000
    assert p.rate_bps == pytest.approx(88.02 * MIB)


def test_human_base_1024_for_double_h() -> None:
    parser = RsyncProgressParser(human_base=1024)
    events = parser.feed("          1.50M  10%    1.00MB/s    0:00:09  \n") + parser.finish()
    assert progresses(events)[0].bytes_done == int(1.5 * 1024 * 1024)


@pytest.mark.parametrize(
    ("rate", "expected"),
    [("512.00kB/s", 512 * KIB), ("1023.99kB/s", 1023.99 * KIB), ("3.25MB/s", 3.25 * MIB)]
    + [("1.10GB/s", 1.1 * GIB)],
)
def test_rate_units_are_binary(rate: str, expected: float) -> None:
    p = only_progress(f"  1,000  50% {rate:>11}    0:00:02  ")
    assert p.rate_bps == pytest.approx(expected)


def test_unknown_eta() -> None:
    p = only_progress("    4,096   0%    0.01kB/s  ??:??:??  ")
    assert p.eta_s is None and p.elapsed_s is None


def test_zero_rate_means_no_eta_yet() -> None:
    # rsync prints 0:00:00 before it has measured anything; that is not "done in 0 s".
    p = only_progress("\r         65,536   0%    0.00kB/s    0:00:00  ")
    assert p.eta_s is None
    assert p.rate_bps == 0.0


def test_long_eta_hours() -> None:
    assert only_progress(" 1,000   1%    0.50kB/s  123:04:05  ").eta_s == 123 * 3600 + 245


def test_locale_digits_and_comma_decimal() -> None:
    p = only_progress("1.234.567.890.123  61%   95,25MB/s    1:02:03  ")
    assert p.bytes_done == 1_234_567_890_123
    assert p.percent == 61
    assert p.rate_bps == pytest.approx(95.25 * MIB)
    assert p.eta_s == 3723


def test_trailing_padding_is_ignored() -> None:
    events = parse_progress("     1,024,000 100%    2.00MB/s    0:00:00 (xfr#1, to-chk=0/1)      ")
    assert [type(e) for e in events] == [Progress]


def test_name_and_final_progress_on_one_line() -> None:
    events = parse_progress(
        "weights.safetensors  4,000,000,000 100%   99.90MB/s    0:00:38 (xfr#1, to-chk=3/4)\n"
    )
    assert events[0] == FileStarted("weights.safetensors")
    p = events[1]
    assert isinstance(p, Progress)
    assert p.bytes_done == 4_000_000_000 and p.current_file == "weights.safetensors"


def test_name_ending_in_digits_stays_whole() -> None:
    events = parse_progress("run 2  700 100%    0.68kB/s    0:00:00 (xfr#2, to-chk=0/2)\n")
    assert events[0] == FileStarted("run 2")
    assert progresses(events)[0].bytes_done == 700


# --- messages -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ssh_text",
    [
        "client_loop: send disconnect: Connection reset by peer",
        "packet_write_wait: Connection to 203.0.113.9 port 41022: Broken pipe",
        "Connection to 198.51.100.4 closed by remote host.",
        "rsync error: received SIGINT, SIGTERM, or SIGHUP (code 20) at rsync.c(700) [sender=3.2.7]",
    ],
)
def test_message_in_the_middle_of_a_progress_line_is_split_off(ssh_text: str) -> None:
    events = parse_progress(f"\r     20,971,520  14%    6.40MB/s    0:00:21  {ssh_text}\r\n")
    assert len(events) == 2
    assert isinstance(events[0], Progress) and events[0].bytes_done == 20_971_520
    assert events[1] == RsyncMessage(ssh_text, "error")


def test_levels_of_common_lines() -> None:
    events = parse_progress(
        "sending incremental file list\n"
        "Warning: Permanently added '[10.0.0.2]:2222' (ED25519) to the list of known hosts.\n"
        'rsync: [sender] link_stat "/data/missing" failed: No such file or directory (2)\n'
        "rsync warning: some files vanished before they could be transferred (code 24) "
        "at main.c(1300) [sender=3.2.7]\n"
        "[receiver] io timeout after 30 seconds -- exiting\n"
        "user@10.0.0.2: Permission denied (publickey).\n"
    )
    assert [m.level for m in messages(events)] == [
        "info",
        "warning",
        "error",
        "warning",
        "error",
        "error",
    ]


def test_name_line_becomes_file_started_only_when_progress_follows() -> None:
    events = parse_progress(
        "ckpt/\n"
        "ckpt/step-100.pt\n"
        "\r         32,768   0%    0.00kB/s    0:00:00  "
        "\r      5,000,000 100%    4.77MB/s    0:00:01 (xfr#1, to-chk=1/3)\n"
        "notes.txt\n"
    )
    assert events[0] == RsyncMessage("ckpt/", "info")
    assert events[1] == FileStarted("ckpt/step-100.pt")
    assert [p.current_file for p in progresses(events)] == ["ckpt/step-100.pt"] * 2
    assert events[-1] == RsyncMessage("notes.txt", "info")  # no transfer followed it


def test_itemized_transfer_line_names_the_file() -> None:
    events = parse_progress(">f+++++++++ data/train.bin\n  100  50%  0.10kB/s  0:00:01  \n")
    assert events[0] == FileStarted("data/train.bin")
    assert progresses(events)[0].current_file == "data/train.bin"


# --- streaming ----------------------------------------------------------------------------------


def test_partial_tail_is_kept_between_chunks() -> None:
    parser = RsyncProgressParser()
    assert parser.feed("    1,0") == []
    assert parser.feed("48,576  10%    1.00MB/s") == []
    events = parser.feed("    0:00:09 (xfr#1, to-chk=4/5)\n")
    assert progresses(events)[0].bytes_done == 1_048_576


def test_complete_redraw_is_reported_before_the_next_carriage_return() -> None:
    parser = RsyncProgressParser()
    first = parser.feed("\r      2,097,152  20%    1.00MB/s    0:00:08  ")
    assert progresses(first)[0].bytes_done == 2_097_152
    # The same redraw is not reported twice once its line ends.
    assert parser.feed("\r") == []
    assert parser.finish() == []


def test_carriage_return_newline_split_across_chunks() -> None:
    parser = RsyncProgressParser()
    events = parser.feed("Connection to 192.0.2.1 closed.\r")
    events += parser.feed("\nrsync: [sender] write error: Broken pipe (32)\n")
    assert [m.text for m in messages(events)] == [
        "Connection to 192.0.2.1 closed.",
        "rsync: [sender] write error: Broken pipe (32)",
    ]


def test_finish_flushes_tail_and_held_name() -> None:
    parser = RsyncProgressParser()
    assert parser.feed("sub/model.bin\n") == []  # held: is a transfer coming?
    assert parser.feed("rsync error: timeout") == []
    assert parser.finish() == [
        RsyncMessage("sub/model.bin", "info"),
        RsyncMessage("rsync error: timeout", "error"),
    ]


def test_openrsync_counts_up() -> None:
    parser = RsyncProgressParser(check_counts_up=True)
    events = parser.feed("  1000 100%  1.00kB/s  0:00:01 (xfer#2, to-check=2/5)\n")
    assert progresses(events)[0].to_check_remaining == 3


STREAM = (
    "sending incremental file list\n"
    "./\n"
    "models/llama.gguf\n"
    "\r         32,768   0%    0.00kB/s    0:00:00  "
    "\r    104,857,600  25%   99.99MB/s    0:00:03  "
    "\r    419,430,400 100%  101.25MB/s    0:00:04 (xfr#1, to-chk=2/4)\n"
    "weights.safetensors  8,192 100%    8.00kB/s    0:00:00 (xfr#2, to-chk=1/4)\n"
    "\r     6.00M  40%  1,50MB/s  ??:??:??  \r"
    "\r  7,340,032  70%    1.20GB/s    0:00:00  client_loop: send disconnect: Broken pipe\r\n"
    ">f..t...... logs/run.txt\n"
    "\r  15,728,640  99%   12.00MB/s    0:00:01 (xfr#3, ir-chk=1/4)         \r"
    "rsync: [sender] write error: Broken pipe (32)\n"
    "rsync error: unexplained error (code 255) at io.c(848) [sender=3.2.7]\n"
    "\r   1,000   1%  0.98kB/s    0:00:00  "
)


@settings(max_examples=300, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=40))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    expected = parse_progress(STREAM)
    bounds = [0, *sorted(cuts), len(STREAM)]
    parser = RsyncProgressParser()
    got: list[ProgressEvent] = []
    for start, end in zip(bounds, bounds[1:], strict=False):
        got += parser.feed(STREAM[start:end])
    got += parser.finish()
    assert got == expected


@settings(max_examples=200, deadline=None)
@given(
    pieces=st.lists(
        st.sampled_from(
            [
                "data/a.bin",
                "\r  1,234  12%  1.00kB/s  0:00:09  ",
                "\r  9,999 100%  2.00MB/s  0:00:01 (xfr#7, to-chk=0/9)",
                "packet_write_wait: Connection to 192.0.2.5 port 22: Broken pipe",
                "rsync error: error in socket IO (code 10) at io.c(1) [receiver=3.1.3]",
                "\n",
                "\r",
                "\r\n",
                "   ",
            ]
        ),
        max_size=25,
    ),
    size=st.integers(min_value=1, max_value=13),
)
def test_random_streams_in_fixed_chunks(pieces: list[str], size: int) -> None:
    text = "".join(pieces)
    parser = RsyncProgressParser()
    got: list[ProgressEvent] = []
    for start in range(0, len(text), size):
        got += parser.feed(text[start : start + size])
    got += parser.finish()
    assert got == parse_progress(text)


def test_every_progress_in_stream_sample() -> None:
    found = progresses(parse_progress(STREAM))
    assert [p.bytes_done for p in found] == [
        32_768,
        104_857_600,
        419_430_400,
        8_192,
        6_000_000,
        7_340_032,
        15_728_640,
        1_000,
    ]
    assert found[4].rate_bps == pytest.approx(1.5 * MIB)
    assert found[6].incremental_scan


# --- --stats ------------------------------------------------------------------------------------

STATS_31 = """
Number of files: 1,207 (reg: 1,200, dir: 7)
Number of created files: 3 (reg: 3)
Number of deleted files: 0
Number of regular files transferred: 3
Total file size: 9,876,543,210 bytes
Total transferred file size: 123,456,789 bytes
Literal data: 23,456,789 bytes
Matched data: 100,000,000 bytes
File list size: 45,678
File list generation time: 0.004 seconds
File list transfer time: 0.000 seconds
Total bytes sent: 23,600,001
Total bytes received: 71,234

sent 23,600,001 bytes  received 71,234 bytes  4,734,247.00 bytes/sec
total size is 9,876,543,210  speedup is 417.24
"""

STATS_30_HUMAN = """
Number of files: 12
Number of files transferred: 4
Total file size: 3.20G bytes
Total transferred file size: 1.10G bytes
Literal data: 1.10G bytes
Matched data: 0 bytes
File list size: 312
Total bytes sent: 1.10G
Total bytes received: 98
"""


def test_parse_stats_31() -> None:
    s = parse_stats(STATS_31)
    assert s.number_of_files == 1207
    assert s.number_of_created_files == 3
    assert s.number_of_deleted_files == 0
    assert s.files_transferred == 3
    assert s.total_file_size == 9_876_543_210
    assert s.total_transferred_file_size == 123_456_789
    assert s.literal_data == 23_456_789
    assert s.matched_data == 100_000_000
    assert s.file_list_size == 45_678
    assert s.total_bytes_sent == 23_600_001
    assert s.total_bytes_received == 71_234
    assert s.speedup == pytest.approx(417.24)


def test_parse_stats_30_human() -> None:
    s = parse_stats(STATS_30_HUMAN)
    assert s.number_of_files == 12
    assert s.files_transferred == 4
    assert s.total_file_size == 3_200_000_000
    assert s.total_bytes_received == 98
    assert s.number_of_created_files is None  # 3.0 does not print it
    assert s.speedup is None


# --- a hostile or broken remote -----------------------------------------------------------------


def test_megabytes_of_percent_without_a_newline_stay_linear_and_bounded() -> None:
    parser = RsyncProgressParser()
    chunk = "%" * 65536
    started = time.perf_counter()
    events: list[ProgressEvent] = []
    for _ in range(256):  # 16 MiB; the old parser re-read its whole tail per chunk (minutes)
        events += parser.feed(chunk)
        assert len(parser._tail) <= MAX_LINE_CHARS
    elapsed = time.perf_counter() - started
    assert elapsed < 5, f"16 MiB of '%' took {elapsed:.1f} s"
    warnings = messages(events)
    assert len(warnings) == 1 and warnings[0].level == "warning"
    assert "Skipped a line" in warnings[0].text
    # after the line break the stream is read as before
    after = parser.feed("\r     32,768 100%   31.25MB/s    0:00:00 (xfr#1, to-chk=0/1)\n")
    after += parser.finish()
    assert [p.bytes_done for p in progresses(after)] == [32768]


def test_overlong_line_in_one_chunk_is_skipped_too() -> None:
    text = (
        "1 " * MAX_LINE_CHARS + "50% 1.00MB/s 0:00:01\n" + "     10 100%    1.00kB/s    0:00:00  \n"
    )
    events = parse_progress(text)
    assert [p.bytes_done for p in progresses(events)] == [10]
    assert [m.level for m in messages(events)] == ["warning"]


@pytest.mark.parametrize(
    "line",
    [
        "Number of files: " + "9" * 5000,
        "Number of files: 9" + "9" * 400 + "G",
        "Total file size: 1" + "0" * 30 + " bytes",
    ],
)
def test_an_absurd_stats_number_is_refused_not_raised(line: str) -> None:
    stats = parse_stats(line + "\nNumber of created files: 3\n")
    assert stats.number_of_files is None and stats.total_file_size is None
    assert stats.number_of_created_files == 3


def test_absurd_counters_in_a_progress_line_are_not_raised() -> None:
    huge = "9" * 5000
    events = parse_progress(
        f"  1,024 100%  {huge}.00kB/s {huge}:00:00 (xfr#{huge}, to-chk=1/{huge})\n"
    )
    assert all(p.xfr is None or p.xfr < 10**18 for p in progresses(events))
    assert parse_size(huge) is None and parse_size(huge + "K") is None


# --- real rsync ---------------------------------------------------------------------------------


def _rsync() -> str:
    path = shutil.which("rsync")
    if path is None:
        missing_component("rsync is not installed")
    assert path is not None
    return path


def _tree(root: Path) -> int:
    """A small tree of random files; returns the total byte count."""
    sizes = {"a.bin": 1_500_000, "sub/b.bin": 700_000, "sub/deeper/c.txt": 11}
    for name, size in sizes.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(os.urandom(size))
    return sum(sizes.values())


def _env() -> dict[str, str]:
    return {**os.environ, "LC_ALL": "C"}


def test_real_progress2_run_ends_at_the_real_byte_count(tmp_path: Path) -> None:
    rsync = _rsync()
    src, dst = tmp_path / "src", tmp_path / "dst"
    total = _tree(src)
    argv = [rsync, "-a", "--info=progress2", "--bwlimit=2000", "--", f"{src}/", f"{dst}/"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=_env())
    assert proc.stdout is not None
    parser = RsyncProgressParser()
    events: list[ProgressEvent] = []
    raw = b""
    with proc:
        while chunk := os.read(proc.stdout.fileno(), 11):  # small reads split lines anywhere
            raw += chunk
            events += parser.feed(chunk.decode())
    events += parser.finish()
    assert proc.returncode == 0, raw
    assert b"\r" in raw  # redraws really are carriage returns
    found = progresses(events)
    assert len(found) >= 3
    assert found[-1].bytes_done == total
    assert found[-1].percent == 100
    assert found[-1].xfr == 3 and found[-1].to_check_remaining == 0
    assert [e for e in events if not isinstance(e, Progress)] == []
    assert all(a.bytes_done <= b.bytes_done for a, b in zip(found, found[1:], strict=False))


def test_real_per_file_progress_names_each_file(tmp_path: Path) -> None:
    rsync = _rsync()
    src, dst = tmp_path / "src", tmp_path / "dst"
    _tree(src)
    out = subprocess.run(
        [rsync, "-av", "--progress", "--", f"{src}/", f"{dst}/"],
        capture_output=True,
        text=True,
        env=_env(),
        check=True,
    ).stdout
    events = parse_progress(out)
    started = [e.name for e in events if isinstance(e, FileStarted)]
    assert started == ["a.bin", "sub/b.bin", "sub/deeper/c.txt"]
    finals = [p for p in progresses(events) if p.is_final]
    assert [(p.current_file, p.bytes_done) for p in finals] == [
        ("a.bin", 1_500_000),
        ("sub/b.bin", 700_000),
        ("sub/deeper/c.txt", 11),
    ]


def test_real_stats(tmp_path: Path) -> None:
    rsync = _rsync()
    src, dst = tmp_path / "src", tmp_path / "dst"
    total = _tree(src)
    run = [rsync, "-a", "--stats", "--no-whole-file", "--", f"{src}/", f"{dst}/"]
    first = parse_stats(subprocess.run(run, capture_output=True, text=True, env=_env()).stdout)
    assert first.number_of_files == 6  # 3 files, 3 directories (., sub, sub/deeper)
    assert first.files_transferred == 3
    assert first.total_file_size == total
    assert first.total_transferred_file_size == total
    assert first.literal_data == total
    assert first.matched_data == 0
    assert first.total_bytes_sent is not None and first.total_bytes_sent > total
    assert first.total_bytes_received is not None and first.total_bytes_received > 0

    with (src / "a.bin").open("ab") as f:  # a small change: the delta algorithm reuses the rest
        f.write(b"tail")
    second = parse_stats(subprocess.run(run, capture_output=True, text=True, env=_env()).stdout)
    assert second.files_transferred == 1
    assert second.total_file_size == total + 4
    assert second.matched_data is not None and second.matched_data > 1_000_000
    assert second.literal_data is not None and second.literal_data < 100_000
