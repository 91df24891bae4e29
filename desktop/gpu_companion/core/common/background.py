"""Work a change asks for, done on a thread of its own, a burst of changes at a time.

A listener only enqueues: a host saved on the GUI thread must not wait for `ssh -G` per host (the
managed ssh config), for collectors to stop (the watcher) or for tunnels to close; and five hosts
imported at once need one pass, not five.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class BackgroundSync:
    """`request()` returns at once; `sync` runs on a worker thread once the requests go quiet
    for `quiet_s`. `flush()` waits until every request made so far has been served."""

    def __init__(
        self, sync: Callable[[], object], *, quiet_s: float = 0.2, name: str = "ssh-config-sync"
    ) -> None:
        self._sync = sync
        self.name = name
        self._quiet_s = quiet_s
        self._cond = threading.Condition()
        self._requested = 0  # requests made
        self._served = 0  # requests covered by a finished sync
        self._closed = False
        self._thread: threading.Thread | None = None
        self.runs = 0  # syncs done (tests check that bursts coalesce)

    def request(self) -> None:
        with self._cond:
            if self._closed:
                return
            self._requested += 1
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name=self.name, daemon=True
                )
                self._thread.start()
            self._cond.notify_all()

    def flush(self, timeout_s: float = 30.0) -> bool:
        """True once every request made before this call has been synced."""
        with self._cond:
            target = self._requested
            return self._cond.wait_for(lambda: self._served >= target, timeout_s)

    def close(self, timeout_s: float = 30.0, *, drop_pending: bool = False) -> None:
        """Serve what is pending (or drop it), then stop the thread (the app is exiting)."""
        with self._cond:
            self._closed = True
            if drop_pending:
                self._served = self._requested
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout_s)

    def _loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._requested > self._served or self._closed)
                if self._requested == self._served:
                    return  # closed with nothing pending
                while not self._closed:  # debounce: wait until no request came for quiet_s
                    seen = self._requested
                    self._cond.wait(self._quiet_s)
                    if self._requested == seen:
                        break
                target = self._requested
            try:
                self._sync()
            except Exception:  # the next request tries again; a hook never kills the thread
                log.warning("%s failed", self.name, exc_info=True)
            with self._cond:
                self.runs += 1
                self._served = target
                self._cond.notify_all()
