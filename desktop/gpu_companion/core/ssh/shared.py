"""One SSH connection per host for the app's own long-lived work: the monitor's stream, the
tunnels, the release checklist and the auto-release probe share it instead of each making a
handshake of their own.

`SharedSessions.connect(host)` returns a `SessionLease`, used like the paramiko.SSHClient that
`SessionFactory.connect` returns (exec_command, get_transport, open_sftp, invoke_shell, close),
but whose `close()` ends only this holder's use: the channels it opened close, the connection
stays for the others. The connection closes `linger_s` after its last holder left (the
auto-release probe, every 30 s, finds it still open), at once when it is no longer the host's
(the host was edited), or when `close_all()` runs.

Connections are keyed by the host's id and its target (address, port, user, platform): an edit
makes a new one. A connection whose transport died, or that does not answer a channel request in
time, is replaced on the next `connect`; its holders see their own errors, as they did with a
client of their own. New connections are made by `SessionFactory.connect`, so host key rules and
ConnectionProblem are unchanged; concurrent first connects to one host make one handshake (a lock
per host: another host never waits for it).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common.lazy import lazy_import
from gpu_companion.core.hosts.registry import Host

if TYPE_CHECKING:
    import paramiko
else:
    paramiko = lazy_import("paramiko")

log = logging.getLogger(__name__)

Connect = Callable[[Host, float], "paramiko.SSHClient"]
Target = tuple[int | None, str, int, str, int | None]
# longer than the auto-release loop's round (a 30 s wait after each round's work), so its
# tmux probe finds the connection the previous round left
LINGER_S = 45.0
KEEPALIVE_S = 15
REAPER_NAME = "ssh-shared-linger"


def target_of(host: Host) -> Target:
    """What makes a connection this host's: its id, and where and as whom it connects."""
    return host.id, host.hostname, host.port, host.user, host.platform_id


@dataclass(eq=False)
class _Conn:
    """One paramiko client and how many leases hold it."""

    client: Any  # paramiko.SSHClient
    slot: _Slot
    holders: int = 0
    idle_since: float | None = None  # the last holder left at (monotonic), lingering

    def alive(self) -> bool:
        transport = self.client.get_transport()
        return bool(transport is not None and transport.is_active())


@dataclass(eq=False)
class _Slot:
    """One host target: its handshake lock, its current connection, its last attempt."""

    target: Target
    lock: threading.Lock = field(default_factory=threading.Lock)
    conn: _Conn | None = None
    users: int = 0  # connect() calls under way for this target
    attempts: int = 0  # handshakes finished (made or failed)
    failure: BaseException | None = None  # how the last one failed


