"""Runs a batch of jobs through the app's queue without a window (the `transfer` command).

The jobs go into the same persistent queue, engines and verification as the Transfers page; the
queue's lane scheduler runs each host's lane on a thread of its own, and the caller's thread
follows the jobs through the queue's change events (staying free for Ctrl-C, which pauses the
running job: partial data kept, resumable from the page or `transfer` again).
"""

from __future__ import annotations

import queue as queues
from collections.abc import Callable
from dataclasses import dataclass

from gpu_companion.core.common.i18n import _
from gpu_companion.core.transfers.job import JobState, TransferJob, human_bytes
from gpu_companion.core.transfers.queue import TransferQueue

DONE, FAILED, USAGE, PARTIAL, INTERRUPTED = 0, 1, 2, 3, 130
_PENDING = (JobState.QUEUED, JobState.RUNNING)
# Without an event for this long the jobs are read from the store: a change made by another
# process (the window resumed or cancelled one of them) sends no event to this one.
RECHECK_S = 5.0


@dataclass(frozen=True)
class BatchResult:
    jobs: list[TransferJob]
    interrupted: bool = False

    @property
    def done(self) -> list[TransferJob]:
        return [j for j in self.jobs if j.state is JobState.DONE]

    @property
    def not_done(self) -> list[TransferJob]:
        return [j for j in self.jobs if j.state is not JobState.DONE]

    @property
    def exit_code(self) -> int:
        """0 every job done, 1 none done, 3 some done (partial), 130 stopped by Ctrl-C."""
        if self.interrupted:
            return INTERRUPTED
        if not self.not_done:
            return DONE
        return PARTIAL if self.done else FAILED


def run_batch(
    queue: TransferQueue,
    jobs: list[TransferJob],
    on_update: Callable[[TransferJob], None] = lambda _j: None,
    *,
    recheck_s: float = RECHECK_S,
) -> BatchResult:
    """Validate every job first (nothing is queued if one is bad), queue them, let the queue's
    scheduler run their hosts' lanes, and return the final snapshots once each job has finished
    or paused."""
    checked = [j.validated() for j in jobs]
    changes: queues.SimpleQueue[TransferJob] = queues.SimpleQueue()
    unsubscribe = queue.on_job_changed.subscribe(changes.put)  # before the first add
    ids: list[int] = []
    interrupted = False
    try:
        queue.scheduler.start()
        ids = [i for i in (queue.add(j).id for j in checked) if i is not None]
        latest = {i: queue.get(i) for i in ids}
        try:
            while any(j is not None and j.state in _PENDING for j in latest.values()):
                try:
                    job = changes.get(timeout=recheck_s)
                except queues.Empty:
                    latest = {i: queue.get(i) for i in ids}
                    queue.scheduler.start_lanes()  # a lane that stopped on an error: again
                    continue
                if job.id in latest:
                    latest[job.id] = job
                    on_update(job)
        except KeyboardInterrupt:
            interrupted = True
            queue.shutdown()  # the running job pauses and keeps its partial data; none starts
            queue.mark_interrupted(ids)  # a lane still stopping when we exit is paused too
    finally:
        unsubscribe()
    final = [queue.get(i) for i in ids]
    return BatchResult([j for j in final if j is not None], interrupted)


def progress_line(job: TransferJob) -> str:
    """One line for a terminal: state, percent, bytes, rate, time left, current file."""
    pct = job.percent
    parts = [
        f"#{job.id} {job.state.value}",
        f"{pct}%" if pct is not None else "",
        f"{human_bytes(job.bytes_done)} / {human_bytes(job.bytes_total)}",
        f"{human_bytes(job.rate_bps)}/s" if job.rate_bps else "",
        _("{seconds} s left").format(seconds=job.eta_s) if job.eta_s is not None else "",
        job.current_file or "",
    ]
    return "  ".join(p for p in parts if p)
