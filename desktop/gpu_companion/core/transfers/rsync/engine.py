"""rsync as data first (argv, env), then run: progress events, stats and a checksum verification.

Every command is built by `RsyncCommand.prepare` so tests read the exact argv; running it is a
generator of `TransferProgress`/`TransferNote` that returns how the run ended.
"""

from __future__ import annotations

import codecs
import os
import re
import shlex
import signal
import subprocess
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpu_companion.core.common.children import child_options, kill_group, run_group
from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.transfers.job import (
    PARTIAL_DIR,
    TransferControl,
    TransferJob,
    TransferNote,
    TransferOutcome,
    TransferProgress,
)
from gpu_companion.core.transfers.rsync.errors import explain_exit_code
from gpu_companion.core.transfers.rsync.progress import (
    FileStarted,
    Progress,
    RsyncMessage,
    RsyncProgressParser,
    classify_line,
    parse_stats,
)

_TAIL_CHARS = 64_000
# A received file never keeps setuid/setgid or group/other write from the host (rsync -a would).
DOWNLOAD_CHMOD = "--chmod=ug-s,go-w"
# -a alone keeps owners, devices and fifos when run as root, and copies links pointing anywhere:
# a link out of the tree is skipped (--safe-links, both ways), no device node, fifo or socket is
# made, owners and groups are the receiving user's. Every purpose gets them (a verify must read
# the tree the transfer made).
SAFE_TREE_OPTIONS = ("--safe-links", "--no-devices", "--no-specials", "--no-owner", "--no-group")
# rsync's temp files: `.NAME.XXXXXX` (mkstemp's six letters) beside the final file.
_TEMP_RE = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9]{6}$")
# `%i %n`: eleven item characters (or `*deleting` padded to eleven), one space, the name.
_ITEMIZED_RE = re.compile(r"^(?P<item>[<>ch.][fdLDS][^ ]{9}|\*deleting  ) (?P<name>.+)$")


def ssh_command_string(ssh_argv: Sequence[str]) -> str:
    """The `-e` value: rsync splits it itself, honouring single quotes, so quote each word."""
    return " ".join(shlex.quote(a) for a in ssh_argv)


@dataclass(frozen=True)
class RsyncCommand:
    """One rsync invocation, ready to run; `argv` and `env` are what tests assert on."""

    argv: list[str]
    env: dict[str, str]
    purpose: str  # "transfer" | "verify" | "preview-delete"

    @classmethod
    def prepare(
        cls,
        job: TransferJob,
        target: str,
        ssh_argv: Sequence[str],
        *,
        rsync: str = "rsync",
        purpose: str = "transfer",
        base_env: dict[str, str] | None = None,
        mkpath: bool = True,
    ) -> RsyncCommand:
        """`target` is the ssh destination (the Host name in the generated ssh config);
        `mkpath` (rsync 3.2.3+ on both sides) creates missing parents of the destination."""
        job = job.validated()
        opts = job.options
        if opts.delete and not opts.delete_previewed and purpose == "transfer":
            raise UserError(
                _("Deleting files at the destination needs a preview first."),
                hint=_("Run the delete preview, check the list, then start the job."),
            )
        argv = [rsync, "-a", "--protect-args", f"--partial-dir={PARTIAL_DIR}"]
        argv += list(SAFE_TREE_OPTIONS)
        argv += ["-e", ssh_command_string(ssh_argv)]
        if purpose == "transfer":
            argv += ["--info=progress2,name1", "--no-inc-recursive", "--stats"]
            if mkpath:
                argv.append("--mkpath")
        elif purpose == "verify":
            argv += ["--checksum", "--dry-run", "--itemize-changes"]
        elif purpose == "preview-delete":
            argv += ["--dry-run", "--itemize-changes", "--delete"]
        else:
            raise ValueError(purpose)
        if job.direction == "download" and purpose == "transfer":
            argv.append(DOWNLOAD_CHMOD)  # modes from a host are masked, as the SFTP engine does
        if opts.delete and purpose == "transfer":
            argv.append("--delete")
        if opts.bwlimit_kbps and purpose == "transfer":
            argv.append(f"--bwlimit={opts.bwlimit_kbps}")
        argv += [f"--exclude={e}" for e in opts.excludes]
        argv += ["--", *_endpoints(job, target)]
        env = dict(os.environ if base_env is None else base_env)
        env["LC_ALL"] = "C"
        env.pop("LANG", None)
        return cls(argv, env, purpose)


def _endpoints(job: TransferJob, target: str) -> list[str]:
    remote = job.remote_path
    if job.direction == "upload":
        local = job.local_path
        src = local.rstrip("/") + "/" if Path(local).is_dir() else local
        return [src, f"{target}:{remote.rstrip('/') or '/'}/"]
    src = f"{target}:{remote.rstrip('/') or '/'}" + ("/" if job.options.source_is_dir else "")
    return [src, job.local_path.rstrip("/") + "/"]


