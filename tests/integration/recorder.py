"""Collects a collector's or monitor's events from its threads so a test can wait on them."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any


class Recorder:
    def __init__(self) -> None:
        self.events: list[Any] = []
        self._cond = threading.Condition()

    def __call__(self, event: Any) -> None:
        with self._cond:
            self.events.append(event)
            self._cond.notify_all()

    def of(self, kind: type) -> list[Any]:
        with self._cond:
            return [e for e in self.events if isinstance(e, kind)]

    def wait(self, check: Callable[[], bool], timeout: float = 15, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not check():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out waiting for {what or check}: {self.tail()}")
                self._cond.wait(left)

    def tail(self) -> list[Any]:
        return [e for e in self.events[-8:]]

    def states(self) -> list[str]:
        from gpu_companion.core.monitor.collector import StatusEvent

        out: list[str] = []
        for e in self.of(StatusEvent):
            value = e.status.state.value
            if not out or out[-1] != value:
                out.append(value)
        return out
