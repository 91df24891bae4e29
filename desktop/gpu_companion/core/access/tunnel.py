"""A local port forwarded to a port on a rented host through the host's shared verified link
(paramiko `direct-tcpip` channels behind a listening socket on 127.0.0.1): no ssh-agent, no
private key file, no `ssh -L` process."""

from __future__ import annotations

import errno
import logging
import os
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gpu_companion.core.access.link import HostLink
from gpu_companion.core.access.specs import TunnelSpec
from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.lazy import lazy_import

if TYPE_CHECKING:
    import paramiko
else:
    paramiko = lazy_import("paramiko")

log = logging.getLogger(__name__)

BIND = "127.0.0.1"  # tunnels are for this computer only
NEXT_PORTS = 20  # ports tried after a taken one before asking the OS for any free port
CHANNEL_WAIT_S = 15.0  # how long a new local connection waits for a dropped link to come back
PROBE_S = 3.0  # how often a live tunnel checks that something answers on the remote port
TUNNEL_STATES = ("up", "down", "blocked", "stopped")  # a taken port is said in the message


class PortInUse(UserError):
    """The local port the user asked for is taken (and they asked for exactly that one)."""

    def __init__(self, port: int) -> None:
        super().__init__(
            _("Local port {port} is already in use by another program.").format(port=port),
            hint=_("Choose another local port, or leave it empty to take the next free one."),
        )
        self.port = port


def bind_listener(wanted: int, exact: bool = False) -> tuple[socket.socket, str]:
    """A listening socket on 127.0.0.1 at `wanted`, else the next free port (unless `exact`),
    and a note saying which port was taken instead (empty when `wanted` was free)."""
    ports = [wanted]
    if not exact:
        ports += [*range(wanted + 1, min(wanted + 1 + NEXT_PORTS, 65536)), 0]
    for port in ports:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if os.name != "nt":  # Unix: reuse a port whose old connections linger in TIME_WAIT
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((BIND, port))
            sock.listen(16)
        except OSError as exc:
            sock.close()
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                continue
            raise UserError(
                _("Could not listen on {address}: {error}.").format(
                    address=f"{BIND}:{port}", error=exc.strerror or exc
                )
            ) from exc
        got = int(sock.getsockname()[1])
        note = (
            ""
            if got == wanted
            else _("Local port {wanted} is in use; using {got} instead.").format(
                wanted=wanted, got=got
            )
        )
        return sock, note
    raise PortInUse(wanted)


@dataclass(frozen=True)
class TunnelStatus:
    """What a tunnel shows: its state, the local URL and whether the remote port answers."""

    host_id: int
    alias: str
    spec: TunnelSpec
    state: str
    local_port: int
    message: str = ""
    answers: bool | None = None  # None: not looked yet

    @property
    def url(self) -> str:
        return f"http://{BIND}:{self.local_port}/"


