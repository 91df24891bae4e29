"""The live monitor's events as Qt signals on the GUI thread. Samples are already in the history
when a signal arrives; slots only redraw.

Collector threads append to one queue and wake the GUI thread once per burst (not once per
event): every cross-thread hand-off costs the GUI thread a wait for the GIL, and 50 hosts ticking
in the same second made 50 waits, a 200 ms stall. The GUI thread drains the queue in one go.
"""

from __future__ import annotations

import sys
import threading

from PySide6.QtCore import QObject, Qt, Signal

from gpu_companion.core.monitor.collector import PollEvent, SamplesEvent, StatusEvent
from gpu_companion.core.monitor.live import HintEvent, Monitor, MonitorEvent

# A thread that wants the GIL waits up to this long for a busy one; 5 ms (CPython's default)
# per hand-off is what the GUI thread paid during a burst of samples.
SWITCH_INTERVAL_S = 0.001


class MonitorBridge(QObject):
    samples_arrived = Signal(str, object)  # alias, tuple[TimedSample, ...] (one tick)
    status_changed = Signal(str, object)  # alias, HostStatus
    poll_arrived = Signal(str, object)  # alias, PollEvent (processes and host counters)
    hint_raised = Signal(str, object)  # alias, Hint
    _wake = Signal()

    def __init__(self, monitor: Monitor, parent: QObject | None = None) -> None:
        super().__init__(parent)
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        self.monitor = monitor
        self._lock = threading.Lock()
        self._pending: list[MonitorEvent] = []
        self._wake.connect(self._drain, Qt.ConnectionType.QueuedConnection)
        self._unsubscribe = monitor.subscribe(self._on_event)

    def _on_event(self, event: MonitorEvent) -> None:  # collector threads
        with self._lock:
            self._pending.append(event)
            first = len(self._pending) == 1
        if first:
            self._wake.emit()

    def _drain(self) -> None:  # the GUI thread
        with self._lock:
            events, self._pending = self._pending, []
        for event in events:
            if isinstance(event, SamplesEvent):
                self.samples_arrived.emit(event.alias, event.samples)
            elif isinstance(event, StatusEvent):
                self.status_changed.emit(event.alias, event.status)
            elif isinstance(event, PollEvent):
                self.poll_arrived.emit(event.alias, event)
            elif isinstance(event, HintEvent):
                self.hint_raised.emit(event.alias, event.hint)

    def close(self) -> None:
        self._unsubscribe()
