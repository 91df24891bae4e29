"""rsync's error lines and exit codes, turned into what a GPU renter should know and do next.

rsync ends a failed run with `rsync error: <text> (code N) at <file.c>(<line>) [<role>=<version>]`
and an exit code whose meaning is only in errcode.h. The transfer view, the retry logic and the
release checklist read both through this module, so they agree on what is worth retrying.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Literal

from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.common.ssh_problems import SshProblem, openssh_problem
from gpu_companion.core.transfers.rsync.versions import RsyncVersion, parse_version_string

ExitCategory = Literal[
    "ok", "connection", "partial", "disk_full", "auth", "usage", "cancelled", "unknown"
]

_ERROR_LINE_RE = re.compile(
    r"rsync (?P<level>error|warning): (?P<text>.*?) \(code (?P<code>\d+)\)"
    r"(?: at (?P<file>.+?)\((?P<line>\d+)\))?"
    r"(?: \[(?P<role>[A-Za-z]+)=(?P<version>[^\]\s]+)\])?\s*$"
)


@dataclass(frozen=True)
class RsyncErrorLine:
    """One `rsync error:`/`rsync warning:` line; role is lower-cased (3.0/3.1 print `Receiver`)."""

    level: Literal["error", "warning"]
    text: str
    code: int
    source_file: str | None
    source_line: int | None
    role: str | None
    version: str | None

    @property
    def version_tuple(self) -> RsyncVersion | None:
        """The version of the rsync that printed the line, git-describe suffixes dropped."""
        return parse_version_string(self.version) if self.version else None


@dataclass(frozen=True)
class ExitInfo:
    """What an exit code means for the renter; retryable means a rerun may simply work."""

    code: int
    category: ExitCategory
    message: str
    retryable: bool
    problem: SshProblem | None = None  # what ssh said, in the words the app's own SSH uses


def parse_error_line(line: str) -> RsyncErrorLine | None:
    """Read one line; None unless it is rsync's final error/warning line (a syslog prefix is ok)."""
    m = _ERROR_LINE_RE.search(line.strip())
    if m is None:
        return None
    level: Literal["error", "warning"] = "warning" if m.group("level") == "warning" else "error"
    role = m.group("role")
    return RsyncErrorLine(
        level=level,
        text=m.group("text"),
        code=int(m.group("code")),
        source_file=m.group("file"),
        source_line=int(m.group("line")) if m.group("line") else None,
        role=role.lower() if role else None,
        version=m.group("version"),
    )


def last_error_line(output: str) -> RsyncErrorLine | None:
    """The last error line of a whole output: rsync may print one per process (generator first)."""
    found: RsyncErrorLine | None = None
    for line in re.split(r"[\r\n]", output):
        parsed = parse_error_line(line)
        if parsed is not None:
            found = parsed
    return found


_RETRY = N_(" Start the transfer again: files that already arrived are not sent twice.")

# A write that failed for want of space (or quota): rsync prints the errno's text.
DISK_FULL_RE = re.compile(r"No space left on device|Disk quota exceeded")
# rsync 3.1: `rsync: write failed on "PATH": ...`; 3.2+: `rsync: [receiver] write failed on ...`
_WRITE_FAILED_RE = re.compile(
    r'write failed on "(?P<path>[^\n]+?)": (?:No space left on device|Disk quota exceeded)'
)


def disk_full_path(output: str) -> str | None:
    """The file rsync was writing when the disk filled (its final name), from its own message;
    rsync's `\\#ooo` escapes (non-ASCII bytes under LC_ALL=C) are undone."""
    found = None
    for m in _WRITE_FAILED_RE.finditer(output):
        found = m.group("path")
    if found is None:
        return None
    raw = re.sub(
        rb"\\#([0-7]{3})",
        lambda m: bytes([int(m.group(1), 8) & 0xFF]),
        found.encode("utf-8", "surrogateescape"),
    )
    return os.fsdecode(raw)


