"""Host counters: /proc texts written for these tests, rates between two snapshots, df."""

from __future__ import annotations

import pytest

from gpu_companion.core.monitor.counters import parse_df, parse_proc_text, rates, with_disk
from gpu_companion.core.monitor.poll import (
    parse_owners,
    parse_poll,
    remote_poll_argv,
    split_sections,
)

PROC = """\
5000.00 9000.00
0.52 0.40 0.31 1/234 5678
cpu  100 0 50 800 50 0 0 0 0 0
cpu0 50 0 25 400 25 0 0 0 0 0
intr 12345
   8       0 sda 100 0 2000 10 50 0 1000 5 0 20 15 0 0 0 0
   8       1 sda1 90 0 1900 9 40 0 900 4 0 18 13 0 0 0 0
 259       0 nvme0n1 10 0 3000 1 5 0 500 1 0 2 2 0 0 0 0
 259       1 nvme0n1p1 9 0 2900 1 4 0 400 1 0 2 2 0 0 0 0
   7       0 loop0 1 0 99999 0 0 0 0 0 0 0 0 0 0 0 0
 253       0 dm-0 1 0 88888 0 0 0 0 0 0 0 0 0 0 0 0
"""


def _later(text: str, read_extra: int, idle: int, iowait: int) -> str:
    return (
        text.replace("5000.00 9000.00", "5002.00 9000.00")
        .replace("cpu  100 0 50 800 50", f"cpu  150 0 50 {800 + idle} {50 + iowait}")
        .replace("sda 100 0 2000", f"sda 100 0 {2000 + read_extra}")
    )


def test_whole_disks_only_and_every_counter_read():
    raw = parse_proc_text(PROC, t=10.0)
    assert raw.uptime == 5000.0 and raw.load1 == 0.52
    assert (raw.cpu_total, raw.cpu_idle, raw.cpu_iowait) == (1000, 800, 50)
    assert raw.read_sectors == 2000 + 3000  # no partitions, loop or device-mapper
    assert raw.write_sectors == 1000 + 500


def test_rates_use_the_hosts_uptime_not_the_arrival_time():
    before = parse_proc_text(PROC, t=10.0)
    after = parse_proc_text(_later(PROC, read_extra=4_000_000, idle=50, iowait=100), t=10.7)
    counters = rates(before, after)
    assert counters.read_bytes_per_s == pytest.approx(4_000_000 * 512 / 2.0)
    assert counters.iowait_pct == pytest.approx(100 * 100 / 200)
    assert counters.cpu_busy_pct == pytest.approx(100 * 50 / 200)


def test_a_counter_going_back_gives_no_rate_and_a_first_snapshot_only_instant_values():
    before = parse_proc_text(_later(PROC, 10_000, 0, 0), t=1)
    after = parse_proc_text(PROC.replace("5000.00", "5003.00"), t=2)
    assert rates(before, after).read_bytes_per_s is None
    first = rates(None, after)
    assert first.load1 == 0.52 and first.read_bytes_per_s is None and first.iowait_pct is None


def test_missing_proc_files_read_as_none():
    raw = parse_proc_text("", t=1)
    assert (raw.load1, raw.cpu_total, raw.read_sectors) == (None, None, None)
    assert rates(raw, parse_proc_text("garbage\nmore garbage", t=2)).cpu_busy_pct is None


def test_df():
    text = ("Filesystem     1024-blocks     Used Available Capacity Mounted on\n"
            "/dev/nvme0n1p1   102400000 51200000  51200000      50% /\n")  # fmt: skip
    assert parse_df(text) == (51200000 * 1024, 102400000 * 1024)
    assert parse_df("df: /nope: No such file or directory\n") is None
    raw = with_disk(parse_proc_text(PROC, 1), parse_df(text))
    assert raw.disk_free_bytes == 51200000 * 1024 and raw.load1 == 0.52


def test_remote_poll_is_one_quoted_script_and_its_sections_split():
    argv = remote_poll_argv("/tmp/it's here", "/data dir")
    assert argv[:2] == ["sh", "-c"]
    assert "'/tmp/it'\"'\"'s here/stat'" in argv[2] and "df -Pk '/data dir'" in argv[2]
    output = "\n".join([
        "@@gpu-companion:apps", "2026/07/14 08:12:53.500, GPU-1, H100, 00000000:18:00.0, 77, "
        "python, a, b.py, 1024",
        "@@gpu-companion:proc", PROC,
        "@@gpu-companion:df", "Filesystem 1024-blocks Used Available Capacity Mounted",
        "/dev/x 100 40 60 40% /",
        "@@gpu-companion:ps", "   77 alice", "  1 root", "junk",
    ])  # fmt: skip
    result = parse_poll(split_sections(output), t=5.0)
    (app,) = result.apps
    assert (app.pid, app.process_name, app.used_memory_mib) == (77, "python, a, b.py", 1024)
    assert result.counters.load1 == 0.52 and result.counters.disk_free_bytes == 60 * 1024
    assert result.owners == {77: "alice", 1: "root"}
    assert parse_owners("x y\n12 bob extra\n") == {}
