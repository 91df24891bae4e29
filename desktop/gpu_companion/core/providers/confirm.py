"""Reading an instance back after a destroy or a stop, until the provider reports the wanted
state or a deadline passes. A read that fails is not an answer: it is kept as what was said and
the next read is tried."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from gpu_companion.core.providers.model import Action, Provider, ProviderError, Reading


def confirmed(action: Action, reading: Reading) -> bool:
    """Gone ends every bill; a stop is also confirmed by a stopped instance."""
    return reading.state == "gone" or (action == "stop" and reading.state == "stopped")


@dataclass(frozen=True)
class ReadBack:
    ok: bool
    last: Reading
    reads: int


def read_back(
    provider: Provider,
    instance_id: str,
    action: Action,
    *,
    within_s: float = 180.0,
    every_s: float = 3.0,
    sleep: Callable[[float], None] = time.sleep,
    mono: Callable[[], float] = time.monotonic,
) -> ReadBack:
    deadline = mono() + within_s
    reads = 0
    while True:
        reads += 1
        try:
            reading = provider.read(instance_id)
        except ProviderError as exc:
            reading = Reading("other", f"{exc.message} {exc.said}".strip())
        if confirmed(action, reading):
            return ReadBack(True, reading, reads)
        left = deadline - mono()
        if left <= 0:
            return ReadBack(False, reading, reads)
        sleep(min(every_s, left))
