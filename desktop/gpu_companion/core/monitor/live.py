"""The live monitor: a collector per watched host feeding history, minute aggregates and hints.

All the work for a sample (ring buffer, minute roll-up, SQLite write, hint rules) happens on the
host's collector thread; listeners (the GUI bridge) then get the event and only have to redraw.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from gpu_companion.core.common.listeners import Listeners
from gpu_companion.core.common.notifier import Notifier
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.monitor.collector import (
    ClientFactory,
    CollectorConfig,
    CollectorEvent,
    HostCollector,
    HostState,
    HostStatus,
    PollEvent,
    SamplesEvent,
    StatusEvent,
)
from gpu_companion.core.monitor.faults import GpuFault
from gpu_companion.core.monitor.hints import Hint, HintConfig, HintEngine
from gpu_companion.core.monitor.history import MINUTE_CAPACITY, HostHistory, MinuteRow, MinuteStore
from gpu_companion.core.storage.store import Store

log = logging.getLogger(__name__)
PRUNE_EVERY_S = 3600.0


@dataclass(frozen=True)
class HintEvent:
    alias: str
    hint: Hint


MonitorEvent = CollectorEvent | HintEvent
MonitorListener = Callable[[MonitorEvent], None]


class Monitor:
    """Watch hosts; read their history, status, processes, counters and hints from any thread."""

    def __init__(
        self,
        connect: ClientFactory | None,
        *,
        store: Store | None = None,
        notifier: Notifier | None = None,
        config: CollectorConfig | None = None,
        hint_config: HintConfig | None = None,
        clock: Callable[[], float] = time.time,
        is_billed: Callable[[str], bool] | None = None,
        idle_minutes_for: Callable[[str], float | None] = lambda alias: None,
        raw_capacity: int | None = None,
        local_nvidia_smi: str | None = None,
    ) -> None:
        self.connect = connect
        self.config = config or CollectorConfig()
        self.minutes = MinuteStore(store) if store is not None else None
        self.clock = clock
        self._billed: dict[str, bool] = {}
        billed = is_billed or (lambda alias: self._billed.get(alias, False))
        self.hints = HintEngine(notifier, hint_config, clock, billed, idle_minutes_for)
        self._raw_capacity = raw_capacity
        self._local_nvidia_smi = local_nvidia_smi
        self._lock = threading.Lock()
        self._collectors: dict[str, HostCollector] = {}
        self._history: dict[str, HostHistory] = {}
        self._polls: dict[str, PollEvent] = {}
        self._status: dict[str, HostStatus] = {}
        self._faults: dict[str, tuple[GpuFault, ...]] = {}
        self._loaded: set[str] = set()
        self._listeners: Listeners[MonitorEvent] = Listeners("monitor")
        self._last_prune = 0.0

    # --- control ------------------------------------------------------------------------

    def subscribe(self, listener: MonitorListener) -> Callable[[], None]:
        return self._listeners.subscribe(listener)

    def watch(self, host: Host, billed: bool | None = None) -> None:
        """Start collecting `host` (no-op when already watched). Billed: an active rented host."""
        with self._lock:
            if host.alias in self._collectors:
                return
            self._billed[host.alias] = (
                billed if billed is not None else (host.state == "active" and not host.is_local)
            )
            kwargs = {} if self._raw_capacity is None else {"raw_capacity": self._raw_capacity}
            self._status[host.alias] = HostStatus(HostState.CONNECTING)
            self._history.setdefault(host.alias, HostHistory(host.alias, **kwargs))
            collector = HostCollector(
                host, self.connect, self._on_event, self.config, self._local_nvidia_smi
            )
            self._collectors[host.alias] = collector
        collector.start()

    def watched_host(self, alias: str) -> Host | None:
        """The host as its collector connects to it (a changed host needs a new collector)."""
        with self._lock:
            collector = self._collectors.get(alias)
        return collector.host if collector is not None else None

    def unwatch(self, alias: str) -> None:
        with self._lock:
            collector = self._collectors.pop(alias, None)
            self._faults.pop(alias, None)
        if collector is not None:
            collector.stop()
            self._save(self.history(alias).flush_open())
        self.hints.forget(alias)

    def reconnect(self, alias: str) -> None:
        with self._lock:
            collector = self._collectors.get(alias)
        if collector is not None:
            collector.reconnect()

    def stop(self) -> None:
        """Stop every collector and keep the minutes being built (application exit)."""
        with self._lock:
            collectors = list(self._collectors.values())
            self._collectors.clear()
        for c in collectors:
            c.stop()
        for history in list(self._history.values()):
            self._save(history.flush_open())

    # --- reading ------------------------------------------------------------------------

    def aliases(self) -> list[str]:
        with self._lock:
            return list(self._collectors)

    def history(self, alias: str) -> HostHistory:
        with self._lock:
            return self._history.setdefault(alias, HostHistory(alias))

    def status(self, alias: str) -> HostStatus:
        with self._lock:
            return self._status.get(alias, HostStatus(HostState.STOPPED))

    def faults(self, alias: str) -> tuple[GpuFault, ...]:
        """The GPUs of the last complete tick that could not be read (lost, need a reset)."""
        with self._lock:
            return self._faults.get(alias, ())

    def last_poll(self, alias: str) -> PollEvent | None:
        with self._lock:
            return self._polls.get(alias)

    # --- the collector threads ----------------------------------------------------------

    def ingest(self, event: CollectorEvent) -> None:
        """Process an event as if a collector sent it (replays: demo data, the benchmark's
        synthetic hosts). Call it off the GUI thread: it may write to the store."""
        self._on_event(event)

    def _on_event(self, event: CollectorEvent) -> None:
        alias = event.alias
        if alias not in self._loaded:
            self._load(alias)
        hints: list[Hint] = []
        if isinstance(event, SamplesEvent):
            with self._lock:
                self._faults[alias] = event.faults
            history = self.history(alias)
            done: list[MinuteRow] = []
            for timed in event.samples:
                row = history.add(timed.t, timed.sample)
                if row is not None:
                    done.append(row)
            self._save(done)
            hints = self.hints.on_samples(alias, [s.sample for s in event.samples])
        elif isinstance(event, StatusEvent):
            with self._lock:
                self._status[alias] = event.status
        elif isinstance(event, PollEvent):
            with self._lock:
                self._polls[alias] = event
            hints = self.hints.on_poll(
                alias, event.apps, event.counters, event.owners, event.login_user
            )
        self._publish(event)
        for hint in hints:
            self._publish(HintEvent(alias, hint))

    def _publish(self, event: MonitorEvent) -> None:
        self._listeners.emit(event)

    def _load(self, alias: str) -> None:
        """The last 24 h of minutes (on the collector thread, never the GUI's), then prune."""
        self._loaded.add(alias)
        if self.minutes is None:
            return
        now = self.clock()
        try:
            rows = self.minutes.load(alias, int(now // 60) - MINUTE_CAPACITY + 5)
            self.history(alias).add_minutes(rows)
            by_minute: dict[int, float] = {}
            for r in rows:
                if r.util_max == r.util_max:  # not NaN
                    by_minute[r.minute] = max(by_minute.get(r.minute, 0.0), r.util_max)
            self.hints.seed_idle(alias, by_minute.items())
            if now - self._last_prune > PRUNE_EVERY_S:
                self._last_prune = now
                self.minutes.prune(now)
        except Exception:
            log.exception("could not load the GPU history of %s", alias)

    def _save(self, rows: list[MinuteRow]) -> None:
        if self.minutes is None or not rows:
            return
        try:
            self.minutes.save(rows)
        except Exception:
            log.exception("could not save GPU minutes")