class Tunnel:
    """Accepts on the local port; each connection becomes one channel to the remote port. While
    the link is down new connections wait for it; the local port stays the same throughout."""

    def __init__(
        self,
        link: HostLink,
        spec: TunnelSpec,
        on_change: Callable[[Tunnel], None] = lambda _t: None,
        exact_port: bool = False,
    ) -> None:
        self.link = link
        self.spec = spec
        self._on_change = on_change
        self._exact = exact_port
        self._stop = threading.Event()
        self._sock: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._pumps: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self.local_port = 0
        self.note = ""  # e.g. which port was taken instead of the wanted one
        self.answers: bool | None = None
        self.stopped = False
        self.connections = 0

    # --- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        self._sock, self.note = bind_listener(self.spec.wanted_local, self._exact)
        self.local_port = int(self._sock.getsockname()[1])
        for target, name in ((self._accept_loop, "accept"), (self._probe_loop, "probe")):
            t = threading.Thread(target=target, name=f"tunnel-{name}-{self.local_port}")
            t.daemon = True
            t.start()
            self._threads.append(t)
        self._changed()

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        self._stop.set()
        if self._sock is not None:
            try:  # wakes the accept() blocked in the other thread (close alone does not)
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._sock.close()
        for t in [*self._threads, *list(self._pumps)]:
            if t is not threading.current_thread():
                t.join(5)
        self._changed()

    def status(self) -> TunnelStatus:
        assert self.link.host.id is not None
        if self.stopped:
            state, message = "stopped", ""
        elif self.link.state in ("blocked", "down"):
            state, message = self.link.state, self.link.message
        else:
            state, message = "up", self.note
            if self.answers is False:
                message = _(
                    "Nothing answers on {alias}:{port} yet (is the server running there?)."
                ).format(alias=self.link.host.alias, port=self.spec.remote_port)
        return TunnelStatus(
            self.link.host.id,
            self.link.host.alias,
            self.spec,
            state,
            self.local_port,
            message,
            self.answers,
        )

    def _changed(self) -> None:
        self._on_change(self)

    # --- the remote side ------------------------------------------------------------------

    def open_channel(self, origin: tuple[str, int], wait_s: float = CHANNEL_WAIT_S) -> Any | None:
        """A channel to the remote port, or None when nothing listens there or the link stays
        down for `wait_s`; a link found dead on the way is dropped and waited for again."""
        deadline = time.monotonic() + wait_s
        while True:
            transport = self.link.transport(max(deadline - time.monotonic(), 0))
            if transport is None:
                return None
            try:
                channel = transport.open_channel(
                    "direct-tcpip",
                    (self.spec.remote_host, self.spec.remote_port),
                    origin,
                    timeout=10,
                )
            except paramiko.ChannelException as exc:  # the host refused: nothing listens there
                log.debug("channel to %s refused: %s", self.spec.remote_port, exc)
                self._set_answers(False)
                return None
            except Exception as exc:  # the link died under us: make it again, then retry
                log.debug("channel on a dead link: %s", exc)
                self.link.drop(transport)
                if time.monotonic() >= deadline:
                    return None
                continue
            self._set_answers(True)
            return channel

    def probe(self) -> bool | None:
        """Whether something answers on the remote port now (None: the link is down)."""
        channel = self.open_channel(("127.0.0.1", 0), wait_s=0)
        if channel is not None:
            try:
                channel.close()
            except (EOFError, OSError):  # the link died right after the answer
                pass
        return self.answers if channel is None else True

    def _set_answers(self, value: bool | None) -> None:
        if value != self.answers:
            self.answers = value
            self._changed()

    def _probe_loop(self) -> None:
        while not self._stop.wait(0 if self.answers is None else PROBE_S):
            if self.link.state == "up":
                self.probe()
            if self.answers is None:
                self._stop.wait(0.2)

    # --- the local side -------------------------------------------------------------------

    def _accept_loop(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                client, peer = self._sock.accept()
            except OSError:
                return  # the socket was closed by stop()
            t = threading.Thread(
                target=self._serve, args=(client, peer), name=f"tunnel-pump-{self.local_port}"
            )
            t.daemon = True
            with self._lock:
                self._pumps.add(t)
            t.start()

    def _serve(self, client: socket.socket, peer: tuple[str, int]) -> None:
        try:
            channel = self.open_channel(peer)
            if channel is None:
                return
            self.connections += 1
            try:
                _pump(client, channel, self._stop)
            finally:
                channel.close()
        except Exception:
            log.debug("tunnel connection ended", exc_info=True)
        finally:
            client.close()
            with self._lock:
                self._pumps.discard(threading.current_thread())


def _pump(client: socket.socket, channel: Any, stop: threading.Event) -> None:
    """Copy bytes both ways until either side closes (paramiko channels can be select()ed)."""
    while not stop.is_set():
        ready, _w, _x = select.select([client, channel], [], [], 0.5)
        if client in ready:
            data = client.recv(65536)
            if not data:
                return
            channel.sendall(data)
        if channel in ready:
            data = channel.recv(65536)
            if not data:
                return
            client.sendall(data)
