"""What happened while nobody looked: the computer slept (the wall clock jumped ahead of the
monotonic one), or a billed host stopped answering (preempted or down?)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

UNREACHABLE_AFTER_S = 120.0


@dataclass
class SleepDetector:
    """`check()` returns (fell asleep, woke) in wall-clock seconds after a sleep, else None."""

    wall: Callable[[], float] = time.time
    mono: Callable[[], float] = time.monotonic
    threshold_s: float = 120.0
    _last: tuple[float, float] | None = None

    def check(self) -> tuple[float, float] | None:
        now = (self.wall(), self.mono())
        last, self._last = self._last, now
        if last is None:
            return None
        gap = (now[0] - last[0]) - (now[1] - last[1])
        return (last[0], now[0]) if gap >= self.threshold_s else None


@dataclass
class Reachability:
    """A host whose readings stopped: `due` names it once per outage, after `after_s`."""

    after_s: float = UNREACHABLE_AFTER_S
    down_since: dict[str, float] = field(default_factory=dict)
    told: set[str] = field(default_factory=set)

    def on_status(self, alias: str, live: bool, t: float) -> None:
        if live:
            self.down_since.pop(alias, None)
            self.told.discard(alias)
        else:
            self.down_since.setdefault(alias, t)

    def due(self, now: float, billed: set[str]) -> list[tuple[str, float]]:
        out = []
        for alias, since in self.down_since.items():
            if alias in billed and alias not in self.told and now - since >= self.after_s:
                self.told.add(alias)
                out.append((alias, since))
        return out