_CONNECTION_DROP = (
    N_(
        "The connection to the instance dropped in the middle of the transfer. Usually the network "
        "blinked, the instance was stopped or preempted, or SSH timed out."
    )
    + _RETRY
)

_EXITS: dict[int, tuple[ExitCategory, str, bool]] = {
    0: ("ok", N_("The transfer finished."), False),
    1: (
        "usage",
        N_(
            "rsync rejected its command line (syntax or usage error). If you added your own rsync "
            "options, check them; otherwise report this with the log."
        ),
        False,
    ),
    2: (
        "usage",
        N_(
            "The rsync programs on your computer and on the instance could not agree on a "
            "protocol. Update rsync on the older side (rsync --version on both)."
        ),
        False,
    ),
    3: (
        "usage",
        N_(
            "A source or destination folder could not be used: it is missing, not a folder, or not "
            "readable. Check both paths exist on the side they belong to."
        ),
        False,
    ),
    4: (
        "usage",
        N_(
            "The rsync on one side does not support an option this transfer needs. Update rsync on "
            "the instance (or on your computer) and try again."
        ),
        False,
    ),
    5: (
        "auth",
        N_(
            "The rsync service on the other side refused the login. Check the user name, the "
            "module name and the password or key for this host."
        ),
        False,
    ),
    10: (
        "connection",
        N_(
            "The network connection to the instance failed. Check the instance is running and its "
            "address and port are right."
        )
        + _RETRY,
        True,
    ),
    11: (
        "disk_full",
        N_(
            "rsync could not write a file; usually the destination disk is full or over its quota "
            "(sometimes it is read-only). Free space there (df -h) and start the transfer again."
        ),
        False,
    ),
    12: ("connection", _CONNECTION_DROP, True),
    13: ("unknown", N_("rsync could not report its own diagnostics (code 13)."), False),
    14: (
        "unknown",
        N_("rsync's processes could not talk to each other (IPC error, code 14)."),
        False,
    ),
    15: (
        "unknown",
        N_("One of rsync's processes crashed (code 15). Try again; report if it repeats."),
        False,
    ),
    16: (
        "unknown",
        N_("One of rsync's processes was killed (code 16), often by the OOM killer."),
        False,
    ),
    19: ("cancelled", N_("The transfer was stopped before it finished.") + _RETRY, False),
    20: ("cancelled", N_("The transfer was stopped before it finished.") + _RETRY, False),
    21: (
        "unknown",
        N_("rsync lost track of one of its processes (waitpid failed, code 21)."),
        False,
    ),
    22: (
        "unknown",
        N_(
            "rsync ran out of memory (code 22). Free memory on the machine that failed, or split "
            "the transfer into smaller folders."
        ),
        False,
    ),
    23: (
        "partial",
        N_(
            "Some files or their attributes were not transferred; the rest arrived. The lines "
            "above name the files and why (often permissions or a missing path)."
        ),
        False,
    ),
    24: (
        "partial",
        N_(
            "Some files vanished while they were being copied (deleted or renamed during the "
            "transfer, e.g. rotating checkpoints). Everything else arrived."
        ),
        False,
    ),
    25: (
        "usage",
        N_("The --max-delete limit stopped rsync from deleting more files at the destination."),
        False,
    ),
    30: (
        "connection",
        N_("No data moved for longer than the time-out: the connection or the instance stalled.")
        + _RETRY,
        True,
    ),
    35: (
        "connection",
        N_("The rsync service on the instance did not answer in time.") + _RETRY,
        True,
    ),
    124: (
        "connection",
        N_("The remote shell (ssh) failed before rsync could start on the instance.") + _RETRY,
        True,
    ),
    125: (
        "connection",
        N_("The remote shell (ssh) was killed during the transfer.") + _RETRY,
        True,
    ),
    126: (
        "connection",
        N_(
            "rsync exists on the remote host but could not be run (no permission or a broken "
            "install). Reinstall it on the instance, e.g. apt-get install --reinstall rsync."
        ),
        False,
    ),
    127: (
        "connection",
        N_(
            "rsync is not installed on the remote host. Install it on the instance (for example "
            "apt-get install -y rsync) and start the transfer again."
        ),
        False,
    ),
    255: (
        "connection",
        N_(
            "The SSH connection to the instance failed or dropped. Check the instance is still "
            "running and reachable."
        )
        + _RETRY,
        True,
    ),
}

