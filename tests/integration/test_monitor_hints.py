"""Hints end to end: the stand-in over the harness sshd, the Monitor, the notifier.

The IO-bound case needs high disk reads on the test host. The collector reads the host's counters
from `CollectorConfig.proc_root` (default /proc); here it points at a directory this test keeps
writing, with read counters growing at a chosen rate, so the whole path (remote cat over SSH,
parsing, rates, the rule) runs for real while the disk traffic is under the test's control.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from gpu_companion.core.common.notifier import Notifier
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.monitor.collector import CollectorConfig, PollEvent, SamplesEvent
from gpu_companion.core.monitor.hints import HintConfig
from gpu_companion.core.monitor.live import HintEvent, Monitor
from tests.integration.recorder import Recorder

HOST = Host(alias="gpu1", hostname="127.0.0.1", user="root")


class FakeClock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def _monitor(factory, clock, notifier, proc_root="/proc", poll=0.0):  # type: ignore[no-untyped-def]
    config = CollectorConfig(interval_ms=100, poll_every_s=poll, proc_root=str(proc_root),
                             backoff_initial_s=0.1)  # fmt: skip
    return Monitor(factory, notifier=notifier, config=config, clock=clock,
                   hint_config=HintConfig(idle_util_pct=10, idle_minutes=15))  # fmt: skip


@pytest.mark.parametrize(("util", "fires"), [("idle", True), ("busy", False)])
def test_idle_rule_fires_once_per_episode_on_a_billed_rental(
    sshd, standin, harness_client_factory, util, fires
):
    standin.configure(gpu_count=2, util=util)
    clock, notifier, messages, rec = FakeClock(), Notifier(), Recorder(), Recorder()
    notifier.subscribe(messages)
    monitor = _monitor(harness_client_factory, clock, notifier)
    monitor.subscribe(rec)
    monitor.watch(HOST)
    try:
        rec.wait(lambda: len(rec.of(SamplesEvent)) >= 3)
        clock.now += 14 * 60
        n = len(rec.of(SamplesEvent))
        rec.wait(lambda: len(rec.of(SamplesEvent)) >= n + 3)
        assert not [m for m in messages.events if m.key.startswith("idle:")]  # 14 < 15 minutes
        clock.now += 2 * 60
        n = len(rec.of(SamplesEvent))
        rec.wait(lambda: len(rec.of(SamplesEvent)) >= n + 5)
        clock.now += 30 * 60
        n = len(rec.of(SamplesEvent))
        rec.wait(lambda: len(rec.of(SamplesEvent)) >= n + 5)
    finally:
        monitor.stop()
    idle = [m for m in messages.events if m.key == "idle:gpu1"]
    assert len(idle) == (1 if fires else 0)
    if fires:
        assert "all 2 GPUs under 10% for 16 minutes" in idle[0].text
        assert [e.hint.kind for e in rec.of(HintEvent)] == ["idle"]


def test_idle_rule_is_silent_when_not_billed(sshd, standin, harness_client_factory):
    standin.configure(gpu_count=1, util="idle")
    clock, notifier, messages, rec = FakeClock(), Notifier(), Recorder(), Recorder()
    notifier.subscribe(messages)
    monitor = _monitor(harness_client_factory, clock, notifier)
    monitor.subscribe(rec)
    monitor.watch(HOST, billed=False)
    try:
        rec.wait(lambda: len(rec.of(SamplesEvent)) >= 2)
        clock.now += 60 * 60
        n = len(rec.of(SamplesEvent))
        rec.wait(lambda: len(rec.of(SamplesEvent)) >= n + 3)
    finally:
        monitor.stop()
    assert messages.events == []


class GrowingDiskCounters:
    """Writes loadavg/stat/diskstats into `root` with sectors read growing at `mb_per_s`."""

    def __init__(self, root: Path, mb_per_s: float) -> None:
        self.root, self.rate = root, mb_per_s
        self.stop = threading.Event()
        self.t0 = time.monotonic()
        root.mkdir()
        self._write()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _put(self, name: str, text: str) -> None:
        tmp = self.root / f".{name}"
        tmp.write_text(text)
        os.replace(tmp, self.root / name)

    def _write(self) -> None:
        elapsed = time.monotonic() - self.t0
        sectors = int(1e6 + elapsed * self.rate * 1e6 / 512)
        ticks = int(elapsed * 100)
        self._put("uptime", f"{1000 + elapsed:.2f} 1900.00\n")
        self._put("loadavg", "1.50 1.20 0.90 2/345 6789\n")
        self._put("stat", f"cpu  {1000 + ticks} 0 {500 + ticks} {90000 + 2 * ticks} "
                          f"{200 + ticks // 10} 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n")  # fmt: skip
        self._put("diskstats",
                  f" 259       0 nvme0n1 5000 0 {sectors} 900 100 0 4000 50 0 700 950 0 0 0 0\n"
                  f" 259       1 nvme0n1p1 4000 0 {sectors} 800 90 0 3000 40 0 600 840 0 0 0 0\n"
                  "   7       0 loop0 10 0 999999999 1 0 0 0 0 0 1 1 0 0 0 0\n")  # fmt: skip

    def _loop(self) -> None:
        while not self.stop.wait(0.05):
            self._write()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(2)


@pytest.mark.parametrize(
    ("util", "mb_per_s", "fires"), [(20, 400, True), (20, 0, False), (95, 400, False)]
)
def test_io_bound_hint_when_utilisation_is_low_and_disk_reads_are_high(
    sshd, standin, harness_client_factory, tmp_path, util, mb_per_s, fires
):
    standin.configure(gpu_count=2, util=util)
    disk = GrowingDiskCounters(tmp_path / "proc", mb_per_s)
    notifier, messages, rec = Notifier(), Recorder(), Recorder()
    notifier.subscribe(messages)
    monitor = _monitor(harness_client_factory, time.time, notifier, disk.root, poll=0.4)
    monitor.subscribe(rec)
    monitor.watch(HOST)
    try:
        rec.wait(lambda: len(rec.of(PollEvent)) >= 3, what="three polls")
    finally:
        monitor.stop()
        disk.close()
    counters = rec.of(PollEvent)[-1].counters
    assert counters.read_bytes_per_s == pytest.approx(mb_per_s * 1e6, rel=0.35, abs=1e6)
    assert counters.iowait_pct is not None and counters.iowait_pct < 20
    io = [m for m in messages.events if m.key == "io:gpu1"]
    assert len(io) == (1 if fires else 0)
    if fires:
        assert "GPUs at 20%" in io[0].text and "MB/s" in io[0].text
