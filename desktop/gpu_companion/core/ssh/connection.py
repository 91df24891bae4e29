"""SSH sessions for the app's own work: key from the vault (in memory), host keys checked against
the app's known_hosts with RejectPolicy, and every failure explained in a renter's words."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.lazy import lazy_import
from gpu_companion.core.common.ssh_problems import SshProblem
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.ssh.config_writer import atomic_write, make_private_dirs
from gpu_companion.core.ssh.keyring_errors import KeyringUnavailable
from gpu_companion.core.ssh.vault import KeyVault

if TYPE_CHECKING:
    import paramiko
else:
    paramiko = lazy_import("paramiko")

KINDS = tuple(kind.value for kind in SshProblem)  # one vocabulary: core.common.ssh_problems


class ConnectionProblem(UserError):
    """Why a connection failed (`kind`, an SshProblem: equal to its value, e.g. "auth_failed");
    for host key problems `key` and `fingerprint` are what the server offered (and
    `known_fingerprint` what was trusted before). Without a hint, the kind's own one."""

    def __init__(
        self,
        kind: SshProblem | str,
        message: str,
        hint: str | None = None,
        *,
        key: paramiko.PKey | None = None,
        known_key: paramiko.PKey | None = None,
    ) -> None:
        problem = SshProblem(kind)
        super().__init__(message, hint=problem.text.hint if hint is None else hint)
        self.kind = problem
        self.key = key
        self.fingerprint = key.fingerprint if key is not None else ""
        self.known_fingerprint = known_key.fingerprint if known_key is not None else ""


@dataclass(frozen=True)
class ConnectionTest:
    """Unpacks as (ok, rtt_ms, message); `problem` keeps the details for the UI."""

    ok: bool
    rtt_ms: float | None
    message: str
    problem: ConnectionProblem | None = None

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter((self.ok, self.rtt_ms, self.message))


def known_hosts_name(host: Host) -> str:
    return host.hostname if host.port == 22 else f"[{host.hostname}]:{host.port}"


def _names(entry: paramiko.hostkeys.HostKeyEntry, name: str) -> bool:
    """Whether a known_hosts entry is for `name` (plain or hashed)."""
    return any(
        h == name or (h.startswith("|1|") and paramiko.HostKeys.hash_host(name, h) == h)
        for h in entry.hostnames
    )


class _RememberingReject:
    """RejectPolicy that keeps the offered key so the user can be shown its fingerprint (paramiko
    duck-types policies; a subclass would import paramiko with this module)."""

    def __init__(self) -> None:
        self.offered: paramiko.PKey | None = None

    def missing_host_key(
        self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey
    ) -> None:
        self.offered = key
        paramiko.RejectPolicy().missing_host_key(client, hostname, key)