# Messages in the output that say more than the exit code does; checked in this order.
_OUTPUT_HINTS: tuple[tuple[re.Pattern[str], ExitCategory, str, bool], ...] = (
    (  # rsync can exit 12 before it reaps the remote shell's 127: the shell's own words decide
        re.compile(
            r"rsync: (?:command )?not found|rsync: No such file or directory|"
            r"remote command not found"
        ),
        "connection",
        _EXITS[127][1],
        False,
    ),
    (
        DISK_FULL_RE,
        "disk_full",
        N_(
            "The destination disk is full (or over its quota). Free space there (df -h), or pick a "
            "bigger volume, then start the transfer again; what already arrived is kept."
        ),
        False,
    ),
    (
        re.compile(r"Permission denied \((?:publickey|password|keyboard-interactive)"),
        "auth",
        N_(
            "The instance refused the SSH key (Permission denied). Check that this platform's "
            "public key is installed on the instance and that the user name is right."
        ),
        False,
    ),
    (
        re.compile(r"Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED"),
        "auth",
        N_(
            "The instance's host key does not match the one saved for this address. On rented "
            "machines this usually means a new instance got a recycled IP: confirm the new key "
            "on the Hosts page (Test connection, then 'This is a new instance…', or Forget "
            "trusted key… under Edit) before connecting again."
        ),
        False,
    ),
    (
        re.compile(r"@ERROR: auth failed"),
        "auth",
        N_("The rsync service refused the user name or password for this module."),
        False,
    ),
    (
        re.compile(r"Could not resolve hostname"),
        "connection",
        N_(
            "The host name could not be found. Check the address of the instance; a released "
            "instance's name stops resolving."
        ),
        False,
    ),
    (
        re.compile(r"Connection refused"),
        "connection",
        N_(
            "Nothing accepts connections at that address and port. The instance may still be "
            "booting or stopped, or the SSH port is wrong."
        )
        + _RETRY,
        True,
    ),
    (
        re.compile(r"(?:Connection|Operation) timed out|timed out during banner exchange"),
        "connection",
        N_("The instance did not answer in time: it may be stopped, busy, or behind a firewall.")
        + _RETRY,
        True,
    ),
)


def explain_exit_code(code: int, output: str = "") -> ExitInfo:
    """Category, renter-facing message and retryability for an rsync exit code.

    `output` (stderr, or stdout+stderr) refines the code: ssh's "Permission denied" makes a 255
    an auth problem and "No space left on device" makes any failure a full disk.
    """
    if code < 0:  # Python's returncode for a process killed by a signal
        stopped = _("rsync was stopped by signal {signal}.").format(signal=-code) + _(_RETRY)
        return ExitInfo(code, "cancelled", stopped, False)
    if code != 0 and output:
        problem = openssh_problem(output)
        for pattern, category, message, retryable in _OUTPUT_HINTS:
            if pattern.search(output):
                return ExitInfo(code, category, _said(message), retryable, problem)
    known = _EXITS.get(code)
    if known is not None:
        category, message, retryable = known
        return ExitInfo(code, category, _said(message), retryable)
    return ExitInfo(
        code,
        "unknown",
        _(
            "rsync stopped with an unexpected exit code {code}. The log above says more; "
            "try again, and report it if it repeats."
        ).format(code=code),
        False,
    )


def _said(message: str) -> str:
    """A message of the tables above in the current language (the retry advice on its own)."""
    if message.endswith(_RETRY):
        return _(message[: -len(_RETRY)]) + _(_RETRY)
    return _(message)
