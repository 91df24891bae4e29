"""`run_gui` inside the test process, as the app starts: its services and window are built by the
shipped functions and handed to the test as they are made (`Launch.made`); afterwards the
process is put back (quit-on-last-window, the log handlers the app added)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication


class Launch:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import gpu_companion.app as app_module
        from gpu_companion.services import build_services
        from gpu_companion.ui.shell.build import build_window

        self.app_module = app_module
        self.made: dict[str, Any] = {}
        self.handlers = list(logging.getLogger().handlers)  # the test process's own

        def services_spy(paths):  # type: ignore[no-untyped-def]
            self.made["services"] = build_services(paths)
            return self.made["services"]

        def window_spy(services):  # type: ignore[no-untyped-def]
            self.made["window"] = build_window(services)
            return self.made["window"]

        monkeypatch.setattr(app_module, "build_services", services_spy)
        monkeypatch.setattr(app_module, "build_window", window_spy)
        monkeypatch.setattr(sys, "excepthook", sys.excepthook)

    def added_handlers(self) -> list[logging.Handler]:
        return [h for h in logging.getLogger().handlers if h not in self.handlers]

    def run(self, check: Callable[[], None], **kwargs: Any) -> int:
        """`run_gui` with `check` called once the loop runs (it re-arms itself and quits); 30 s
        bound a failure."""
        qapp = QApplication.instance()
        assert isinstance(qapp, QApplication)
        QTimer.singleShot(0, check)
        bound = QTimer()  # a bound on a failure, not a sleep; stopped with this launch so it
        bound.setSingleShot(True)  # cannot quit a later launch in the same test process
        bound.timeout.connect(QApplication.quit)
        bound.start(30000)
        try:
            return int(self.app_module.run_gui(["gpu-companion"], **kwargs))
        finally:
            bound.stop()
            qapp.setQuitOnLastWindowClosed(True)
            for h in self.added_handlers():
                logging.getLogger().removeHandler(h)
                h.close()
