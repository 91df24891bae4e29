"""Runs one job to the end: picks rsync or SFTP, retries dropped connections, then verifies.

`TransferEngine.run(job, host, control)` is a generator of `EngineEvent`s returning a
`TransferOutcome`; the queue drives it on a worker thread and the GUI only sees the events.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import stat
import subprocess
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common.backoff import Backoff
from gpu_companion.core.common.children import run_group
from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _, ngettext
from gpu_companion.core.common.lazy import lazy_import
from gpu_companion.core.common.ssh_problems import SshProblem, openssh_problem
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.transfers.job import (
    PARTIAL_DIR,
    EngineChosen,
    EngineEvent,
    EngineName,
    Retrying,
    TransferControl,
    TransferJob,
    TransferNote,
    TransferOutcome,
    Verifying,
)
from gpu_companion.core.transfers.rsync.engine import (
    RsyncCommand,
    RsyncRun,
    deletions,
    itemized_differences,
    rsync_version_argv,
    run_capture,
    salvage_temp_files,
)
from gpu_companion.core.transfers.rsync.errors import (
    DISK_FULL_RE,
    disk_full_path,
    explain_exit_code,
)
from gpu_companion.core.transfers.rsync.progress import parse_stats
from gpu_companion.core.transfers.rsync.versions import (
    RsyncVersion,
    parse_rsync_version,
    supports_progress2,
    supports_protect_args,
)
from gpu_companion.core.transfers.sftp import SftpRun, disk_full_message, is_disk_full

if TYPE_CHECKING:
    import paramiko
else:
    paramiko = lazy_import("paramiko")

log = logging.getLogger(__name__)

MKPATH_SINCE: RsyncVersion = (3, 2, 3)
ClientFactory = Callable[[Host], Any]  # returns a connected paramiko.SSHClient


def local_size(path: Path) -> int | None:
    """What an upload sends: the regular files under `path` (links are not followed, as rsync
    runs with --safe-links), or None when it cannot be read."""
    try:
        if not path.is_dir():
            return path.stat().st_size if path.is_file() else None
        total = 0
        for root, _dirs, files in os.walk(path):
            for name in files:
                st = os.lstat(os.path.join(root, name))
                if stat.S_ISREG(st.st_mode):
                    total += st.st_size
        return total
    except OSError:
        return None


def _connection_errors() -> tuple[type[BaseException], ...]:
    return (ConnectionError, OSError, EOFError, paramiko.SSHException)


class AuthRefused(UserError):
    """The host refused the key or its host key changed: retrying cannot help."""


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff for dropped connections: base, 2x base, 4x base ... capped, `attempts` runs."""

    attempts: int = 6
    base_delay_s: float = 2.0
    max_delay_s: float = 60.0

    def delay(self, attempt: int) -> float:
        return Backoff(self.base_delay_s, self.max_delay_s).delay(attempt)


