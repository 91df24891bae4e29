"""Runs a batch of jobs through the app's queue without a window (the `transfer` command).

The jobs go into the same persistent queue, engines and verification as the Transfers page; the
host's lane runs on a thread so the caller's thread stays free for Ctrl-C, which pauses the
running job (partial data kept, resumable from the page or `transfer` again).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from gpu_companion.core.transfers.job import JobState, TransferJob, human_bytes
from gpu_companion.core.transfers.queue import TransferQueue

DONE, FAILED, USAGE, PARTIAL, INTERRUPTED = 0, 1, 2, 3, 130
_PENDING = (JobState.QUEUED, JobState.RUNNING)


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
    poll_s: float = 0.2,
) -> BatchResult:
    """Validate every job first (nothing is queued if one is bad), queue them, run their hosts'
    lanes until each job has finished or paused, and return the final snapshots."""
    checked = [j.validated() for j in jobs]
    ids = [queue.add(j).id for j in checked]
    mine = {i for i in ids if i is not None}

    def forward(job: TransferJob) -> None:
        if job.id in mine:
            on_update(job)

    stop = threading.Event()

    def drain() -> None:
        while not stop.is_set():
            for alias in queue.lanes_to_start():
                for snapshot in queue.run_lane(alias):
                    forward(snapshot)
            current = [queue.get(i) for i in mine]
            if not any(j is not None and j.state in _PENDING for j in current):
                return
            time.sleep(poll_s)  # another process (the app) runs one of them: wait for it

    worker = threading.Thread(target=drain, name="transfer-batch", daemon=True)
    worker.start()
    interrupted = False
    try:
        while worker.is_alive():
            worker.join(poll_s)
    except KeyboardInterrupt:
        interrupted = True
        stop.set()
        queue.shutdown()  # the running job pauses and keeps its partial data; no new job starts
        worker.join(30)
        queue.mark_interrupted(sorted(mine))  # a lane still stopping when we exit is paused too
    final = [queue.get(i) for i in ids if i is not None]
    return BatchResult([j for j in final if j is not None], interrupted)


def progress_line(job: TransferJob) -> str:
    """One line for a terminal: state, percent, bytes, rate, time left, current file."""
    pct = job.percent
    parts = [
        f"#{job.id} {job.state.value}",
        f"{pct}%" if pct is not None else "",
        f"{human_bytes(job.bytes_done)} / {human_bytes(job.bytes_total)}",
        f"{human_bytes(job.rate_bps)}/s" if job.rate_bps else "",
        f"{job.eta_s} s left" if job.eta_s is not None else "",
        job.current_file or "",
    ]
    return "  ".join(p for p in parts if p)
