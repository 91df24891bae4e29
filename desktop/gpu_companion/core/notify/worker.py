"""The delivery thread: claims due rows from the outbox, sends them, records the result, sleeps
until the next retry is due or an enqueue wakes it. It never raises: a channel that fails is
retried later and the others go on."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

from gpu_companion.core.common.clock import Clock
from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.notify.model import Alert, Channel
from gpu_companion.core.notify.outbox import Outbox, OutboxItem

log = logging.getLogger(__name__)

Send = Callable[[Channel, Alert, datetime], None]
Lookup = Callable[[int], Channel | None]


class DeliveryWorker:
    """`start()` runs the loop on a daemon thread; `wake()` (cheap, any thread) makes it look at
    the outbox now; `stop()` ends it after the send in progress (each is bounded by a timeout).
    `deliver_due()` is one pass, for tests and for a command that sends and exits."""

    def __init__(
        self,
        outbox: Outbox,
        lookup: Lookup,
        send: Send,
        clock: Clock,
        *,
        idle_s: float = 60.0,
        name: str = "notify-delivery",
    ) -> None:
        self.outbox, self.lookup, self.send, self.clock = outbox, lookup, send, clock
        self.idle_s = idle_s
        self.name = name
        self._cond = threading.Condition()
        self._woken = False
        self._stopping = False
        self._thread: threading.Thread | None = None
        self.started = 0  # loop passes begun
        self.passes = 0  # loop passes done (pass n is begun as `started` n, done as `passes` n)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        with self._cond:
            if self.running:
                return
            self._stopping = False
            self._woken = True  # what a previous run left pending goes out at once
            self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
            self._thread.start()

    def wake(self) -> None:
        with self._cond:
            self._woken = True
            self._cond.notify_all()

    def stop(self, timeout_s: float = 30.0) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)
        with self._cond:
            if self._thread is thread and (thread is None or not thread.is_alive()):
                self._thread = None

    def deliver_due(self) -> int:
        """Send everything due now, one row per channel at a time; the number of tries made."""
        tried = 0
        while not self._stopping:
            items = self.outbox.claim(self.clock.now())
            if not items:
                return tried
            for item in items:
                self._deliver(item)
                tried += 1
        return tried

    def _deliver(self, item: OutboxItem) -> None:
        try:
            channel = self.lookup(item.channel_id)
            if channel is None:
                return  # removed meanwhile: its rows went with it
            self.send(channel, item.alert, self.clock.now())
        except UserError as exc:
            self._failed(item, str(exc))
        except Exception as exc:  # a bug: logged with its traceback, still only this row fails
            log.exception("sending notification %s failed", item.id)
            self._failed(
                item,
                _("Unexpected error: {kind}: {error}").format(kind=type(exc).__name__, error=exc),
            )
        else:
            self.outbox.delivered(item, self.clock.now())

    def _failed(self, item: OutboxItem, error: str) -> None:
        retry = self.outbox.failed(item, error, self.clock.now())
        log.info("notification %s to channel %s failed (try %d, %s): %s", item.id,
                 item.channel_id, item.attempts + 1,
                 f"next at {retry:%H:%M:%S}" if retry else "given up", error)  # fmt: skip

    def _wait_s(self) -> float:
        due = self.outbox.next_due()
        if due is None:
            return self.idle_s
        return max(0.05, min(self.idle_s, (due - self.clock.now()).total_seconds()))

    def _loop(self) -> None:
        try:
            self.outbox.prune(self.clock.now())
        except Exception:
            log.warning("pruning the notification outbox failed", exc_info=True)
        while True:
            with self._cond:
                if self._stopping:
                    return
                self._woken = False
                self.started += 1
            try:
                self.deliver_due()
                wait = self._wait_s()
            except Exception:  # the store is busy or full: try again in a while
                log.warning("notification delivery pass failed", exc_info=True)
                wait = self.idle_s
            with self._cond:
                self.passes += 1
                self._cond.notify_all()
                if not self._woken and not self._stopping:
                    self._cond.wait(wait)

    def wait_idle(self, timeout_s: float = 10.0) -> bool:
        """Wake the loop and wait until a pass begun after this call is done (tests, and a
        command that sends before it exits). False on timeout or when the loop is not running."""
        with self._cond:
            target = self.started + 1
            self._woken = True
            self._cond.notify_all()
            return (
                self._cond.wait_for(lambda: self.passes >= target or not self.running, timeout_s)
                and self.passes >= target
            )
