"""The one way to run work off the GUI thread.

A core callable (or generator) runs on the global QThreadPool; results, yielded values and errors
come back as Qt signals delivered on the GUI thread. Core code never knows Qt. Work that runs for
minutes (a transfer lane) goes through `run_long` onto a pool of its own, so it never holds the
global pool's few threads (two on a 2-core laptop) that quick tasks wait for.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

log = logging.getLogger(__name__)


class WorkerSignals(QObject):
    started = Signal()
    yielded = Signal(object)
    returned = Signal(object)
    errored = Signal(object)
    finished = Signal()


class Worker(QRunnable):
    """Runs `fn(*args, **kwargs)`; if it returns a generator, each value is emitted as `yielded`.

    `cancel()` sets `cancelled`; generators stop at their next yield, plain callables may poll the
    `cancel_event` passed as a keyword when they accept one.
    """

    def __init__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.setAutoDelete(False)
        self.signals = WorkerSignals()
        self.cancel_event = threading.Event()
        self._fn, self._args, self._kwargs = fn, args, kwargs
        if "cancel_event" in inspect.signature(fn).parameters:
            self._kwargs["cancel_event"] = self.cancel_event
        self.done = threading.Event()

    def cancel(self) -> None:
        self.cancel_event.set()

    def run(self) -> None:
        self.signals.started.emit()
        try:
            result = self._fn(*self._args, **self._kwargs)
            if inspect.isgenerator(result):
                try:
                    for value in result:
                        if self.cancel_event.is_set():
                            break
                        self.signals.yielded.emit(value)
                finally:
                    result.close()
                result = None
            self.signals.returned.emit(result)
        except Exception as exc:
            log.debug("worker error", exc_info=True)
            self.signals.errored.emit(exc)
        finally:
            self.done.set()
            self.signals.finished.emit()


_live: set[Worker] = set()


def run_in_thread(
    fn: Callable[..., Any],
    *args: Any,
    on_result: Callable[[Any], object] | None = None,
    on_yield: Callable[[Any], object] | None = None,
    on_error: Callable[[Exception], object] | None = None,
    on_finished: Callable[[], object] | None = None,
    pool: QThreadPool | None = None,
    **kwargs: Any,
) -> Worker:
    """Start `fn` off the GUI thread and wire the callbacks; returns the worker (to cancel it)."""
    worker = Worker(fn, *args, **kwargs)
    if on_result:
        worker.signals.returned.connect(on_result)
    if on_yield:
        worker.signals.yielded.connect(on_yield)
    if on_error:
        worker.signals.errored.connect(on_error)
    if on_finished:
        worker.signals.finished.connect(on_finished)
    _live.add(worker)
    worker.signals.finished.connect(lambda: _live.discard(worker))
    (pool or QThreadPool.globalInstance()).start(worker)
    return worker


_long_pool: QThreadPool | None = None
LONG_POOL_THREADS = 64  # one thread per transfer lane (per host); more hosts wait for a free one


def long_pool() -> QThreadPool:
    """The pool for long work: its own threads, sized for one per lane rather than per core."""
    global _long_pool
    if _long_pool is None:
        _long_pool = QThreadPool()
        _long_pool.setMaxThreadCount(LONG_POOL_THREADS)
    return _long_pool


def run_long(
    fn: Callable[..., Any],
    *args: Any,
    on_result: Callable[[Any], None] | None = None,
    on_yield: Callable[[Any], None] | None = None,
    on_error: Callable[[Exception], None] | None = None,
    on_finished: Callable[[], None] | None = None,
    **kwargs: Any,
) -> Worker:
    """`run_in_thread` for work that may run for minutes (transfer lanes): off the shared pool."""
    return run_in_thread(
        fn,
        *args,
        on_result=on_result,
        on_yield=on_yield,
        on_error=on_error,
        on_finished=on_finished,
        pool=long_pool(),
        **kwargs,
    )


def wait_all(timeout_ms: int = 10000) -> bool:
    """Cancel and wait for every worker (application exit, test teardown)."""
    for w in list(_live):
        w.cancel()
    pools = [QThreadPool.globalInstance()] + ([_long_pool] if _long_pool is not None else [])
    return all([pool.waitForDone(timeout_ms) for pool in pools])


class LatestRead(QObject):
    """One read off the GUI thread at a time. A request while one runs asks for one more read
    after it, however many came (they coalesce, never queue): `prepare` runs on the GUI thread
    when a read starts (it takes what the widgets say then) and returns what the worker runs;
    `apply` gets the result on the GUI thread. A child of the widget it fills: its results
    stop with it."""

    def __init__(
        self,
        prepare: Callable[[], Callable[[], Any]],
        apply: Callable[[Any], object],
        failed: Callable[[Exception], object] | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._prepare, self._apply, self._failed = prepare, apply, failed
        self.worker: Worker | None = None
        self.again = False
        self.started = 0  # reads started (what the tests count)

    def busy(self) -> bool:
        return self.worker is not None or self.again

    def request(self) -> None:
        if self.worker is not None:
            self.again = True
            return
        self._start()

    def drop_pending(self) -> None:
        """Forget a read asked for meanwhile: the one running is the last."""
        self.again = False

    def _start(self) -> None:
        self.again = False
        self.started += 1
        self.worker = run_in_thread(self._prepare(), on_result=self._done, on_error=self._error)

    def _done(self, value: object) -> None:
        self.worker = None
        self._apply(value)
        if self.again:
            self._start()

    def _error(self, exc: Exception) -> None:
        self.worker = None
        if self._failed is not None:
            self._failed(exc)
        if self.again:
            self._start()