class RsyncRun:
    """Runs a prepared command; `events()` yields progress and returns the outcome."""

    def __init__(
        self, command: RsyncCommand, control: TransferControl, known_total: int | None = None
    ) -> None:
        self.command = command
        self.control = control
        self.known_total = known_total  # an upload's size, summed here before rsync starts
        self.output_tail = ""
        self.returncode: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    def _stop(self) -> None:
        proc = self._proc
        if proc is not None:  # the whole group: rsync and its ssh; SIGTERM keeps the partial file
            kill_group(proc, signal.SIGTERM)

    def events(self) -> Generator[TransferProgress | TransferNote, None, TransferOutcome]:
        proc = subprocess.Popen(
            self.command.argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=self.command.env,
            **child_options(),  # its own group; SIGTERM if this lane's thread dies (kill -9)
        )
        self._proc = proc
        self.control.set_stopper(self._stop)
        parser = RsyncProgressParser()
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        total: int | None = self.known_total
        best_percent = 0  # rsync gives whole percents: the estimate from the highest is closest
        current: str | None = None
        try:
            while True:
                chunk = os.read(fd, 65536)
                text = decoder.decode(chunk, final=not chunk)
                self.output_tail = (self.output_tail + text)[-_TAIL_CHARS:]
                for ev in parser.feed(text) if chunk else parser.finish():
                    if isinstance(ev, FileStarted):
                        current = ev.name
                    elif isinstance(ev, Progress):
                        if (
                            self.known_total is None
                            and ev.percent
                            and not ev.incremental_scan
                            and ev.percent >= best_percent
                        ):
                            best_percent = ev.percent
                            total = round(ev.bytes_done * 100 / ev.percent)
                        yield TransferProgress(ev.bytes_done, total, ev.rate_bps, ev.eta_s, current)
                    elif isinstance(ev, RsyncMessage) and ev.level != "info":
                        yield TransferNote(ev.text, ev.level)
                if not chunk:
                    break
            self.returncode = proc.wait()
            size = parse_stats(self.output_tail).total_file_size
            if self.returncode == 0 and size is not None:  # the exact total, not a % estimate
                yield TransferProgress(size, size, None, 0, None)
        finally:
            self.control.set_stopper(None)
            if proc.poll() is None:
                self._stop()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    kill_group(proc, signal.SIGKILL)
                    proc.wait()
            proc.stdout.close()
            self._proc = None
        return self._outcome()

    def _outcome(self) -> TransferOutcome:
        stats = parse_stats(self.output_tail)
        sent = (stats.total_bytes_sent or 0) + (stats.total_bytes_received or 0)
        code = self.returncode if self.returncode is not None else -1
        requested = self.control.stop_requested
        if requested in ("paused", "cancelled"):
            return TransferOutcome(requested, bytes_sent=sent, literal_bytes=stats.literal_data)
        if code == 0:
            return TransferOutcome("done", bytes_sent=sent, literal_bytes=stats.literal_data)
        info = explain_exit_code(code, self.output_tail)
        said = [
            line.strip()
            for line in self.output_tail.replace("\r", "\n").splitlines()
            if classify_line(line.strip()) == "error" and "rsync error:" not in line
        ]
        detail = _(" rsync said: {line}").format(line=said[-1]) if said else ""
        return TransferOutcome(
            "failed",
            message=_("{problem} (rsync exit code {code}).{detail}").format(
                problem=info.message, code=code, detail=detail
            ),
            bytes_sent=sent,
            literal_bytes=stats.literal_data,
            retryable=info.retryable,
        )


def run_capture(command: RsyncCommand, timeout: float = 600) -> tuple[int, str]:
    """A short rsync run (dry runs): exit code and whole output."""
    proc = run_group(command.argv, env=command.env, timeout=timeout)
    out = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
    return proc.returncode, out


def itemized_differences(output: str) -> list[str]:
    """Names that a `--checksum --dry-run --itemize-changes` run would still transfer or create.

    Lines starting with `.` only change attributes; everything else means content differs.
    """
    found = []
    for line in output.splitlines():
        m = _ITEMIZED_RE.match(line)
        if m and not m.group("item").startswith("."):
            found.append(m.group("name"))
    return found


def deletions(output: str) -> list[str]:
    """Names a `--delete --dry-run --itemize-changes` run lists under `*deleting`."""
    found = (_ITEMIZED_RE.match(line) for line in output.splitlines())
    return [m.group("name") for m in found if m and m.group("item").startswith("*")]


def salvage_temp_files(dest: Path, since: float) -> list[Path]:
    """Move rsync temp files left by a hard kill into the partial dir, so resume can use them.

    A receiver killed with SIGKILL cannot move its `.NAME.XXXXXX` into `.rsync-partial`. Only
    files written after the job first started (`since`, epoch seconds) are taken.
    """
    moved: list[Path] = []
    if not dest.is_dir():
        return moved
    for dirpath, dirnames, filenames in os.walk(dest):
        dirnames[:] = [d for d in dirnames if d != PARTIAL_DIR]
        for name in filenames:
            m = _TEMP_RE.match(name)
            path = Path(dirpath) / name
            if m is None or not path.is_file() or path.stat().st_mtime < since - 1:
                continue
            partial = Path(dirpath) / PARTIAL_DIR / m.group("name")
            partial.parent.mkdir(mode=0o700, exist_ok=True)
            if partial.exists() and partial.stat().st_size >= path.stat().st_size:
                path.unlink()
                continue
            os.replace(path, partial)
            moved.append(partial)
    return moved


def rsync_version_argv(ssh_argv: Sequence[str], target: str) -> list[str]:
    """Asks the host for `rsync --version` (exit 127 when it has none)."""
    return [*ssh_argv, target, "rsync --version"]
