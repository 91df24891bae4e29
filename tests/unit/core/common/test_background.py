"""BackgroundSync: requests return at once, bursts coalesce, flush waits, close serves the rest."""

from __future__ import annotations

import threading
import time

import pytest

from gpu_companion.core.common.background import BackgroundSync


def test_a_burst_of_requests_is_one_sync_on_another_thread() -> None:
    threads: list[str] = []
    sync = BackgroundSync(lambda: threads.append(threading.current_thread().name), quiet_s=0.05)
    try:
        for _ in range(5):
            sync.request()
        assert sync.flush(5)
        assert threads == ["ssh-config-sync"] and sync.runs == 1
        sync.request()
        assert sync.flush(5) and sync.runs == 2
    finally:
        sync.close()


def test_request_does_not_wait_for_a_slow_sync() -> None:
    started, gate = threading.Event(), threading.Event()

    def slow() -> None:
        started.set()
        gate.wait(10)

    sync = BackgroundSync(slow, quiet_s=0.0)
    try:
        start = time.monotonic()
        sync.request()
        assert started.wait(5)
        sync.request()  # arrives while the first sync runs: served by a second run
        assert time.monotonic() - start < 0.5
        assert not sync.flush(0.2)
        gate.set()
        assert sync.flush(5) and sync.runs == 2
    finally:
        gate.set()
        sync.close()


def test_a_failing_sync_is_logged_and_the_next_request_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    calls: list[int] = []

    def flaky() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("disk full")

    sync = BackgroundSync(flaky, quiet_s=0.0)
    try:
        sync.request()
        assert sync.flush(5)
        assert "ssh-config-sync failed" in caplog.text
        sync.request()
        assert sync.flush(5) and len(calls) == 2
    finally:
        sync.close()


def test_close_serves_a_pending_request_and_stops_the_thread() -> None:
    done: list[int] = []
    sync = BackgroundSync(lambda: done.append(1), quiet_s=10.0)  # would wait 10 s to coalesce
    sync.request()
    start = time.monotonic()
    sync.close()
    assert done == [1] and time.monotonic() - start < 5
    assert not any(t.name == "ssh-config-sync" for t in threading.enumerate())
    sync.request()  # after close: ignored, no new thread
    assert done == [1]
