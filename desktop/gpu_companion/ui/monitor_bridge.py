"""The live monitor's events as Qt signals: emitted on collector threads, delivered (queued) on
the GUI thread. Samples are already in the history when the signal arrives; slots only redraw."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from gpu_companion.core.collector import PollEvent, SamplesEvent, StatusEvent
from gpu_companion.core.monitor import HintEvent, Monitor, MonitorEvent


class MonitorBridge(QObject):
    samples_arrived = Signal(str, object)  # alias, tuple[TimedSample, ...] (one tick)
    status_changed = Signal(str, object)  # alias, HostStatus
    poll_arrived = Signal(str, object)  # alias, PollEvent (processes and host counters)
    hint_raised = Signal(str, object)  # alias, Hint

    def __init__(self, monitor: Monitor, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.monitor = monitor
        self._unsubscribe = monitor.subscribe(self._on_event)

    def _on_event(self, event: MonitorEvent) -> None:
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