class TransferEngine:
    """Moves the bytes of one job. `ssh_argv` is how rsync reaches hosts (`ssh -F <config>`);
    `client_factory` opens a paramiko SSHClient for the SFTP engine and the remote browser."""

    def __init__(
        self,
        ssh_argv: Sequence[str],
        client_factory: ClientFactory,
        *,
        retry: RetryPolicy | None = None,
        env: dict[str, str] | None = None,
        target: Callable[[Host], str] | None = None,
        before_connect: Callable[[Host], None] | None = None,
        auth_help: Callable[[Host], str] | None = None,
    ) -> None:
        """`before_connect(host)` readies the app's ssh-agent for the host's key; `auth_help(host)`
        words a refused key (which key the host must hold, where to paste it)."""
        self.ssh_argv = list(ssh_argv)
        self.before_connect = before_connect
        self.auth_help = auth_help
        self.client_factory = client_factory
        self.retry = retry or RetryPolicy()
        self.env = dict(os.environ if env is None else env)
        self.target = target or (lambda h: h.alias)
        self._remote_rsync: dict[str, RsyncVersion | None] = {}
        self._local_ok: dict[str, bool] = {}

    # --- engine choice -------------------------------------------------------------------

    def local_rsync(self) -> str | None:
        """rsync on this computer, if it is new enough for --protect-args and progress2."""
        path = shutil.which("rsync", path=self.env.get("PATH", os.defpath))
        if path is None:
            return None
        if path in self._local_ok:
            return path if self._local_ok[path] else None
        out = run_group([path, "--version"], env=self.env, text=True, timeout=60).stdout
        version = parse_rsync_version(out)
        self._local_ok[path] = supports_progress2(version) and supports_protect_args(version)
        return path if self._local_ok[path] else None

    def remote_rsync_version(self, host: Host) -> RsyncVersion | None:
        """The host's rsync version, None when it has none (asked once per host)."""
        if host.alias in self._remote_rsync:
            return self._remote_rsync[host.alias]
        argv = rsync_version_argv(self.ssh_argv, self.target(host))
        proc = run_group(argv, env=self.env, text=True, timeout=60)
        if proc.returncode == 255:
            if explain_exit_code(255, proc.stderr).category == "auth":
                raise AuthRefused(self._auth_message(host, proc.stderr))
            raise ConnectionError(proc.stderr.strip() or _("ssh could not connect"))
        version = parse_rsync_version(proc.stdout) if proc.returncode == 0 else None
        self._remote_rsync[host.alias] = version
        return version

    def choose(self, host: Host) -> tuple[EngineName, str]:
        local = self.local_rsync()
        if local is None:
            return "sftp", _("rsync 3.1+ is not installed on this computer: using SFTP")
        remote = self.remote_rsync_version(host)
        if not (supports_progress2(remote) and supports_protect_args(remote)):
            return "sftp", _("rsync 3.1+ is not installed on {host}: using SFTP").format(
                host=host.alias
            )
        return "rsync", _("rsync on both sides")

    # --- running -------------------------------------------------------------------------

    def run(
        self, job: TransferJob, host: Host, control: TransferControl
    ) -> Generator[EngineEvent, None, TransferOutcome]:
        """Transfer with retries, then verify when the job asks for it."""
        job = job.validated()
        engine: EngineName | None = None
        attempt = 0
        total_sent = 0
        outcome = TransferOutcome("failed", message=_("not started"))
        while True:
            attempt += 1
            try:
                if self.before_connect is not None:
                    self.before_connect(host)
            except UserError as exc:  # e.g. a passphrase not given yet: retrying cannot help
                return TransferOutcome("failed", message=str(exc), bytes_sent=total_sent)
            try:
                if engine is None:
                    engine, reason = self.choose(host)
                    yield EngineChosen(engine, reason)
                    if engine == "sftp" and job.options.delete:
                        return TransferOutcome(
                            "failed",
                            message=_(
                                "Deleting files at the destination needs rsync on both "
                                "sides; turn deletion off for this job or install rsync."
                            ),
                        )
                if engine == "rsync":
                    outcome = yield from self._rsync_once(job, host, control)
                else:
                    outcome = yield from self._sftp_once(job, host, control)
            except AuthRefused as exc:  # a refused key or a changed host key: never retried
                return TransferOutcome("failed", message=str(exc), bytes_sent=total_sent)
            except _connection_errors() as exc:
                if control.stop_requested:
                    return TransferOutcome(control.stop_requested, bytes_sent=total_sent)
                if job.direction == "download" and is_disk_full(exc):  # retrying cannot help
                    return TransferOutcome(
                        "failed",
                        message=disk_full_message(Path(job.local_path), None),
                        bytes_sent=total_sent,
                    )
                outcome = TransferOutcome(
                    "failed",
                    message=_("The connection failed: {problem}").format(problem=exc),
                    retryable=True,
                )
            total_sent += outcome.bytes_sent
            if outcome.outcome != "failed" or not outcome.retryable:
                break
            if attempt >= self.retry.attempts:
                gave_up = _(" Gave up after {n} attempts.").format(n=attempt)
                return _with_sent(outcome, total_sent, gave_up)
            delay = self.retry.delay(attempt)
            yield Retrying(attempt, delay, outcome.message)
            if control.wait(delay):
                return TransferOutcome(control.stop_requested or "paused", bytes_sent=total_sent)
        if outcome.outcome != "done" or not job.options.verify:
            return _with_sent(outcome, total_sent)
        assert engine is not None
        yield Verifying(engine)
        try:
            bad = self._verify(job, host, engine)
        except _connection_errors() as exc:
            return TransferOutcome(
                "failed",
                message=_("Verification could not run: {problem}").format(problem=exc),
                bytes_sent=total_sent,
                retryable=True,
            )
        if bad:
            shown = ", ".join(bad[:5]) + (
                _(" and {n} more").format(n=len(bad) - 5) if len(bad) > 5 else ""
            )
            return TransferOutcome(
                "failed",
                message=_(
                    "Verification failed: {n} file(s) differ between the two sides "
                    "({shown}). Retry the job to copy them again."
                ).format(n=len(bad), shown=shown),
                bytes_sent=total_sent,
                literal_bytes=outcome.literal_bytes,
            )
        return TransferOutcome(
            "done",
            message=(  # e.g. skipped links
                _("Verified. {note}").format(note=outcome.message) if outcome.message else ""
            ),
            verified=True,
            bytes_sent=total_sent,
            literal_bytes=outcome.literal_bytes,
        )

    def _rsync_once(
        self, job: TransferJob, host: Host, control: TransferControl
    ) -> Generator[EngineEvent, None, TransferOutcome]:
        if job.direction == "download":
            Path(job.local_path).mkdir(parents=True, exist_ok=True)
            if job.first_started_at:
                moved = salvage_temp_files(Path(job.local_path), job.first_started_at)
                if moved:
                    yield TransferNote(
                        ngettext("Kept {n} partly received file(s) for resume.",
                                 "Kept {n} partly received file(s) for resume.", len(moved))
                        .format(n=len(moved))
                    )  # fmt: skip
        cmd = self._command(job, host, "transfer")
        run = RsyncRun(cmd, control, local_size(Path(job.local_path)) if job.direction == "upload"
                       else None)  # fmt: skip
        started = time.time()
        outcome = yield from run.events()
        if outcome.outcome == "failed" and job.direction == "download":
            full = self._rsync_disk_full(job, cmd, run, started)
            if full is not None:
                message = _("{problem} (rsync exit code {code})").format(
                    problem=full, code=run.returncode
                )
                return replace(outcome, message=message, retryable=False)
        # ssh refused (255), or rsync noticed the closed pipe first and exited 12: ssh's own
        # lines in the output say which
        if outcome.outcome == "failed" and run.returncode in (12, 255):
            if explain_exit_code(255, run.output_tail).category == "auth":
                return replace(
                    outcome, message=self._auth_message(host, run.output_tail), retryable=False
                )
        return outcome

    def _rsync_disk_full(
        self, job: TransferJob, cmd: RsyncCommand, run: RsyncRun, started: float
    ) -> str | None:
        """The message for a download that filled the local disk, None for any other failure.

        rsync keeps the file it was writing in `.rsync-partial`; it is removed here (when this
        run wrote it). rsync resumes a file by building a new temporary copy beside its partial,
        so a kept partial would need its own size again in free space next time, on a disk that
        is full now and usually holds the app's store (the failed state must still be saved).
        Files that arrived and anything that was there before stay.
        """
        local = Path(job.local_path)
        said_full = DISK_FULL_RE.search(run.output_tail) is not None
        if not said_full:
            if run.returncode != 11:  # rsync's "error in file I/O": full only if it is full
                return None
            try:
                if shutil.disk_usage(local).free >= 1024 * 1024:
                    return None
            except OSError:
                return None
        written = disk_full_path(run.output_tail)
        if written is not None:
            final = Path(written)
            partial = final.parent / PARTIAL_DIR / final.name
            try:
                root = local.resolve()
                inside = partial.parent.resolve().is_relative_to(root)
                if inside and partial.is_file() and partial.stat().st_mtime >= started - 2:
                    partial.unlink()
                    partial.parent.rmdir()
            except OSError:
                pass  # another partial is still there, or nothing was kept
        return disk_full_message(local, self._rsync_still_needed(cmd))

    def _rsync_still_needed(self, cmd: RsyncCommand) -> int | None:
        """What the job still has to write (rsync's dry run of the same command), None if that
        does not answer: the renter is told how much to free."""
        argv = list(cmd.argv)
        argv.insert(argv.index("--"), "--dry-run")
        try:
            code, out = run_capture(replace(cmd, argv=argv), timeout=60)
        except (OSError, subprocess.SubprocessError):
            return None
        return parse_stats(out).total_transferred_file_size if code == 0 else None

    def _auth_message(self, host: Host, ssh_said: str) -> str:
        """A refused key or host key in plain words; ssh's own last line kept for the log."""
        refused = openssh_problem(ssh_said) is SshProblem.AUTH_FAILED
        if refused and self.auth_help is not None:
            return self.auth_help(host)
        return explain_exit_code(255, ssh_said).message

    def _sftp_once(
        self, job: TransferJob, host: Host, control: TransferControl
    ) -> Generator[EngineEvent, None, TransferOutcome]:
        client = self.client_factory(host)
        try:
            run = SftpRun(job, client, control)
            try:
                return (yield from run.events())
            finally:
                run.close()
        finally:
            client.close()

    def _command(self, job: TransferJob, host: Host, purpose: str) -> RsyncCommand:
        rsync = self.local_rsync()
        if rsync is None:
            raise UserError(_("rsync is not installed on this computer."))
        remote = self._remote_rsync.get(host.alias)
        return RsyncCommand.prepare(
            job,
            self.target(host),
            self.ssh_argv,
            rsync=rsync,
            purpose=purpose,
            base_env=self.env,
            mkpath=remote is not None and remote >= MKPATH_SINCE,
        )

    def _verify(self, job: TransferJob, host: Host, engine: EngineName) -> list[str]:
        if engine == "rsync":
            code, out = run_capture(self._command(job, host, "verify"))
            if code != 0:
                raise ConnectionError(
                    _("rsync exit code {code}: {output}").format(
                        code=code, output=out.strip()[-300:]
                    )
                )
            return itemized_differences(out)
        client = self.client_factory(host)
        try:
            run = SftpRun(job, client, TransferControl())
            try:
                return run.verify()
            finally:
                run.close()
        finally:
            client.close()

    # --- safety helpers ------------------------------------------------------------------

    def preview_delete(self, job: TransferJob, host: Host) -> list[str]:
        """What `--delete` would remove at the destination (a dry run); needs rsync."""
        code, out = run_capture(self._command(job, host, "preview-delete"))
        if code != 0:
            raise UserError(
                _("The delete preview failed (rsync exit code {code}).").format(code=code),
                hint=out[-300:],
            )
        return deletions(out)

    def discard_partial(self, job: TransferJob, host: Host) -> None:
        """Remove the partial data a cancelled job left at its destination."""
        if job.direction == "download":
            root = Path(job.local_path)
            for dirpath, dirnames, _files in os.walk(root):
                if PARTIAL_DIR in dirnames:
                    shutil.rmtree(Path(dirpath) / PARTIAL_DIR, ignore_errors=True)
                    dirnames.remove(PARTIAL_DIR)
            return
        path = job.remote_path
        remote = shlex.quote("./" + path if path.startswith("-") else path)
        cmd = f"find {remote} -depth -type d -name {PARTIAL_DIR} -exec rm -rf {{}} +"
        run_group([*self.ssh_argv, self.target(host), cmd], env=self.env, timeout=120)


def _with_sent(outcome: TransferOutcome, sent: int, extra: str = "") -> TransferOutcome:
    return TransferOutcome(
        outcome.outcome,
        message=outcome.message + extra,
        verified=outcome.verified,
        bytes_sent=sent,
        literal_bytes=outcome.literal_bytes,
        retryable=outcome.retryable,
    )
