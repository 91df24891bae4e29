"""The release gate's backups as transfer-queue jobs: "Sync now" and the archive download are the
Transfers page's jobs (progress, pause, resume, cancel, verified), and the queue's history of
verified downloads is the gate's evidence, whichever page started them.
"""

from __future__ import annotations

import queue as queues
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.release.context import VerifiedSync
from gpu_companion.core.transfers.job import JobState, TransferJob, TransferOptions
from gpu_companion.core.transfers.presets import backup_dir, sync_checkpoints
from gpu_companion.core.transfers.queue import TransferQueue

# Without an event for this long the jobs are read from the store: a change made by another
# process (a `gpu-companion transfer` cancelling one of them) sends no event to this one.
RECHECK_S = 5.0


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def progress_line(job: TransferJob) -> str:
    """One line per job snapshot, for the release page's log and status."""
    what = job.remote_path
    if job.state is JobState.QUEUED:
        return _("{path}: queued").format(path=what)
    if job.state is JobState.RUNNING:
        if job.bytes_total:
            rate = f", {_mib(int(job.rate_bps))}/s" if job.rate_bps else ""
            eta = _(", {seconds} s left").format(seconds=job.eta_s) if job.eta_s is not None else ""
            return _("{path}: {percent}% of {size}{rate}{eta}").format(
                path=what, percent=job.percent, size=_mib(job.bytes_total), rate=rate, eta=eta
            )
        doing = job.message or _("starting")
        return f"{what}: {doing} …"
    return f"{what}: {job.message or job.state.value}"


class QueuedCheckpointSync:
    """`CheckpointSync` over the app's transfer queue and its backup folder layout."""

    def __init__(
        self,
        queue: TransferQueue,
        backup_root: Path,
        recheck_s: float = RECHECK_S,
        bwlimit_kbps: int = 0,
    ) -> None:
        self.queue = queue
        self.backup_root = backup_root
        self.recheck_s = recheck_s
        self.bwlimit_kbps = bwlimit_kbps  # KiB/s for the jobs it queues, 0 = unlimited
        self._lock = threading.Lock()
        self._following: dict[str, set[int]] = {}

    def local_dir(self, host: Host, remote_dir: str) -> Path:
        return backup_dir(self.backup_root, host, remote_dir)

    def last_verified(
        self, host: Host, remote_dir: str, resolve: Callable[[str], str]
    ) -> VerifiedSync | None:
        want = resolve(remote_dir).rstrip("/") or "/"
        best: TransferJob | None = None
        for job in self.queue.jobs(host.alias):
            if not (
                job.host_alias == host.alias
                and job.direction == "download"
                and job.state is JobState.DONE
                and job.verified
                and job.finished_at is not None
                and job.options.source_is_dir
            ):
                continue
            if (resolve(job.remote_path).rstrip("/") or "/") != want:
                continue
            # wherever it landed (the backup folder, or a folder the user chose on the Transfers
            # page): the newest copy that is still there counts
            if not Path(job.local_path).is_dir():
                continue
            if best is None or (job.finished_at or 0) > (best.finished_at or 0):
                best = job
        if best is None or best.id is None or best.finished_at is None:
            return None
        # the final run (transfer, then checksum pass) began no earlier than this
        since = best.finished_at - best.active_s
        return VerifiedSync(
            best.id, best.remote_path, Path(best.local_path), since, best.finished_at
        )

    def sync(self, host: Host, remote_dirs: Sequence[str]) -> Iterator[str]:
        def add() -> list[TransferJob]:
            return [
                sync_checkpoints(
                    self.queue,
                    host,
                    d,
                    str(self.local_dir(host, d)),
                    bwlimit_kbps=self.bwlimit_kbps,
                )
                for d in remote_dirs
            ]

        yield from self._follow(host, add)

    def download_file(self, host: Host, remote_path: str, local_dir: Path) -> Iterator[str]:
        job = TransferJob(
            host_alias=host.alias,
            direction="download",
            local_path=str(local_dir),
            remote_path=remote_path,
            options=TransferOptions(
                verify=True, source_is_dir=False, bwlimit_kbps=self.bwlimit_kbps
            ),
            label=_("Download archive: {host}:{file}").format(
                host=host.alias, file=remote_path.rsplit("/", 1)[-1]
            ),
        )
        yield from self._follow(host, lambda: [self.queue.add(job)])

    def cancel(self, host: Host) -> None:
        with self._lock:
            ids = list(self._following.get(host.alias, ()))
        for job_id in ids:
            self.queue.cancel(job_id, keep_partial=True)

    def uploads(self, host: Host) -> list[tuple[str, Path]]:
        return [
            (j.remote_path, Path(j.local_path))
            for j in self.queue.jobs(host.alias)
            if j.host_alias == host.alias and j.direction == "upload" and j.state is JobState.DONE
        ]

    # --- following jobs to their end ----------------------------------------------------

    def _follow(self, host: Host, add: Callable[[], list[TransferJob]]) -> Iterator[str]:
        """Queue the jobs `add` makes (the queue's scheduler runs them, in the host's lane with
        the Transfers page's jobs) and follow them through the queue's change events."""
        changes: queues.SimpleQueue[TransferJob] = queues.SimpleQueue()
        unsubscribe = self.queue.on_job_changed.subscribe(changes.put)  # before the first add
        ids: set[int] = set()
        try:
            self.queue.scheduler.start()
            ids = {j.id for j in add() if j.id is not None}
            with self._lock:
                self._following.setdefault(host.alias, set()).update(ids)
            yield from self._wait(ids, changes)
        finally:
            unsubscribe()
            with self._lock:
                self._following.get(host.alias, set()).difference_update(ids)

    def _wait(self, ids: set[int], changes: queues.SimpleQueue[TransferJob]) -> Iterator[str]:
        pending = set(ids)
        shown: dict[int, str] = {}
        latest = [self.queue.get(i) for i in sorted(ids)]
        while pending:
            for job in latest:
                if job is None:
                    raise UserError(_("A backup job was removed from the Transfers page."))
                if job.id not in pending:
                    continue
                yield from self._line(job, shown)
                if job.state is JobState.DONE:
                    if not job.verified:
                        raise UserError(
                            _("{path} was copied but not verified.").format(path=job.remote_path)
                        )
                    pending.discard(job.id)
                elif job.state is JobState.FAILED:
                    raise UserError(
                        _("Copying {path} failed: {error}").format(
                            path=job.remote_path, error=job.message
                        )
                    )
                elif job.state is JobState.CANCELLED:
                    raise UserError(
                        _("Copying {path} was cancelled; what arrived is kept.").format(
                            path=job.remote_path
                        ),
                        hint=_("Sync again to finish it."),
                    )
                elif job.state is JobState.PAUSED:
                    raise UserError(
                        _("Copying {path} is paused.").format(path=job.remote_path),
                        hint=_("Resume it on the Transfers page, then check again."),
                    )
            if not pending:
                return
            try:
                latest = [changes.get(timeout=self.recheck_s)]
            except queues.Empty:  # no event: read the store (another process may have acted)
                latest = [self.queue.get(i) for i in sorted(pending)]
                self.queue.scheduler.start_lanes()

    @staticmethod
    def _line(job: TransferJob, shown: dict[int, str]) -> Iterator[str]:
        assert job.id is not None
        line = progress_line(job)
        if shown.get(job.id) != line:
            shown[job.id] = line
            yield line
