"""Which hosts the monitor watches, decided once for the whole app: every host with a running
rental, from launch, whether a window is shown or not (idle and cost alerts need the samples).

The Monitor page only shows what is watched; opening it adds the other active hosts and this
computer. Host edits (port, address, user, alias) restart that host's collector; rentals
starting or ending start or stop watching. A slow re-check catches rentals started by the
command line in another process. The first look runs on the watcher's own thread and the monitor
(numpy with its history) is made only when a host is to be watched: launch stays light.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from gpu_companion.core.common.background import BackgroundSync
from gpu_companion.core.common.listeners import Listeners
from gpu_companion.core.hosts.registry import LOCAL_HOST, Host

if TYPE_CHECKING:
    from gpu_companion.core.monitor.live import Monitor

log = logging.getLogger(__name__)
RESYNC_EVERY_S = 30.0


class _Rental(Protocol):
    @property
    def host_id(self) -> int | None: ...


class RentalSource(Protocol):
    """The spend ledger, as far as watching needs it."""

    on_rentals_changed: Listeners[None]

    def running(self) -> Sequence[_Rental]: ...


class HostSource(Protocol):
    """The host registry, as far as watching needs it."""

    on_hosts_changed: Listeners[None]

    def hosts(self, include_released: bool = True) -> list[Host]: ...


class HostWatcher:
    """Keeps `monitor` watching exactly the hosts the policy wants; owns the collectors' lives."""

    def __init__(
        self,
        registry: HostSource,
        ledger: RentalSource,
        monitor: Callable[[], Monitor],
        resync_every_s: float = RESYNC_EVERY_S,
    ) -> None:
        self.registry = registry
        self.ledger = ledger
        self._make_monitor = monitor  # called when the first host is to be watched
        self._monitor: Monitor | None = None
        self.resync_every_s = resync_every_s
        self.first_look = threading.Event()  # set once the first refresh has run
        self._all_hosts = False
        self._lock = threading.RLock()
        self._unsubscribe: list[Callable[[], None]] = []
        self._refresher: BackgroundSync | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def started(self) -> bool:
        return self._thread is not None

    def start(self) -> None:
        """Watch the rented hosts from now on (the first look runs on the watcher's thread, so
        launch does not wait on it) and follow host and rental changes until `stop()`."""
        if self._thread is not None:
            return
        # a change only enqueues: stopping a collector joins its thread, never on the caller's
        refresher = BackgroundSync(self.refresh, quiet_s=0.05, name="host-watcher-refresh")
        self._refresher = refresher
        self._unsubscribe = [
            self.registry.on_hosts_changed.subscribe(lambda _: refresher.request()),
            self.ledger.on_rentals_changed.subscribe(lambda _: refresher.request()),
        ]
        self._stop.clear()
        self.first_look.clear()
        self._thread = threading.Thread(target=self._resync, name="host-watcher", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe = []
        if self._refresher is not None:
            self._refresher.close(drop_pending=True)
            self._refresher = None
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(5)

    def include_all_hosts(self) -> None:
        """Also watch every active host and this computer (the Monitor page was opened)."""
        with self._lock:
            self._all_hosts = True
        self.refresh()

    def rented_hosts(self) -> list[Host]:
        """Active hosts with a running rental: the ones watched whatever is on screen."""
        running = {r.host_id for r in self.ledger.running() if r.host_id is not None}
        return [h for h in self.registry.hosts(include_released=False) if h.id in running]

    def wanted(self) -> list[Host]:
        if not self._all_hosts:
            return self.rented_hosts()
        return [LOCAL_HOST, *self.registry.hosts(include_released=False)]

    @property
    def monitor(self) -> Monitor:
        with self._lock:
            if self._monitor is None:
                self._monitor = self._make_monitor()
            return self._monitor

    def refresh(self) -> None:
        """Bring the monitor in line with the policy; a changed host gets a new collector."""
        with self._lock:
            try:
                wanted = {h.alias: h for h in self.wanted()}
            except Exception:  # a locked or busy store: the next change or re-check retries
                log.exception("could not read the hosts to watch")
                return
            if self._monitor is None and not wanted:
                return  # nothing to watch and nothing watched: no monitor yet
            monitor = self.monitor
            for alias in monitor.aliases():
                current = monitor.watched_host(alias)
                host = wanted.get(alias)
                if host is None or (current is not None and not _same_target(current, host)):
                    monitor.unwatch(alias)
            for host in wanted.values():
                monitor.watch(host)

    def _resync(self) -> None:
        try:
            self.refresh()
        finally:
            self.first_look.set()
        while not self._stop.wait(self.resync_every_s):
            self.refresh()


def _same_target(a: Host, b: Host) -> bool:
    """Whether a running collector still connects where the host now points."""
    return (a.alias, a.hostname, a.port, a.user, a.platform_id, a.id) == (
        b.alias,
        b.hostname,
        b.port,
        b.user,
        b.platform_id,
        b.id,
    )
