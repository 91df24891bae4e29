"""One exponential backoff for every reconnect loop (the collector, transfer retries)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Backoff:
    """Waits of `initial_s`, 2x, 4x ... capped at `max_s`; attempt 1 waits `initial_s`."""

    initial_s: float = 1.0
    max_s: float = 60.0

    def delay(self, attempt: int) -> float:
        return float(min(self.max_s, self.initial_s * 2 ** max(attempt - 1, 0)))
