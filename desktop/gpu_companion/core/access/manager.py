"""The tunnels of every host: started over one shared link per host, reported through listeners,
and closed when their host is released or removed (the registry announces it)."""

from __future__ import annotations

import threading

from gpu_companion.core.access.link import Connect, HostLink
from gpu_companion.core.access.specs import TunnelBook, TunnelSpec
from gpu_companion.core.access.tunnel import Tunnel, TunnelStatus
from gpu_companion.core.common.background import BackgroundSync
from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.listeners import Listeners
from gpu_companion.core.hosts.registry import Host, HostRegistry


class TunnelManager:
    """`start(host, spec)` returns the running tunnel's status or raises the user's error (a
    changed host key, a taken port asked for exactly); `on_change` fires on every state change,
    on the thread that saw it."""

    def __init__(
        self,
        connect: Connect,
        registry: HostRegistry,
        on_change: Listeners[TunnelStatus] | None = None,
    ) -> None:
        self._connect = connect
        self.registry = registry
        self.book = TunnelBook(registry.store)
        self.on_change: Listeners[TunnelStatus] = on_change or Listeners("tunnels")
        self._links: dict[int, HostLink] = {}
        self._tunnels: dict[tuple[int, str], Tunnel] = {}
        self._starts: dict[int, int] = {}  # starts under way per host: its link stays open
        self._lock = threading.RLock()
        # a change only enqueues: closing a link joins its threads, never on the caller's
        self._closer = BackgroundSync(self.close_released, quiet_s=0.0, name="tunnels-released")
        self._unsubscribe = registry.on_hosts_changed.subscribe(
            lambda _unused: self._closer.request()
        )

    @staticmethod
    def _key(host: Host, spec: TunnelSpec) -> tuple[int, str]:
        assert host.id is not None, "tunnels are for hosts kept in the registry"
        return host.id, spec.name.lower()

    def start(self, host: Host, spec: TunnelSpec, exact_port: bool = False) -> TunnelStatus:
        if host.is_local or host.id is None:
            raise UserError(
                _("Tunnels are for rented hosts; this computer's ports are already here.")
            )
        spec = spec.validated()
        key = self._key(host, spec)
        with self._lock:
            running = self._tunnels.get(key)
            if running is not None and not running.stopped and running.link.state != "blocked":
                return running.status()
            blocked = self._tunnels.pop(key, None)  # blocked: start again over a new link
        if blocked is not None:
            blocked.stop()
        with self._lock:
            self._starts[host.id] = self._starts.get(host.id, 0) + 1
        try:
            return self._start_on_link(host, spec, key, exact_port)
        finally:
            with self._lock:
                self._starts[host.id] -= 1
            self._drop_link_if_unused(host.id)  # a start that failed leaves no idle link

    def _start_on_link(
        self, host: Host, spec: TunnelSpec, key: tuple[int, str], exact_port: bool
    ) -> TunnelStatus:
        assert host.id is not None
        with self._lock:
            link = self._links.get(host.id)
            fresh = link is None or link.state in ("blocked", "closed")
            if fresh:
                if link is not None:
                    link.close()
                link = HostLink(host, self._connect, self._link_changed)
        assert link is not None
        if fresh:
            link.open()  # raises the ConnectionProblem: nothing listens locally
            with self._lock:  # another start for this host may have made one meanwhile
                existing = self._links.get(host.id)
                spare = None
                if existing is not None and existing.state not in ("blocked", "closed"):
                    spare, link = link, existing
                else:
                    self._links[host.id] = link
            if spare is not None:
                spare.close()
        tunnel = Tunnel(link, spec, lambda t: self.on_change.emit(t.status()), exact_port)
        tunnel.start()
        with self._lock:
            twin = self._tunnels.get(key)
            if twin is None or twin.stopped:
                self._tunnels[key] = tunnel
        if twin is not None and not twin.stopped:  # started twice at once: keep the first
            tunnel.stop()
            return twin.status()
        return tunnel.status()

    def stop(self, host_id: int, name: str) -> None:
        with self._lock:
            tunnel = self._tunnels.pop((host_id, name.lower()), None)
        if tunnel is not None:
            tunnel.stop()
        self._drop_link_if_unused(host_id)

    def tunnel(self, host_id: int, name: str) -> Tunnel | None:
        with self._lock:
            return self._tunnels.get((host_id, name.lower()))

    def statuses(self, host_id: int | None = None) -> list[TunnelStatus]:
        with self._lock:
            tunnels = list(self._tunnels.items())
        return [t.status() for (hid, _n), t in tunnels if host_id is None or hid == host_id]

    def close_host(self, host_id: int) -> None:
        with self._lock:
            names = [n for (hid, n) in self._tunnels if hid == host_id]
        for name in names:
            self.stop(host_id, name)
        self._drop_link_if_unused(host_id)

    def close_released(self) -> None:
        """A released or removed host keeps no tunnel open."""
        active = {h.id for h in self.registry.hosts(include_released=False)}
        with self._lock:
            gone = {hid for hid, _n in self._tunnels if hid not in active}
            gone |= {hid for hid in self._links if hid not in active}
        for host_id in gone:
            self.close_host(host_id)

    def close_all(self) -> None:
        self._unsubscribe()
        self._closer.close(drop_pending=True)
        with self._lock:
            ids = {hid for hid, _n in self._tunnels} | set(self._links)
        for host_id in ids:
            self.close_host(host_id)

    def _drop_link_if_unused(self, host_id: int) -> None:
        with self._lock:
            if self._starts.get(host_id) or any(hid == host_id for hid, _n in self._tunnels):
                return
            link = self._links.pop(host_id, None)
        if link is not None:
            link.close()

    def _link_changed(self, link: HostLink) -> None:
        """A link's state is each of its tunnels' state: tell the listeners about each."""
        with self._lock:
            tunnels = [t for (hid, _n), t in self._tunnels.items() if hid == link.host.id]
        for tunnel in tunnels:
            self.on_change.emit(tunnel.status())
