"""Injected time: the ledger, budgets and alerts ask a `Clock`; tests move time without sleeping."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Protocol


class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant, timezone-aware, in UTC."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(timezone.utc).replace(microsecond=0)


class ManualClock:
    """A clock that only moves when told to (tests, benchmarks, replays)."""

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("ManualClock needs a timezone-aware start")
        self._now = start.astimezone(timezone.utc)

    def now(self) -> datetime:
        return self._now

    def set(self, when: datetime) -> None:
        self._now = when.astimezone(timezone.utc)

    def advance(self, **delta: float) -> datetime:
        self._now += timedelta(**delta)
        return self._now


def to_iso(when: datetime) -> str:
    """The one stored form of an instant: UTC, whole seconds, `YYYY-MM-DDTHH:MM:SS+00:00`."""
    if when.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return when.astimezone(timezone.utc).replace(microsecond=0).isoformat()


def from_iso(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def local_offset() -> timezone:
    """This computer's current UTC offset as a fixed zone (periods and quiet hours use it)."""
    offset = datetime.now().astimezone().utcoffset() or timedelta(0)
    return timezone(offset)
