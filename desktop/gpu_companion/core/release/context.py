"""What a check may use: one SSH client to the host, the local backup dir and small services.

The services are Protocols so the parts built elsewhere (the transfer engine's "sync checkpoints"
preset, the spend ledger, the ssh config writer) plug in without this package knowing them.
"""

from __future__ import annotations

import posixpath
import shlex
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.lazy import lazy_import
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.providers.model import Instance
from gpu_companion.core.release.config import ChecklistConfig

if TYPE_CHECKING:
    import paramiko
else:
    paramiko = lazy_import("paramiko")


@dataclass(frozen=True)
class VerifiedSync:
    """A finished, verified download of one remote folder whose local copy is still there (in
    the host's backup folder or wherever the user downloaded it)."""

    job_id: int
    remote_dir: str
    local_dir: Path
    since: float  # this computer's clock, at or before the final run's checksum pass began
    finished_at: float


class CheckpointSync(Protocol):
    """Backups as transfer-queue jobs (progress, pause, resume, cancel, verified): the gate
    starts them and reads their history, whichever page started them."""

    def local_dir(self, host: Host, remote_dir: str) -> Path:
        """The host's backup folder for `remote_dir` (one layout for every page)."""
        ...

    def last_verified(
        self, host: Host, remote_dir: str, resolve: Callable[[str], str]
    ) -> VerifiedSync | None:
        """The newest verified download of `remote_dir` (paths compared after `resolve`)."""
        ...

    def sync(self, host: Host, remote_dirs: Sequence[str]) -> Iterator[str]:
        """Queue one job per folder and follow them to the end, yielding progress lines;
        raises UserError when one fails, is cancelled or paused."""
        ...

    def download_file(self, host: Host, remote_path: str, local_dir: Path) -> Iterator[str]:
        """The same for one file, landing inside `local_dir`."""
        ...

    def cancel(self, host: Host) -> None:
        """Cancel the jobs this gate is following for `host` (partial data kept)."""
        ...

    def uploads(self, host: Host) -> list[tuple[str, Path]]:
        """(remote folder, local source) of every finished upload the app made to `host`."""
        ...


class RentalLedger(Protocol):
    """The part of the spend ledger the release gate needs."""

    def rental_started_at(self, host: Host) -> datetime | None: ...

    def end_meter(self, host: Host, record: ReleaseRecord) -> None:
        """Stop the rental's meter at `record.at`; the record carries the evidence, the kind
        (release or override), the reason and the failing items to keep with the rental."""
        ...

    def start_stopped(self, host: Host, at: datetime, instance: Instance | None) -> None:
        """Meter a stopped instance's disk from `at` at the provider's storage rate."""
        ...

    def record_release(self, record: ReleaseRecord) -> int: ...

    def history(self, host_alias: str) -> list[ReleaseRecord]: ...


class SshConfigBlocks(Protocol):
    """The ssh config writer: a released host's block goes, its history stays."""

    def remove_host(self, alias: str) -> None: ...


@dataclass(frozen=True)
class ReleaseRecord:
    """One release (or override) as the ledger keeps it."""

    host_alias: str
    kind: str  # "release" | "override" | "failed" | "unconfirmed" | "auto-…"
    at: datetime
    evidence: tuple[dict[str, object], ...] = ()
    failing_items: tuple[str, ...] = ()
    reason: str = ""
    release_command: tuple[str, ...] = ()
    command_output: str = ""
    id: int | None = None


@dataclass(frozen=True)
class RemoteResult:
    code: int
    out: str
    err: str


MAX_OUTPUT_BYTES = 1024 * 1024  # per stream of one check command: a check reads a few lines


class OutputTooLarge(Exception):
    pass


