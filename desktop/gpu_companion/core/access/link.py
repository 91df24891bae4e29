"""One verified connection per host, shared by that host's tunnels: host key checked and key from
the keyring (the app's SessionFactory), kept alive, and made again with backoff when it drops."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common.backoff import Backoff
from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import Host

if TYPE_CHECKING:
    import paramiko

log = logging.getLogger(__name__)

Connect = Callable[[Host], "paramiko.SSHClient"]
KEEPALIVE_S = 15
CHECK_S = 0.5  # how often a live link looks at its transport
# a problem the user must act on: retrying cannot help, and must not hammer a changed host key
_STOPS = ("host_key_changed", "host_key_unknown", "no_key", "auth_failed", "keyring", "passphrase")

LINK_STATES = ("connecting", "up", "down", "blocked", "closed")
RECONNECT = Backoff(0.5, 30.0)


class HostLink:
    """`open()` connects once (raising the user's ConnectionProblem); afterwards a watcher thread
    reconnects with backoff whenever the transport dies, and stops for good on a host key or
    key problem (state "blocked", `message` says why)."""

    def __init__(
        self,
        host: Host,
        connect: Connect,
        on_change: Callable[[HostLink], None] = lambda _link: None,
        backoff: Backoff = RECONNECT,
    ) -> None:
        self.host = host
        self._connect = connect
        self._on_change = on_change
        self._backoff = backoff
        self._client: paramiko.SSHClient | None = None
        self._lock = threading.Lock()
        self._up = threading.Condition(self._lock)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.state = "connecting"
        self.message = ""
        self.reconnects = 0

    # --- lifecycle -----------------------------------------------------------------------

    def open(self) -> None:
        """Connect now; a ConnectionProblem (changed host key, no key...) is raised as is."""
        try:
            client = self._connect(self.host)
        except UserError as exc:
            self._set("blocked" if getattr(exc, "kind", "") in _STOPS else "down", str(exc))
            raise
        self._adopt(client)
        self._thread = threading.Thread(
            target=self._watch, name=f"link-{self.host.alias}", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        with self._lock:
            client, self._client = self._client, None
            self._up.notify_all()
        if client is not None:
            client.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)
        self._set("closed", "")

    # --- use -----------------------------------------------------------------------------

    def transport(self, wait_s: float = 0.0) -> Any | None:
        """The live paramiko Transport, waiting up to `wait_s` for a reconnect; None if down."""
        with self._lock:
            if not self._active_locked() and wait_s > 0 and not self._stop.is_set():
                self._wake.set()  # someone needs it now: skip the backoff wait
                self._up.wait_for(lambda: self._active_locked() or self._stop.is_set(), wait_s)
            if not self._active_locked():
                return None
            assert self._client is not None
            return self._client.get_transport()

    def client(self) -> paramiko.SSHClient | None:
        with self._lock:
            return self._client if self._active_locked() else None

    def drop(self, transport: Any) -> None:
        """A channel failed on `transport` as on a dead link: close it (if still the current
        one) so the watcher makes the link again now."""
        with self._lock:
            current = self._client.get_transport() if self._client is not None else None
            client = self._client if current is transport else None
        if client is not None:
            client.close()
        self._wake.set()

    # --- inside --------------------------------------------------------------------------

    def _active_locked(self) -> bool:
        transport = self._client.get_transport() if self._client is not None else None
        return bool(transport is not None and transport.is_active())

    def _adopt(self, client: paramiko.SSHClient) -> None:
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(KEEPALIVE_S)
        with self._lock:
            old, self._client = self._client, client
            self._up.notify_all()
        if old is not None:
            old.close()
        self._set("up", "")

    def _set(self, state: str, message: str) -> None:
        if (state, message) == (self.state, self.message):
            return
        self.state, self.message = state, message
        self._on_change(self)

    def _watch(self) -> None:
        attempt = 0
        while not self._stop.is_set():
            with self._lock:
                alive = self._active_locked()
            if alive:
                attempt = 0
                self._wake.wait(CHECK_S)
                self._wake.clear()
                continue
            if attempt == 0:
                self._set(
                    "down",
                    _("The connection to {alias} dropped: reconnecting.").format(
                        alias=self.host.alias
                    ),
                )
            else:
                self._wake.wait(self._backoff.delay(attempt))
                self._wake.clear()
                if self._stop.is_set():
                    return
            attempt += 1
            try:
                client = self._connect(self.host)
            except UserError as exc:
                if getattr(exc, "kind", "") in _STOPS:
                    self._set("blocked", str(exc))
                    with self._lock:
                        self._up.notify_all()
                    return
                self._set("down", _("{problem} Retrying.").format(problem=exc))
                continue
            except Exception as exc:  # a bug or an odd network error: log it, keep trying
                log.warning("reconnecting %s failed", self.host.alias, exc_info=True)
                self._set(
                    "down",
                    _("Reconnecting {alias} failed: {error}. Retrying.").format(
                        alias=self.host.alias, error=exc
                    ),
                )
                continue
            if self._stop.is_set():
                client.close()
                return
            self.reconnects += 1
            self._adopt(client)
