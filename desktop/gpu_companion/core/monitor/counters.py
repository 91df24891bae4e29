"""Host counters for diagnosis: CPU load, iowait, disk read/write rates and free disk space.

The remote host prints `cat uptime loadavg stat diskstats` in one go (one process start) and
`df -Pk`; the /proc files are told apart by the shape of their lines. Rates need two snapshots and
use the host's own uptime clock between them, so network delays do not skew them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SECTOR_BYTES = 512  # /proc/diskstats counts 512-byte sectors whatever the device's block size
_UPTIME_RE = re.compile(r"(\d+\.\d+) \d+\.\d+")
_LOADAVG_RE = re.compile(r"(\d+\.\d+) (\d+\.\d+) (\d+\.\d+) \d+/\d+ \d+")
_SKIP_DEVICES = ("loop", "ram", "zram", "fd", "sr", "dm-", "md", "nbd")
_PARTITION_RE = re.compile(r"^(?P<disk>.+?)(?:p)?\d+$")


@dataclass(frozen=True)
class RawCounters:
    """Cumulative counters at one moment, as read; only differences between two mean anything."""

    t: float
    uptime: float | None = None  # the host's seconds since boot, read with the counters
    load1: float | None = None
    cpu_total: int | None = None  # jiffies, all states
    cpu_idle: int | None = None
    cpu_iowait: int | None = None
    read_sectors: int | None = None
    write_sectors: int | None = None
    disk_free_bytes: int | None = None
    disk_total_bytes: int | None = None


@dataclass(frozen=True)
class HostCounters:
    """Rates between two snapshots; None where the host gave no reading (no /proc on macOS)."""

    t: float
    load1: float | None = None
    cpu_busy_pct: float | None = None
    iowait_pct: float | None = None
    read_bytes_per_s: float | None = None
    write_bytes_per_s: float | None = None
    disk_free_bytes: int | None = None
    disk_total_bytes: int | None = None


def _whole_disks(names: set[str]) -> set[str]:
    """Drop partitions (sda1 beside sda, nvme0n1p2 beside nvme0n1) and virtual devices."""
    disks = set()
    for name in names:
        if name.startswith(_SKIP_DEVICES):
            continue
        match = _PARTITION_RE.match(name)
        if match and match.group("disk") in names and match.group("disk") != name:
            continue
        disks.add(name)
    return disks


def parse_proc_text(text: str, t: float) -> RawCounters:
    """/proc/uptime, loadavg, stat and diskstats concatenated (any may be missing)."""
    uptime: float | None = None
    load1: float | None = None
    cpu: list[int] | None = None
    disks: dict[str, tuple[int, int]] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if uptime is None and (m := _UPTIME_RE.fullmatch(stripped)):
            uptime = float(m.group(1))
            continue
        if load1 is None and (m := _LOADAVG_RE.fullmatch(stripped)):
            load1 = float(m.group(1))
            continue
        parts = stripped.split()
        if parts[0] == "cpu" and cpu is None:
            try:
                cpu = [int(p) for p in parts[1:]]
            except ValueError:
                continue
        elif len(parts) >= 14 and parts[0].isdigit() and parts[1].isdigit():
            try:
                disks[parts[2]] = (int(parts[5]), int(parts[9]))
            except ValueError:
                continue
    total = idle = iowait = None
    if cpu is not None and len(cpu) >= 5:
        # user nice system idle iowait irq softirq steal [guest guest_nice: already in user/nice]
        total, idle, iowait = sum(cpu[:8]), cpu[3], cpu[4]
    read = write = None
    if disks:
        chosen = _whole_disks(set(disks))
        read = sum(disks[d][0] for d in chosen)
        write = sum(disks[d][1] for d in chosen)
    return RawCounters(
        t=t,
        uptime=uptime,
        load1=load1,
        cpu_total=total,
        cpu_idle=idle,
        cpu_iowait=iowait,
        read_sectors=read,
        write_sectors=write,
    )


def parse_df(text: str) -> tuple[int, int] | None:
    """(free, total) bytes from `df -Pk PATH`; None when df printed no data line."""
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 6 and parts[1].isdigit() and parts[3].isdigit():
            return int(parts[3]) * 1024, int(parts[1]) * 1024
    return None


def with_disk(raw: RawCounters, df: tuple[int, int] | None) -> RawCounters:
    if df is None:
        return raw
    return RawCounters(
        **{**raw.__dict__, "disk_free_bytes": df[0], "disk_total_bytes": df[1]},
    )


def _rate(now: int | None, before: int | None, seconds: float, scale: float) -> float | None:
    if now is None or before is None or seconds <= 0 or now < before:
        return None  # a counter going back means a reboot or a device change: no rate this time
    return (now - before) * scale / seconds


def rates(before: RawCounters | None, now: RawCounters) -> HostCounters:
    """Rates between two snapshots; without a previous one only the instant values are known."""
    busy = iowait = read = write = None
    if before is not None:
        seconds = now.t - before.t
        if now.uptime is not None and before.uptime is not None and now.uptime > before.uptime:
            seconds = now.uptime - before.uptime
        read = _rate(now.read_sectors, before.read_sectors, seconds, SECTOR_BYTES)
        write = _rate(now.write_sectors, before.write_sectors, seconds, SECTOR_BYTES)
        if None not in (now.cpu_total, before.cpu_total, now.cpu_idle, before.cpu_idle):
            assert now.cpu_total is not None and before.cpu_total is not None
            assert now.cpu_idle is not None and before.cpu_idle is not None
            total = now.cpu_total - before.cpu_total
            if total > 0:
                idle = now.cpu_idle - before.cpu_idle
                wait = None
                if now.cpu_iowait is not None and before.cpu_iowait is not None:
                    wait = now.cpu_iowait - before.cpu_iowait
                    iowait = 100.0 * wait / total
                busy = 100.0 * (total - idle - (wait or 0)) / total
    return HostCounters(
        t=now.t,
        load1=now.load1,
        cpu_busy_pct=busy,
        iowait_pct=iowait,
        read_bytes_per_s=read,
        write_bytes_per_s=write,
        disk_free_bytes=now.disk_free_bytes,
        disk_total_bytes=now.disk_total_bytes,
    )
