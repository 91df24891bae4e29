"""Trusting a host key from a script: read what the server offers, and write it to the app's
known_hosts only when it matches the SHA256 fingerprint the user got from their provider.

The fingerprint dialog does the same on screen; a command line has no dialog, so the match is
the user's explicit consent.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.lazy import lazy_import
from gpu_companion.core.hosts.registry import Host

if TYPE_CHECKING:
    import paramiko

    from gpu_companion.core.ssh.connection import SessionFactory
else:
    paramiko = lazy_import("paramiko")

_SHA256_RE = re.compile(r"^SHA256:[A-Za-z0-9+/]{43}$")


@dataclass(frozen=True)
class OfferedKey:
    key_type: str  # e.g. "ssh-ed25519"
    fingerprint: str  # "SHA256:..." as ssh-keygen -l prints it
    key: paramiko.PKey


def normalize_fingerprint(value: str) -> str:
    """`SHA256:base64` (the `SHA256:` prefix may be left out, trailing `=` are dropped)."""
    text = value.strip().rstrip("=")
    if not text.startswith("SHA256:"):
        text = f"SHA256:{text}"
    if not _SHA256_RE.match(text):
        raise UserError(
            _("{value} is not a SHA256 fingerprint.").format(value=repr(value.strip())),
            hint=_(
                "Give it as ssh-keygen -lf prints it: SHA256: and 43 characters (MD5 "
                "fingerprints are not accepted)."
            ),
        )
    return text


def offered_host_key(host: Host, timeout: float = 10) -> OfferedKey:
    """Connect far enough to read the server's host key; nothing is authenticated or saved."""
    where = f"{host.hostname}:{host.port}"
    try:
        sock = socket.create_connection((host.hostname, host.port), timeout=timeout)
    except socket.gaierror:
        raise UserError(
            _("The name {name} could not be found (DNS).").format(name=repr(host.hostname))
        ) from None
    except OSError as exc:
        raise UserError(
            _("Could not reach {where}: {error}.").format(where=where, error=exc.strerror or exc),
            hint=_("The instance may still be starting or stopped, or the port is wrong."),
        ) from None
    transport = paramiko.Transport(sock)
    try:
        transport.start_client(timeout=timeout)
        key = transport.get_remote_server_key()
    except (paramiko.SSHException, OSError, EOFError) as exc:
        raise UserError(
            _("{where} did not answer as an SSH server: {error}.").format(where=where, error=exc),
            hint=_("Check the port in the platform's console."),
        ) from None
    finally:
        transport.close()
    return OfferedKey(key.get_name(), key.fingerprint, key)


TrustOutcome = Literal["trusted", "already trusted", "replaced"]


def trust_host(
    sessions: SessionFactory,
    host: Host,
    offered: OfferedKey,
    expected: str,
    *,
    replace: bool = False,
) -> TrustOutcome:
    """Write `offered` to the app's known_hosts if it matches `expected`; a host that already has
    a different trusted key needs `replace` (a new instance behind a recycled address)."""
    want = normalize_fingerprint(expected)
    if offered.fingerprint != want:
        raise UserError(
            _("{alias} offered {offered}, not {wanted}: nothing was trusted.").format(
                alias=host.alias, offered=offered.fingerprint, wanted=want
            ),
            hint=_(
                "Compare with the fingerprint your provider shows. A different key can mean the "
                "address now belongs to another machine, or that someone is intercepting the "
                "connection."
            ),
        )
    known = sessions.known_keys(host)
    if any(k.fingerprint == want for k in known.values()):
        return "already trusted"
    if known and not replace:
        raise UserError(
            _(
                "{alias} already has a different trusted host key; the machine behind "
                "{hostname}:{port} changed."
            ).format(alias=host.alias, hostname=host.hostname, port=host.port),
            hint=_(
                "If you just created or restarted this instance, run trust again with --replace "
                "to forget the old key."
            ),
        )
    if known:
        sessions.replace_host_key(host, offered.key)
        return "replaced"
    sessions.trust_host_key(host, offered.key)
    return "trusted"
