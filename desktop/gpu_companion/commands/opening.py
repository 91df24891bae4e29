"""Opening the app's services for a headless command: a database the app cannot use (newer,
corrupt, read-only, disk full) is reported with the message the window shows, not a traceback."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpu_companion.services import Services


def open_services() -> Services | None:
    """The app's `Services`, or None once the reason it cannot open was printed on stderr."""
    from gpu_companion.core.storage.store import StoreError
    from gpu_companion.services import build_services

    try:
        return build_services()
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None