class SessionFactory:
    """`connect(host)` returns a ready paramiko.SSHClient or raises ConnectionProblem.

    `passphrase_for(platform)` is asked when the platform's key is passphrase protected.
    """

    def __init__(
        self,
        vault: KeyVault,
        known_hosts: Path,
        passphrase_for: Callable[[str], str | None] | None = None,
    ) -> None:
        self.vault = vault
        self.known_hosts = known_hosts
        self.passphrase_for = passphrase_for
        self._lock = threading.Lock()

    # --- known hosts --------------------------------------------------------------------------

    def _host_keys(self) -> paramiko.HostKeys:
        keys = paramiko.HostKeys()
        if self.known_hosts.exists():
            keys.load(str(self.known_hosts))
        return keys

    def known_keys(self, host: Host) -> dict[str, paramiko.PKey]:
        return dict(self._host_keys().lookup(known_hosts_name(host)) or {})

    def _save(self, keys: paramiko.HostKeys) -> None:
        lines = [e.to_line() for e in keys._entries if e.to_line()]
        make_private_dirs(self.known_hosts.parent)  # ~/.ssh too, 0700 like every level
        atomic_write(self.known_hosts, "".join(lines).encode())

    def trust_host_key(self, host: Host, key: paramiko.PKey) -> None:
        """First contact: the user compared the fingerprint and accepted it."""
        with self._lock:
            keys = self._host_keys()
            name = known_hosts_name(host)
            if keys.lookup(name):
                raise UserError(
                    _(
                        "{alias} already has a trusted host key; a different one means the "
                        "machine changed."
                    ).format(alias=host.alias),
                    hint=_("Use 'this is a new instance' if you know it was replaced."),
                )
            keys.add(name, key.get_name(), key)
            self._save(keys)

    def replace_host_key(self, host: Host, key: paramiko.PKey) -> None:
        """The explicit 'this is a new instance' path: every old entry for the address goes."""
        with self._lock:
            keys = self._host_keys()
            name = known_hosts_name(host)
            keys._entries = [e for e in keys._entries if not _names(e, name)]
            keys.add(name, key.get_name(), key)
            self._save(keys)

    def trusted_fingerprints(self, host: Host) -> list[str]:
        """`TYPE SHA256:...` of each key trusted for the host's address (Edit host shows them)."""
        return [f"{k.get_name()} {k.fingerprint}" for k in self.known_keys(host).values()]

    def forget_host_keys(self, host: Host) -> int:
        """Edit host's reset: every trusted key of the address goes, so the next connection shows
        the fingerprint as a first contact. Returns how many entries were removed."""
        with self._lock:
            keys = self._host_keys()
            name = known_hosts_name(host)
            kept = [e for e in keys._entries if not _names(e, name)]
            removed = len(keys._entries) - len(kept)
            if removed:
                keys._entries = kept
                self._save(keys)
            return removed

    # --- connecting ---------------------------------------------------------------------------

    def _pkeys(self, host: Host) -> list[paramiko.PKey]:
        platform = self.vault.platform_of(host)
        if platform is None or self.vault.key(platform) is None:
            if platform:
                message = _(
                    "There is no SSH key for {alias}: its platform {platform} has none yet."
                ).format(alias=host.alias, platform=repr(platform))
            else:
                message = _(
                    "There is no SSH key for {alias}: it (no platform chosen) has none yet."
                ).format(alias=host.alias)
            raise ConnectionProblem(SshProblem.NO_KEY, message)
        stored = self.vault.key(platform)
        assert stored is not None
        passphrase = None
        if stored.encrypted:
            passphrase = self.passphrase_for(platform) if self.passphrase_for else None
            if not passphrase:
                raise ConnectionProblem(
                    SshProblem.PASSPHRASE,
                    _("The {platform} key is protected by a passphrase.").format(
                        platform=platform
                    ),
                )
        try:
            return self.vault.load_pkeys(platform, passphrase)
        except KeyringUnavailable as exc:
            raise ConnectionProblem(SshProblem.KEYRING, exc.message, exc.hint) from exc
        except UserError as exc:
            raise ConnectionProblem(
                SshProblem.PASSPHRASE if stored.encrypted else SshProblem.NO_KEY,
                exc.message,
                exc.hint,
            ) from exc

    def connect(self, host: Host, timeout: float = 10) -> paramiko.SSHClient:
        """A connected, authenticated client; the caller closes it."""
        pkeys = self._pkeys(host)
        last: ConnectionProblem | None = None
        for pkey in pkeys:  # the current key, then the one a rotation replaced
            try:
                return self._connect_with(host, pkey, timeout)
            except ConnectionProblem as exc:
                if exc.kind is not SshProblem.AUTH_FAILED:
                    raise
                last = exc
        assert last is not None
        raise last

    def _connect_with(self, host: Host, pkey: paramiko.PKey, timeout: float) -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        known = self._host_keys()
        if self.known_hosts.exists():
            client.get_host_keys().load(str(self.known_hosts))
        policy = _RememberingReject()
        client.set_missing_host_key_policy(policy)
        where = f"{host.hostname}:{host.port}"
        try:
            # The TCP part first, so refused / DNS / timeout come back as plain socket errors.
            sock = socket.create_connection((host.hostname, host.port), timeout=timeout)
            client.connect(
                host.hostname,
                port=host.port,
                username=host.user,
                pkey=pkey,
                sock=sock,
                look_for_keys=False,
                allow_agent=False,
                timeout=timeout,
                banner_timeout=timeout,
                auth_timeout=timeout,
                channel_timeout=timeout,
            )
            return client
        except Exception as exc:
            client.close()
            raise self._explain(exc, host, where, policy.offered, known) from exc

    def _explain(
        self,
        exc: Exception,
        host: Host,
        where: str,
        offered: paramiko.PKey | None,
        known: paramiko.HostKeys,
    ) -> ConnectionProblem:
        if isinstance(exc, paramiko.BadHostKeyException) or (
            offered is not None and known.lookup(known_hosts_name(host))
        ):
            key = exc.key if isinstance(exc, paramiko.BadHostKeyException) else offered
            before = (
                exc.expected_key
                if isinstance(exc, paramiko.BadHostKeyException)
                else next(iter(known.lookup(known_hosts_name(host)).values()))
            )
            return ConnectionProblem(
                SshProblem.HOST_KEY_CHANGED,
                _(
                    "The host key of {alias} ({where}) has changed: the connection was blocked."
                ).format(alias=host.alias, where=where),
                key=key,
                known_key=before,
            )
        if offered is not None:
            return ConnectionProblem(
                SshProblem.HOST_KEY_UNKNOWN,
                _("First connection to {alias} ({where}): its host key is not known yet.").format(
                    alias=host.alias, where=where
                ),
                _(
                    "Check that the fingerprint {fingerprint} matches the one your "
                    "provider shows, then trust it."
                ).format(fingerprint=offered.fingerprint),
                key=offered,
            )
        if isinstance(exc, paramiko.AuthenticationException):
            return ConnectionProblem(
                SshProblem.AUTH_FAILED,
                _(
                    "{user}@{where} refused the key: the platform does not have this public "
                    "key yet."
                ).format(user=host.user, where=where),
            )
        if isinstance(exc, socket.gaierror):
            return ConnectionProblem(
                SshProblem.DNS,
                _("The name {name} could not be found (DNS).").format(name=repr(host.hostname)),
            )
        if isinstance(exc, paramiko.ssh_exception.NoValidConnectionsError) or isinstance(
            exc, ConnectionRefusedError
        ):
            return ConnectionProblem(
                SshProblem.REFUSED, _("{where} refused the connection.").format(where=where)
            )
        text = str(exc).lower()
        if isinstance(exc, TimeoutError) or any(
            w in text for w in ("timed out", "banner", "no existing session")
        ):
            return ConnectionProblem(
                SshProblem.TIMEOUT,
                _("{where} did not answer as an SSH server in time.").format(where=where),
            )
        if isinstance(exc, (EOFError, ConnectionResetError)):
            return ConnectionProblem(
                SshProblem.HANDSHAKE_CLOSED,
                _("{where} closed the connection during the SSH handshake.").format(where=where),
            )
        if isinstance(exc, OSError):
            return ConnectionProblem(
                SshProblem.REFUSED,
                _("Could not reach {where}: {error}.").format(
                    where=where, error=exc.strerror or exc
                ),
                "",
            )
        return ConnectionProblem(
            SshProblem.SSH,
            _("The SSH connection to {where} failed: {error}.").format(
                where=where, error=str(exc) or type(exc).__name__
            ),
            "",
        )

    def test_connection(self, host: Host, timeout: float = 10) -> ConnectionTest:
        """Connect, run `echo ok`, and time the command's round trip."""
        try:
            client = self.connect(host, timeout)
        except ConnectionProblem as exc:
            return ConnectionTest(False, None, str(exc), exc)
        try:
            start = time.perf_counter()
            _stdin, stdout, _stderr = client.exec_command("echo ok", timeout=timeout)
            out = stdout.read().decode(errors="replace").strip()
            rtt = (time.perf_counter() - start) * 1000
        except (paramiko.SSHException, OSError) as exc:
            problem = ConnectionProblem(
                SshProblem.SSH,
                _("Connected, but running a command failed: {error}.").format(error=exc),
                "",
            )
            return ConnectionTest(False, None, str(problem), problem)
        finally:
            client.close()
        if out != "ok":
            return ConnectionTest(
                False, rtt, _("Connected, but 'echo ok' printed {output}.").format(output=repr(out))
            )
        return ConnectionTest(
            True,
            rtt,
            _("Connected to {alias} as {user}: round trip {ms} ms.").format(
                alias=host.alias, user=host.user, ms=f"{rtt:.0f}"
            ),
        )