class SharedSessions:
    """The shared connections of every host; `close_all()` when the app closes."""

    def __init__(
        self, connect: Connect, linger_s: float = LINGER_S, keepalive_s: int = KEEPALIVE_S
    ) -> None:
        self._connect = connect
        self.linger_s = linger_s
        self.keepalive_s = keepalive_s
        self.handshakes = 0  # connections made (diagnostics and tests)
        self._lock = threading.Lock()  # held briefly, never during a handshake or a close
        self._idle = threading.Condition(self._lock)
        self._slots: dict[Target, _Slot] = {}
        self._conns: set[_Conn] = set()  # every connection not closed yet, held or lingering
        self._reaper: threading.Thread | None = None
        self._closed = False

    # --- use --------------------------------------------------------------------------------

    def connect(self, host: Host, timeout: float = 10) -> SessionLease:
        """A lease on the host's connection, made now if there is none (ConnectionProblem)."""
        target = target_of(host)
        with self._lock:
            slot = self._slots.get(target)
            if slot is None:
                slot = self._slots[target] = _Slot(target)
            slot.users += 1
            seen = slot.attempts
        try:
            with slot.lock:  # one handshake per host at a time; others wait for its result
                conn = self._take(slot)
                if conn is not None:
                    if self._answers(conn, timeout):
                        return SessionLease(self, conn)
                    log.info("the connection to %s stopped answering: a new one", host.alias)
                    self._drop(conn)
                    self._release(conn)
                if slot.attempts > seen and slot.failure is not None:
                    raise slot.failure  # made while we waited, and failed: the same answer
                return SessionLease(self, self._handshake(slot, host, timeout))
        finally:
            with self._lock:
                slot.users -= 1
                self._forget_locked(slot)

    def connections(self) -> int:
        """How many connections are open (held or lingering)."""
        with self._lock:
            return len(self._conns)

    def close_all(self) -> None:
        """Close every connection, held or not (its holders see it closed), and stop the linger
        thread; later connects still work, each closed when its last holder leaves."""
        with self._lock:
            self._closed = True
            conns = list(self._conns)
            self._conns.clear()
            for slot in self._slots.values():
                slot.conn = None
            self._slots = {t: slot for t, slot in self._slots.items() if slot.users}
            reaper, self._reaper = self._reaper, None
            self._idle.notify_all()
        if reaper is not None and reaper is not threading.current_thread():
            reaper.join(10)
        transports = [conn.client.get_transport() for conn in conns]
        for conn in conns:
            _close(conn)
        for transport in transports:  # paramiko's reader threads end a moment after a close
            if transport is not None and transport is not threading.current_thread():
                transport.join(5)

    # --- inside -----------------------------------------------------------------------------

    def _take(self, slot: _Slot) -> _Conn | None:
        """The slot's live connection, held once more; a dead one is let go."""
        with self._lock:
            conn = slot.conn
            if conn is None:
                return None
            if conn.alive():
                conn.holders += 1
                conn.idle_since = None
                return conn
            slot.conn = None  # its holders close it as they leave
            dead = conn if conn.holders == 0 else None
            if dead is not None:
                self._conns.discard(dead)
        if dead is not None:
            _close(dead)
        return None

    def _answers(self, conn: _Conn, timeout: float) -> bool:
        """Whether the connection answers a channel request in time: a transport still 'active'
        over a network that silently dropped it would hand every holder a dead link."""
        try:
            channel = conn.client.get_transport().open_session(timeout=timeout)
        except paramiko.ChannelException:
            return True  # refused (too many sessions), but the server answered
        except Exception:
            return False
        try:
            channel.close()
        except Exception:  # it died right after answering: the next holder will see
            log.debug("closing the probe channel failed", exc_info=True)
        return True

    def _drop(self, conn: _Conn) -> None:
        """The connection is broken: no holder gets it again, and it closes for all now."""
        with self._lock:
            if conn.slot.conn is conn:
                conn.slot.conn = None
        try:
            conn.client.close()
        except Exception:
            log.debug("closing a broken connection failed", exc_info=True)

    def _handshake(self, slot: _Slot, host: Host, timeout: float) -> _Conn:
        """A new connection for the slot (its lock held), held once; a connection for an
        earlier target of the same host is no longer handed out and closes once unheld."""
        try:
            client = self._connect(host, timeout)
        except Exception as exc:
            with self._lock:
                slot.attempts += 1
                slot.failure = exc
            raise
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(self.keepalive_s)  # a lingering connection stays up
        conn = _Conn(client, slot, holders=1)
        stale: list[_Conn] = []
        with self._lock:
            slot.attempts += 1
            slot.failure = None
            slot.conn = conn
            self._conns.add(conn)
            self.handshakes += 1
            if host.id is not None:
                for other in list(self._slots.values()):
                    old = other.conn
                    if other is slot or other.target[0] != host.id or old is None:
                        continue
                    other.conn = None
                    if old.holders == 0:
                        self._conns.discard(old)
                        stale.append(old)
                    self._forget_locked(other)
        log.debug("connected to %s (%s:%s)", host.alias, host.hostname, host.port)
        for old in stale:
            _close(old)
        return conn

    def _release(self, conn: _Conn) -> None:
        """A lease ended: the last holder of the current connection lets it linger."""
        with self._lock:
            conn.holders -= 1
            if conn.holders > 0:
                return
            current = conn.slot.conn is conn
            if current and not self._closed and self.linger_s > 0 and conn.alive():
                conn.idle_since = time.monotonic()
                self._start_reaper_locked()
                return
            if current:
                conn.slot.conn = None
                self._forget_locked(conn.slot)
            if conn not in self._conns:
                return  # closed by close_all, or already let go
            self._conns.discard(conn)
        _close(conn)

    def _forget_locked(self, slot: _Slot) -> None:
        if slot.users == 0 and slot.conn is None and self._slots.get(slot.target) is slot:
            del self._slots[slot.target]

    def _start_reaper_locked(self) -> None:
        if self._reaper is None:
            self._reaper = threading.Thread(target=self._reap, name=REAPER_NAME, daemon=True)
            self._reaper.start()
        else:
            self._idle.notify_all()

    def _reap(self) -> None:
        """Close lingering connections when their time is up; ends when none lingers."""
        while True:
            expired: list[_Conn] = []
            with self._lock:
                if self._closed or self._reaper is not threading.current_thread():
                    return
                now = time.monotonic()
                waits: list[float] = []
                for slot in list(self._slots.values()):
                    conn = slot.conn
                    if conn is None or conn.holders or conn.idle_since is None:
                        continue
                    left = conn.idle_since + self.linger_s - now
                    if left > 0:
                        waits.append(left)
                        continue
                    slot.conn = None
                    self._conns.discard(conn)
                    self._forget_locked(slot)
                    expired.append(conn)
                if not expired:
                    if not waits:
                        self._reaper = None
                        return
                    self._idle.wait(min(waits))
            for conn in expired:
                _close(conn)


