"""Every way collecting from a host fails, mapped to the host state the user sees and its remedy.

Connection problems come as exceptions with a `kind` (core.connection.ConnectionProblem), as
paramiko's own exceptions, or as socket errors; GPU problems come as nvidia-smi output.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.monitor.nvsmi import GpuError, detect_gpu_error

if TYPE_CHECKING:
    from gpu_companion.core.monitor.collector import HostState

_REJECTED_RE = re.compile(r'Field "([A-Za-z0-9_.]+)" is not a valid field to query')


class GpuProblem(Exception):
    """nvidia-smi says the GPU or the driver is unusable."""

    def __init__(self, error: GpuError) -> None:
        super().__init__(error.message)
        self.error = error


class FieldRejected(Exception):
    """The driver refused one field of the query (its --help-query-gpu listed it anyway)."""

    def __init__(self, field: str) -> None:
        super().__init__(_("nvidia-smi refused the field {field}").format(field=field))
        self.field = field

    @classmethod
    def from_line(cls, text: str) -> FieldRejected | None:
        match = _REJECTED_RE.search(text)
        return cls(match.group(1)) if match else None


def gpu_problem_from_output(exit_code: int, text: str) -> Exception | None:
    """The GPU problem (or refused field) an nvidia-smi output reports, or None."""
    error = detect_gpu_error(text)
    if error is not None:
        return GpuProblem(error)
    rejected = FieldRejected.from_line(text)
    if rejected is not None:
        return rejected
    if exit_code == 127:  # the shell's "command not found", whatever the wording
        return GpuProblem(
            GpuError(
                "no_driver",
                _("nvidia-smi is not installed on this host."),
                _(
                    "The image has no NVIDIA driver tools: choose a GPU image, or install the "
                    "driver."
                ),
            )
        )
    return None


@dataclass(frozen=True)
class Failure:
    state: HostState
    message: str
    hint: str
    retry: bool  # False: only the user can fix it, so wait for reconnect()


_KIND_TEXT: dict[str, tuple[str, str, str, bool]] = {
    # kind: (state value, message, hint, retry)
    "auth_failed": ("auth failed", N_("The host refused the SSH key."),
                    N_("Check that the platform's public key is installed on the instance."),
                    False),
    "no_key": ("auth failed", N_("There is no SSH key for this host's platform."),
               N_("Create or import a key on the Keys page."), False),
    "keyring": ("auth failed", N_("The SSH key could not be read from the system keyring."),
                N_("Unlock the keyring, then reconnect."), False),
    "host_key_changed": ("host key changed",
                         N_("The host's key changed since the last connection."),
                         N_("A new instance behind a recycled address has a new key: check it on "
                            "the Hosts page and accept it if you expect this."), False),
    "host_key_unknown": ("host key not trusted yet", N_("This host's key is not known yet."),
                         N_("Connect once from the Hosts page to check and accept its key."),
                         False),
    "refused": ("reconnecting", N_("The host refused the connection."),
                N_("The instance may be starting or stopped; retrying."), True),
    "timeout": ("reconnecting", N_("The host did not answer in time."),
                N_("Check the instance is running; retrying."), True),
    "dns": ("reconnecting", N_("The host name could not be found."),
            N_("Check the host name on the Hosts page; retrying."), True),
}  # fmt: skip


def classify_failure(exc: BaseException) -> Failure:
    """The host state, message, hint and whether to retry on our own, for one failure."""
    from gpu_companion.core.monitor.collector import HostState

    if isinstance(exc, GpuProblem):
        state = HostState.GPU_LOST if exc.error.kind == "gpu_lost" else HostState.NO_DRIVER
        return Failure(state, exc.error.message, exc.error.hint, True)
    kind = getattr(exc, "kind", None)
    if isinstance(kind, str) and kind in _KIND_TEXT:
        value, message, hint, retry = _KIND_TEXT[kind]
        detail = str(exc)
        return Failure(
            HostState(value), detail or _(message), getattr(exc, "hint", "") or _(hint), retry
        )
    paramiko_kind = _paramiko_kind(exc)
    if paramiko_kind is not None:
        value, message, hint, retry = _KIND_TEXT[paramiko_kind]
        return Failure(HostState(value), _(message), _(hint), retry)
    if isinstance(exc, socket.gaierror):
        value, message, hint, retry = _KIND_TEXT["dns"]
        return Failure(HostState(value), _(message), _(hint), retry)
    if isinstance(exc, ConnectionRefusedError):
        value, message, hint, retry = _KIND_TEXT["refused"]
        return Failure(HostState(value), _(message), _(hint), retry)
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return Failure(HostState.RECONNECTING, str(exc) or _("The host stopped answering."),
                       _("Retrying."), True)  # fmt: skip
    return Failure(HostState.RECONNECTING, str(exc) or type(exc).__name__, _("Retrying."), True)


def _paramiko_kind(exc: BaseException) -> str | None:
    try:
        import paramiko
    except ImportError:  # pragma: no cover - paramiko is a dependency
        return None
    if isinstance(exc, paramiko.BadHostKeyException):
        return "host_key_changed"
    if isinstance(exc, paramiko.AuthenticationException):
        return "auth_failed"
    if isinstance(exc, paramiko.SSHException) and "known_hosts" in str(exc):
        return "host_key_unknown"  # RejectPolicy's "Server ... not found in known_hosts"
    return None
