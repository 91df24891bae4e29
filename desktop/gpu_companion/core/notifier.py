"""One bridge for user-facing messages: core code reports, the tray/status bar/banners subscribe."""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

log = logging.getLogger(__name__)


class Level(enum.Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True)
class Message:
    level: Level
    text: str
    source: str = ""
    key: str = ""
    at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))


Listener = Callable[[Message], None]


class Notifier:
    """Thread-safe fan-out; listeners run on the caller's thread (the UI re-posts to the GUI)."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def post(self, message: Message) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(message)
            except Exception:
                log.exception("notifier listener failed")

    def info(self, text: str, source: str = "", key: str = "") -> None:
        self.post(Message(Level.INFO, text, source, key))

    def warning(self, text: str, source: str = "", key: str = "") -> None:
        self.post(Message(Level.WARNING, text, source, key))

    def error(self, text: str, source: str = "", key: str = "") -> None:
        self.post(Message(Level.ERROR, text, source, key))
