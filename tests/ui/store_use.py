"""Which threads use the store's connection: what the "no SQL on the GUI thread" tests of the
Spend page and the tray record."""

from __future__ import annotations

import threading
import traceback

import pytest

from gpu_companion.core.storage.store import Store


class StoreUse:
    """The store's connection as before, each use recorded with its thread (the GUI's with
    where it came from)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.gui = threading.get_ident()
        self.on_gui: list[str] = []
        self.off_gui: list[int] = []
        connection = Store.db

        def recorded(store):  # type: ignore[no-untyped-def]
            if threading.get_ident() == self.gui:
                self.on_gui.append("".join(traceback.format_stack(limit=8)))
            else:
                self.off_gui.append(threading.get_ident())
            return connection.fget(store)  # type: ignore[attr-defined]

        monkeypatch.setattr(Store, "db", property(recorded))