def _close(conn: _Conn) -> None:
    try:
        conn.client.close()
    except Exception:  # closing a dead connection may raise anything
        log.debug("closing a shared connection failed", exc_info=True)


class _LeaseTransport:
    """The shared paramiko Transport as one lease sees it: the channels it opens are the lease's
    (closed with it); everything else is the transport's own."""

    def __init__(self, lease: SessionLease, transport: Any) -> None:
        self._lease = lease
        self._transport = transport

    def _live(self) -> Any:
        if self._transport is None:
            raise paramiko.SSHException("SSH session not active")
        return self._transport

    def open_session(
        self, window_size: int | None = None, max_packet_size: int | None = None,
        timeout: float | None = None,
    ) -> Any:  # fmt: skip
        return self._lease._track(
            lambda: self._live().open_session(
                window_size=window_size, max_packet_size=max_packet_size, timeout=timeout
            )
        )

    def open_channel(
        self, kind: str, dest_addr: Any = None, src_addr: Any = None,
        window_size: int | None = None, max_packet_size: int | None = None,
        timeout: float | None = None,
    ) -> Any:  # fmt: skip
        return self._lease._track(
            lambda: self._live().open_channel(
                kind, dest_addr, src_addr, window_size, max_packet_size, timeout
            )
        )

    def open_sftp_client(self) -> Any:
        return paramiko.SFTPClient.from_transport(self)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class SessionLease:
    """One holder's use of a shared connection, used like a paramiko.SSHClient. `close()` closes
    the channels opened through it and lets the connection go; afterwards `get_transport()` is
    None and commands raise paramiko.SSHException, as on a closed SSHClient."""

    def __init__(self, pool: SharedSessions, conn: _Conn) -> None:
        self._pool = pool
        self._conn = conn
        self._lock = threading.Lock()
        self._channels: list[Any] = []
        self._closed = False
        self._transport = _LeaseTransport(self, conn.client.get_transport())

    @property
    def closed(self) -> bool:
        return self._closed

    def get_transport(self) -> Any:
        return None if self._closed or self._transport._transport is None else self._transport

    def exec_command(
        self, command: str, bufsize: int = -1, timeout: float | None = None,
        get_pty: bool = False, environment: dict[str, str] | None = None,
    ) -> tuple[Any, Any, Any]:  # fmt: skip
        chan = self._transport.open_session(timeout=timeout)
        if get_pty:
            chan.get_pty()
        chan.settimeout(timeout)
        if environment:
            chan.update_environment(environment)
        chan.exec_command(command)
        stdin = chan.makefile_stdin("wb", bufsize)
        stdout = chan.makefile("r", bufsize)
        stderr = chan.makefile_stderr("r", bufsize)
        return stdin, stdout, stderr

    def invoke_shell(
        self, term: str = "vt100", width: int = 80, height: int = 24, width_pixels: int = 0,
        height_pixels: int = 0, environment: dict[str, str] | None = None,
    ) -> Any:  # fmt: skip
        chan = self._transport.open_session()
        chan.get_pty(term, width, height, width_pixels, height_pixels)
        if environment:
            chan.update_environment(environment)
        chan.invoke_shell()
        return chan

    def open_sftp(self) -> Any:
        return self._transport.open_sftp_client()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            channels, self._channels = self._channels, []
        for chan in channels:
            try:
                chan.close()  # a reader blocked on it wakes up, as when a client closes
            except Exception:
                log.debug("closing a channel failed", exc_info=True)
        self._pool._release(self._conn)

    def __enter__(self) -> SessionLease:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _track(self, open_channel: Callable[[], Any]) -> Any:
        if self._closed:
            raise paramiko.SSHException("this SSH session was closed")
        chan = open_channel()
        with self._lock:
            late = self._closed
            if not late:
                self._channels = [c for c in self._channels if not c.closed]
                self._channels.append(chan)
        if late:  # closed while the channel was being opened
            chan.close()
            raise paramiko.SSHException("this SSH session was closed")
        return chan
