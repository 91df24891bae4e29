"""One bridge for user-facing messages: core code reports, the tray/status bar/banners subscribe."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from gpu_companion.core.common.listeners import Listeners
from gpu_companion.core.common.plain import plain


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

    def __post_init__(self) -> None:
        # a message often quotes a host (an rsync error, a process name): every subscriber
        # (`watch` printing to a terminal, the tray, the banners) gets it without escapes
        object.__setattr__(self, "text", plain(self.text))


Listener = Callable[[Message], None]


class Notifier:
    """Thread-safe fan-out; listeners run on the caller's thread (the UI re-posts to the GUI)."""

    def __init__(self) -> None:
        self._listeners: Listeners[Message] = Listeners("notifier")

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        return self._listeners.subscribe(listener)

    def post(self, message: Message) -> None:
        self._listeners.emit(message)

    def info(self, text: str, source: str = "", key: str = "") -> None:
        self.post(Message(Level.INFO, text, source, key))

    def warning(self, text: str, source: str = "", key: str = "") -> None:
        self.post(Message(Level.WARNING, text, source, key))

    def error(self, text: str, source: str = "", key: str = "") -> None:
        self.post(Message(Level.ERROR, text, source, key))
