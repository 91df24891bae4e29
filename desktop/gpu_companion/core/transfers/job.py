"""What a transfer is (a job and its options) and what engines report while they run it.

Both engines (rsync and the SFTP fallback) speak these events, so the queue, the page and the
release checklist read one vocabulary whichever engine moved the bytes.
"""

from __future__ import annotations

import fnmatch
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Literal

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import _

PARTIAL_DIR = ".rsync-partial"
DEFAULT_UPLOAD_EXCLUDES: tuple[str, ...] = (".git", "__pycache__", "*.tmp")

Direction = Literal["upload", "download"]
EngineName = Literal["rsync", "sftp"]


class JobState(str, Enum):
    QUEUED = "queued"
    RUNNING = "running"
    PAUSED = "paused"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def finished(self) -> bool:
        return self in (JobState.DONE, JobState.FAILED, JobState.CANCELLED)


@dataclass(frozen=True)
class TransferOptions:
    """Per-job choices. `delete` needs `delete_previewed`: a dry run listed what would go first."""

    excludes: tuple[str, ...] = ()
    bwlimit_kbps: int = 0  # KiB/s, 0 = unlimited
    delete: bool = False
    delete_previewed: bool = False
    verify: bool = True
    source_is_dir: bool = True  # downloads: mirror the remote folder's contents (`remote/`)

    def to_json(self) -> dict[str, object]:
        return {
            "excludes": list(self.excludes),
            "bwlimit_kbps": self.bwlimit_kbps,
            "delete": self.delete,
            "delete_previewed": self.delete_previewed,
            "verify": self.verify,
            "source_is_dir": self.source_is_dir,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> TransferOptions:
        excludes = data.get("excludes", [])
        bw = data.get("bwlimit_kbps", 0)
        return cls(
            excludes=tuple(str(e) for e in excludes) if isinstance(excludes, list) else (),
            bwlimit_kbps=bw if isinstance(bw, int) else 0,
            delete=bool(data.get("delete", False)),
            delete_previewed=bool(data.get("delete_previewed", False)),
            verify=bool(data.get("verify", True)),
            source_is_dir=bool(data.get("source_is_dir", True)),
        )


@dataclass(frozen=True)
class TransferJob:
    """One upload or download between a local path and a folder on a host (by alias).

    Folders are mirrored: the contents of the source folder land in the destination folder, as
    `rsync src/ dst/` does; a single source file lands inside the destination folder.
    """

    host_alias: str
    direction: Direction
    local_path: str
    remote_path: str
    options: TransferOptions = field(default_factory=TransferOptions)
    id: int | None = None
    state: JobState = JobState.QUEUED
    bytes_done: int = 0
    bytes_total: int | None = None
    rate_bps: float | None = None
    eta_s: int | None = None
    current_file: str | None = None
    engine: EngineName | None = None
    message: str = ""
    verified: bool = False
    attempts: int = 0
    bytes_sent: int = 0  # bytes that crossed the wire over all runs (rsync --stats)
    active_s: float = 0.0  # seconds spent running, over all runs
    created_at: float = 0.0
    first_started_at: float | None = None
    finished_at: float | None = None
    label: str = ""

    @property
    def percent(self) -> int | None:
        if not self.bytes_total:
            return 100 if self.state is JobState.DONE else None
        return max(0, min(100, int(self.bytes_done * 100 / self.bytes_total)))

    @property
    def mean_rate_bps(self) -> float | None:
        if not self.active_s or not self.bytes_total:
            return None
        return self.bytes_total / self.active_s

    def validated(self) -> TransferJob:
        if self.direction not in ("upload", "download"):
            raise ValidationError(
                "direction",
                _("Unknown direction {direction}.").format(direction=repr(self.direction)),
            )
        if not self.local_path.strip():
            raise ValidationError("local_path", _("Choose a local file or folder."))
        if "\x00" in self.local_path or "\n" in self.local_path:
            raise ValidationError("local_path", _("The local path has a control character in it."))
        if self.options.bwlimit_kbps < 0:
            raise ValidationError("bwlimit", _("The bandwidth limit cannot be negative."))
        for pattern in self.options.excludes:
            if not pattern.strip() or "\n" in pattern:
                raise ValidationError(
                    "excludes", _("An exclude pattern is empty or has a newline.")
                )
        return replace(self, remote_path=validate_remote_path(self.remote_path))


def validate_remote_path(value: str) -> str:
    """A path on the host: absolute or relative to the login's home; `~/x` becomes `x`.

    rsync (with --protect-args) and SFTP receive it verbatim, so spaces, quotes, unicode and
    leading dashes are fine; control characters and empty names are not.
    """
    path = value.strip()
    if path in ("~", "~/"):
        path = "."
    elif path.startswith("~/"):
        path = path[2:]
    if not path:
        raise ValidationError("remote_path", _("Choose a folder on the host."))
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise ValidationError("remote_path", _("The remote path has a control character in it."))
    if path.startswith("~"):
        raise ValidationError(
            "remote_path",
            _(
                "Paths like ~user/... are not supported; give an absolute path or one relative to "
                "your home folder on the host."
            ),
        )
    if len(path.encode()) > 4096:
        raise ValidationError("remote_path", _("The remote path is longer than 4096 bytes."))
    return path


def is_excluded(rel_path: str, excludes: tuple[str, ...]) -> bool:
    """rsync's rule for patterns without '/': any path component matching excludes the path."""
    parts = [p for p in rel_path.split("/") if p]
    for pattern in (*excludes, PARTIAL_DIR):
        if "/" in pattern.strip("/"):
            if fnmatch.fnmatchcase(rel_path, pattern.lstrip("/")):
                return True
        elif any(fnmatch.fnmatchcase(p, pattern.strip("/")) for p in parts):
            return True
    return False


# --- what engines report ------------------------------------------------------------------


@dataclass(frozen=True)
class EngineChosen:
    engine: EngineName
    reason: str


@dataclass(frozen=True)
class TransferProgress:
    bytes_done: int
    bytes_total: int | None
    rate_bps: float | None
    eta_s: int | None
    current_file: str | None


@dataclass(frozen=True)
class TransferNote:
    text: str
    level: Literal["info", "warning", "error"] = "info"


@dataclass(frozen=True)
class Retrying:
    attempt: int
    delay_s: float
    reason: str


@dataclass(frozen=True)
class Verifying:
    engine: EngineName


EngineEvent = EngineChosen | TransferProgress | TransferNote | Retrying | Verifying

Outcome = Literal["done", "failed", "paused", "cancelled"]


@dataclass(frozen=True)
class TransferOutcome:
    """How one run ended; `bytes_sent` is what crossed the wire in this run."""

    outcome: Outcome
    message: str = ""
    verified: bool = False
    bytes_sent: int = 0
    literal_bytes: int | None = None
    retryable: bool = False


class TransferControl:
    """Pause or cancel a running job from another thread; the engine registers a stopper.

    Pause stops the process (keeping partial data) instead of SIGSTOP: a frozen rsync holds the
    SSH session open until the server or a NAT times it out, and cannot survive an app restart.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.stop_requested: Outcome | None = None
        self._event = threading.Event()
        self._stopper: Callable[[], None] | None = None

    def set_stopper(self, stopper: Callable[[], None] | None) -> None:
        """`stopper` interrupts the current step (signals rsync, flags the SFTP copy loop)."""
        with self._lock:
            self._stopper = stopper
            pending = self.stop_requested is not None
        if pending and stopper is not None:
            stopper()

    def request(self, what: Outcome) -> None:
        with self._lock:
            if self.stop_requested is None:
                self.stop_requested = what
            stopper = self._stopper
        self._event.set()
        if stopper is not None:
            stopper()

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True when a pause or cancel arrived meanwhile."""
        return self._event.wait(seconds)


def human_bytes(n: float | None) -> str:
    """Sizes and rates as the Transfers page and `gpu-companion transfer` show them (SI units)."""
    if n is None:
        return "?"
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"
