"""A hostile nvidia-smi (6000 distinct GPU indices per tick, or one endless line) cannot grow the
app's memory or spin it: at most MAX_GPUS_PER_HOST GPUs are kept, the rest counted; an endless
line is cut at MAX_LINE_BYTES, said, and retried after the longest backoff."""

from __future__ import annotations

import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.monitor.collector import (
    CollectorConfig,
    HostCollector,
    HostState,
    SamplesEvent,
    StatusEvent,
)
from gpu_companion.core.monitor.history import MAX_GPUS_PER_HOST, HostHistory
from gpu_companion.core.monitor.transport import MAX_LINE_BYTES, HostOutputTooLarge, LineStream

pytestmark = pytest.mark.sshd
HOST = Host(alias="gpu1", hostname="127.0.0.1", port=22, user="root")


class Counting:
    """A listener that keeps no events: samples go into a real HostHistory."""

    def __init__(self) -> None:
        self.history = HostHistory("gpu1")
        self.indices: set[int] = set()
        self.ticks = 0
        self.statuses = 0  # counted, not kept: this listener must not grow either
        self.lock = threading.Lock()

    def __call__(self, event: object) -> None:
        with self.lock:
            if isinstance(event, SamplesEvent):
                self.ticks += 1
                for s in event.samples:
                    self.indices.add(s.sample.index)
                    self.history.add(s.t, s.sample)
            elif isinstance(event, StatusEvent):
                self.statuses += 1


def _wait(check, timeout: float = 40) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_six_thousand_gpu_indices_keep_64_and_count_the_rest(
    sshd, standin, harness_client_factory
) -> None:
    standin.configure(gpu_count=6000)
    listener = Counting()
    config = CollectorConfig(interval_ms=500, poll_every_s=0, backoff_max_s=0.5)
    tracemalloc.start()
    collector = HostCollector(HOST, harness_client_factory, listener, config).start()
    try:
        # the 64 admitted GPUs' rings (~170 KiB each) are made in the first rounds: measure after
        _wait(lambda: collector.status.bad_lines >= 2 * (6000 - MAX_GPUS_PER_HOST))
        after_one, _ = tracemalloc.get_traced_memory()
        _wait(lambda: collector.status.bad_lines >= 5 * (6000 - MAX_GPUS_PER_HOST))
        after_three, _ = tracemalloc.get_traced_memory()
    finally:
        collector.stop()
        tracemalloc.stop()
    assert collector.status.state in (HostState.LIVE, HostState.STOPPED)
    assert len(listener.indices) <= MAX_GPUS_PER_HOST
    assert len(listener.history.gpus()) <= MAX_GPUS_PER_HOST
    assert len(collector._last_ts) <= MAX_GPUS_PER_HOST and len(collector._bus_index) <= 64
    # bounded, not flat: a minute's 64 minute-rings or paramiko's window may land in between
    # (a few MiB); a ring per new index (the old code) is ~170 KiB x 6000 a round, GiBs
    assert after_three - after_one < 16 * 1024 * 1024, (after_one, after_three)


def test_an_endless_line_is_cut_said_and_not_retried_at_once(
    tmp_path: Path, sshd, standin, harness_client_factory
) -> None:
    hostile = tmp_path / "hostile-bin"
    hostile.mkdir()
    starts = tmp_path / "hostile-starts"
    script = hostile / "nvidia-smi"
    script.write_text(
        "#!/bin/sh\n"
        f'case "$1" in --help-query-gpu) exec "{standin.bin_dir / "nvidia-smi"}" "$@";; esac\n'
        f"echo start >> '{starts}'\n"
        "exec tr '\\000' x < /dev/zero\n"
    )
    script.chmod(0o755)
    sshd.path_prefix.insert(0, hostile)
    sshd.restart()
    listener = Counting()
    config = CollectorConfig(
        interval_ms=200, poll_every_s=0, backoff_initial_s=0.1, backoff_max_s=30,
        stall_timeout_s=5,
    )  # fmt: skip
    tracemalloc.start()
    cpu0 = time.process_time()
    collector = HostCollector(HOST, harness_client_factory, listener, config).start()
    try:
        _wait(lambda: "longer than" in collector.status.message, timeout=20)
        status = collector.status
        _, peak = tracemalloc.get_traced_memory()
        time.sleep(2)  # no new start within the backoff
        n_starts = len(starts.read_text().splitlines())
    finally:
        collector.stop()
        tracemalloc.stop()
    cpu = time.process_time() - cpu0
    assert f"{MAX_LINE_BYTES // 1024} KiB" in status.message
    assert status.retry_in_s == 30
    assert n_starts == 1
    assert peak < 16 * 1024 * 1024, peak
    assert cpu < 10, cpu


class _Chunks(LineStream):
    def __init__(self, chunks: list[bytes]) -> None:
        super().__init__()
        self.chunks = chunks

    def _recv(self, timeout: float) -> bytes:
        return self.chunks.pop() if self.chunks else b""

    def _finish(self) -> tuple[int | None, bool]:
        return 0, False

    def close(self) -> None:
        pass


def test_the_line_reader_stops_reading_an_endless_line_at_the_limit() -> None:
    """64 MiB without a newline: the reader gives up after MAX_LINE_BYTES and reads no further."""
    chunks = [b"x" * 65536] * 1024
    stream = _Chunks(chunks)
    with pytest.raises(HostOutputTooLarge, match="longer than 64 KiB"):
        stream.readline(30)
    assert len(chunks) >= 1024 - 3


def test_the_line_reader_searches_each_byte_once() -> None:
    """One near-limit line in 1-byte chunks, then many short lines: linear, all intact."""
    body = b"x" * (MAX_LINE_BYTES - 10)
    chunks = [body[i : i + 1] for i in range(len(body))] + [b"\n" + b"a,b\n" * 10_000]
    stream = _Chunks(list(reversed(chunks)))
    t0 = time.process_time()
    assert len(stream.readline(5)) == len(body)
    assert [stream.readline(5) for _ in range(10_000)] == ["a,b"] * 10_000
    assert time.process_time() - t0 < 2