def _read_capped(chan: paramiko.Channel, command: str, timeout: float) -> tuple[bytes, bytes]:
    """A command's stdout and stderr, read side by side (one filling up cannot stall the
    other), each up to MAX_OUTPUT_BYTES: a host printing without end (or a "file" that is
    /dev/zero) is stopped there, with a message, instead of filling memory."""
    streams = ((chan.recv_ready, chan.recv, bytearray()), (chan.recv_stderr_ready,
               chan.recv_stderr, bytearray()))  # fmt: skip
    deadline = time.monotonic() + timeout
    while True:
        moved = False
        for ready, recv, buf in streams:
            while ready():
                buf += recv(65536)
                moved = True
                if len(buf) > MAX_OUTPUT_BYTES:
                    shown = command if len(command) <= 60 else command[:57] + "..."
                    raise OutputTooLarge(
                        _(
                            "The host answered `{command}` with more than {kib} KiB; the check "
                            "stopped reading it."
                        ).format(command=shown, kib=MAX_OUTPUT_BYTES // 1024)
                    )
        if not moved:
            if chan.closed or (chan.eof_received and chan.exit_status_ready()):
                if not (chan.recv_ready() or chan.recv_stderr_ready()):
                    return bytes(streams[0][2]), bytes(streams[1][2])
                continue
            if time.monotonic() > deadline:
                raise TimeoutError(
                    _("no answer to `{command}` in {seconds} s").format(
                        command=command[:60], seconds=f"{timeout:.0f}"
                    )
                )
            time.sleep(0.005)


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


@dataclass
class ReleaseContext:
    """Everything one checklist run needs; the SSH client is opened on first use and reused."""

    host: Host
    connect: Callable[[Host], paramiko.SSHClient]
    local_dir: Path
    config: ChecklistConfig
    sync: CheckpointSync
    rental_started_at: datetime | None = None
    clock: Callable[[], datetime] = utcnow
    timeout: float = 60.0
    _client: paramiko.SSHClient | None = field(default=None, repr=False)
    _home: str | None = field(default=None, repr=False)
    _offset: float | None = field(default=None, repr=False)

    def client(self) -> paramiko.SSHClient:
        if self._client is None:
            self._client = self.connect(self.host)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def run(self, argv: Sequence[str], timeout: float | None = None) -> RemoteResult:
        """Run argv on the host, every argument quoted (the remote shell sees one word each)."""
        return self.run_command(shlex.join(argv), timeout)

    def run_script(self, script: str, *args: str, timeout: float | None = None) -> RemoteResult:
        """A fixed `sh` script whose inputs arrive as positional parameters, never pasted in."""
        return self.run(["sh", "-c", script, "sh", *args], timeout)

    def run_command(self, command: str, timeout: float | None = None) -> RemoteResult:
        try:
            _in, stdout, stderr = self.client().exec_command(
                command, timeout=timeout or self.timeout
            )
            limit = timeout or self.timeout
            out_b, err_b = _read_capped(stdout.channel, command, limit)
            out, err = out_b.decode(errors="replace"), err_b.decode(errors="replace")
            return RemoteResult(stdout.channel.recv_exit_status(), out, err)
        except OutputTooLarge as exc:
            self.close()  # the channel may still be sending: the client goes with it
            raise UserError(
                str(exc),
                hint=_(
                    "The host's command printed far more than a check reads; look at it on "
                    "the host, then run the check again."
                ),
            ) from None
        except (paramiko.SSHException, OSError) as exc:
            self.close()
            raise UserError(
                _("Lost the connection to {host} while checking ({error}).").format(
                    host=self.host.alias, error=exc
                ),
                hint=_("Check that the instance is still running, then run the check again."),
            ) from exc

    @property
    def home(self) -> str:
        if self._home is None:
            res = self.run_command('printf %s "$HOME"')
            self._home = res.out.strip() or "/"
        return self._home

    def abspath(self, path: str) -> str:
        """`~`, `~/x` and relative paths resolved against the login's home on the host."""
        if path == "~":
            return self.home
        if path.startswith("~/"):
            path = path[2:]
        return posixpath.normpath(posixpath.join(self.home, path))

    def remote_now(self) -> float:
        """The host's clock, read once and then followed locally; the estimate errs early by up
        to one round trip, so a file written after a check is never mistaken for an older one."""
        if self._offset is None:
            res = self.run(["date", "+%s.%N"])
            received = time.time()
            try:
                self._offset = float(res.out.strip()) - received
            except ValueError:
                self._offset = 0.0
        return time.time() + self._offset
