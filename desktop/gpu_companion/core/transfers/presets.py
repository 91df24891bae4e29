"""Ready-made transfers that other features reuse (the release checklist's checkpoint backup)."""

from __future__ import annotations

import posixpath
from pathlib import Path, PurePosixPath

from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.transfers.job import DEFAULT_UPLOAD_EXCLUDES, TransferJob, TransferOptions
from gpu_companion.core.transfers.queue import TransferQueue

CHECKPOINT_EXCLUDES: tuple[str, ...] = ("*.tmp", "__pycache__")
BACKUPS_DIR = "backups"  # under the app's data dir


def backup_dir(root: Path, host: Host, remote_dir: str) -> Path:
    """Where a remote folder's backup lives: `<root>/<alias>/<remote path without ~ or />`.

    One layout for the Transfers page's checkpoint sync and the release checklist, so a backup
    made from either page is found by the other. Names from the host never climb out of `root`.
    """
    rel = remote_dir[2:] if remote_dir.startswith("~/") else remote_dir
    parts = [p for p in PurePosixPath(rel).parts if p not in ("/", ".", "..", "~")]
    return root.joinpath(host.alias, *parts)


def sync_checkpoints(
    queue: TransferQueue,
    host: Host,
    remote_dir: str,
    local_dir: str,
    *,
    bwlimit_kbps: int = 0,
) -> TransferJob:
    """Queue "remote output folder → local folder", incremental and verified; returns the job.

    Incremental because rsync skips what already arrived (size and mtime) and resumes partial
    files; verified because the job ends with a checksum pass over both sides. Nothing local is
    deleted: a checkpoint removed on the instance stays in the backup.
    """
    name = posixpath.basename(remote_dir.rstrip("/")) or remote_dir
    job = TransferJob(
        host_alias=host.alias,
        direction="download",
        local_path=local_dir,
        remote_path=remote_dir,
        options=TransferOptions(
            excludes=CHECKPOINT_EXCLUDES, bwlimit_kbps=bwlimit_kbps, verify=True
        ),
        label=_("Sync checkpoints: {host}:{name}").format(host=host.alias, name=name),
    )
    return queue.add(job)


def upload_options(bwlimit_kbps: int = 0, extra_excludes: tuple[str, ...] = ()) -> TransferOptions:
    """Upload defaults: skip `.git`, `__pycache__` and `*.tmp` unless the user changes them."""
    return TransferOptions(
        excludes=DEFAULT_UPLOAD_EXCLUDES + extra_excludes, bwlimit_kbps=bwlimit_kbps
    )
