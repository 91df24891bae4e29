"""The always-on loop: one holder per data dir, each rule on a thread of its own."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from gpu_companion.core.autorelease.loop import CoreLoop, holder


def test_one_holder_per_data_dir_and_its_pid_is_readable(tmp_path: Path) -> None:
    lock = tmp_path / "autorelease.lock"
    assert holder(lock) is None
    first, second = CoreLoop(lock), CoreLoop(lock)
    assert first.claim()
    try:
        assert not second.claim()
        assert holder(lock) == os.getpid()
    finally:
        first.stop()
    assert holder(lock) is None
    assert second.claim()  # free again once the first stops
    second.stop()


def test_a_slow_rule_never_delays_another(tmp_path: Path) -> None:
    """A checklist that takes minutes on a slow host must not hold back a budget alert."""
    loop = CoreLoop(tmp_path / "autorelease.lock")
    assert loop.claim()
    release = threading.Event()
    alerts: list[float] = []
    order: list[str] = []
    loop.every("autorelease", lambda: release.wait(30), 0.01)
    loop.every("alerts", lambda: alerts.append(time.monotonic()), 0.01)
    loop.every("broken", lambda: 1 / 0, 0.01)  # logged; the others go on
    loop.start(first=(lambda: order.append("recovery"),))
    try:
        deadline = time.monotonic() + 10
        while len(alerts) < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(alerts) >= 5 and order == ["recovery"]
        assert {t.name for t in threading.enumerate()} >= {"core:autorelease", "core:alerts"}
    finally:
        release.set()
        loop.stop()
    assert not any(t.name.startswith("core:") for t in threading.enumerate())
