"""A thread-safe list of callbacks: subscribe returns the unsubscribe, emit survives a bad one."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)


class Listeners(Generic[T]):
    """Listeners run on the emitting thread (the UI re-posts to the GUI thread itself)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._items: list[Callable[[T], None]] = []
        self._lock = threading.Lock()

    def subscribe(self, listener: Callable[[T], None]) -> Callable[[], None]:
        with self._lock:
            self._items.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._items:
                    self._items.remove(listener)

        return unsubscribe

    def emit(self, value: T) -> None:
        with self._lock:
            items = list(self._items)
        for listener in items:
            try:
                listener(value)
            except Exception:
                log.exception("%s listener failed", self._name)
