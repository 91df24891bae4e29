"""The transfer queue's job snapshots as a Qt signal on the GUI thread.

The queue emits a snapshot on whichever thread saved it (a lane's, the release gate's worker, the
GUI's own). Off the GUI thread this bridge only keeps the newest snapshot per job and, for the
first of a burst, emits a signal queued to its own thread; the GUI thread then takes every
snapshot kept so far in one go and emits `job_changed` for each (a lane saving progress for
several hosts costs the GUI one wake-up, not one per save).
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Qt, Signal

from gpu_companion.core.transfers.job import TransferJob
from gpu_companion.core.transfers.queue import TransferQueue


class JobEvents(QObject):
    job_changed = Signal(object)  # TransferJob, on the GUI thread
    _wake = Signal()

    def __init__(self, queue: TransferQueue, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._lock = threading.Lock()
        self._pending: dict[int | None, TransferJob] = {}
        self._closed = False
        self._wake.connect(self._drain, Qt.ConnectionType.QueuedConnection)
        self._unsubscribe = queue.on_job_changed.subscribe(self._on_changed)

    def _on_changed(self, job: TransferJob) -> None:  # any thread
        with self._lock:
            if self._closed:
                return
            first = not self._pending
            self._pending[job.id] = job  # a newer snapshot of the same job replaces the older
        if first:
            self._wake.emit()  # queued: _drain runs on this object's (the GUI) thread

    def _drain(self) -> None:  # the GUI thread
        with self._lock:
            jobs, self._pending = list(self._pending.values()), {}
        for job in jobs:
            self.job_changed.emit(job)

    def close(self) -> None:
        """Stop listening (the page goes away); snapshots still kept are dropped."""
        with self._lock:
            self._closed = True
            self._pending.clear()
        self._unsubscribe()
