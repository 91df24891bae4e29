"""One reading of several hosts at once, through the same collector as the live monitor
(`gpu-companion inspect`): each host's first complete tick (every GPU once, read or failed) and
first slow poll, or its reason. A GPU that cannot be read is reported on its own, every time."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from gpu_companion.core.common.i18n import _
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
)
from gpu_companion.core.monitor.faults import GpuFault
from gpu_companion.core.monitor.nvsmi import ComputeApp, GpuSample

SNAPSHOT_CONFIG = CollectorConfig(interval_ms=200, poll_every_s=0.2, backoff_initial_s=60)
_WAITING = (HostState.CONNECTING, HostState.LIVE)


@dataclass(frozen=True)
class Snapshot:
    alias: str
    status: HostStatus
    gpus: tuple[GpuSample, ...] = ()
    apps: tuple[ComputeApp, ...] = ()
    faults: tuple[GpuFault, ...] = ()

    @property
    def ok(self) -> bool:
        return bool(self.gpus) and self.status.state in _WAITING and not self.faults

    def apps_on(self, gpu: GpuSample) -> list[ComputeApp]:
        return [a for a in self.apps if a.gpu_uuid is not None and a.gpu_uuid == gpu.uuid]


class _One:
    def __init__(self, host: Host, connect: ClientFactory | None, config: CollectorConfig) -> None:
        self.done = threading.Event()
        self.samples: tuple[GpuSample, ...] = ()
        self.faults: tuple[GpuFault, ...] = ()
        self.poll: PollEvent | None = None
        self.collector = HostCollector(host, connect, self._on_event, config)

    def _on_event(self, event: CollectorEvent) -> None:
        if isinstance(event, SamplesEvent) and not self.samples:
            # the collector sends whole ticks only: every GPU index, read or failed, is here
            self.samples = tuple(s.sample for s in event.samples)
            self.faults = event.faults
        elif isinstance(event, PollEvent) and self.poll is None:
            self.poll = event
        if (self.samples and self.poll) or self.collector.status.state not in _WAITING:
            self.done.set()


def take_snapshots(
    hosts: Sequence[Host],
    connect: ClientFactory | None,
    timeout: float = 30.0,
    config: CollectorConfig = SNAPSHOT_CONFIG,
) -> list[Snapshot]:
    """Every host in parallel; a host that does not answer in `timeout` says so."""
    ones = [_One(h, connect, config) for h in hosts]
    for one in ones:
        one.collector.start()
    deadline = time.monotonic() + timeout
    for one in ones:
        one.done.wait(max(0.0, deadline - time.monotonic()))
    results = []
    for host, one in zip(hosts, ones, strict=True):
        status = one.collector.status
        one.collector.stop()
        if not one.done.is_set():
            status = replace(status, state=HostState.RECONNECTING,
                             message=_("No reading within {seconds} s.").format(
                                 seconds=f"{timeout:.0f}"),
                             hint=_("Check that the instance is running."))  # fmt: skip
        apps = one.poll.apps if one.poll else ()
        results.append(Snapshot(host.alias, status, one.samples, apps, one.faults))
    return results
