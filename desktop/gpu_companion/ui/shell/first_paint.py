"""Start-up measurement: report the main window's first paint on stdout and quit.

Enabled by GPU_COMPANION_EXIT_AFTER_FIRST_PAINT=1 (benchmarks/startup.py); the parent process
times from launch to the `first-paint` line, so interpreter start and imports are included.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget


class _FirstPaint(QObject):
    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self.window = window
        self.seen = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if not self.seen and event.type() == QEvent.Type.Paint:
            self.seen = True
            # after this paint event is delivered, i.e. once the frame is drawn
            QTimer.singleShot(0, self._report)
        return False

    def _report(self) -> None:
        print("first-paint", flush=True)
        # a quit the user did not ask for: no "a rental is still metered" question to wait on
        if hasattr(self.window, "quitting"):
            self.window.quitting = True
        QApplication.quit()


def exit_after_first_paint(window: QWidget) -> None:
    watcher = _FirstPaint(window)
    window.installEventFilter(watcher)
