"""The one driver of a queue's lanes: a thread per host with queued jobs, hosts in parallel.

Whoever adds, resumes or retries a job (the Transfers page, the release gate's checkpoint sync,
`gpu-companion transfer`) only changes the queue; once `start()` was called the scheduler starts
that host's lane if none runs, and a lane ends when its host has no job of this process left.
Nobody else runs `TransferQueue.run_lane`: callers follow their jobs through the queue's
`on_job_changed` events.

Lanes run on plain threads of their own (never a shared pool: a lane runs for hours). rsync is
started from the lane's thread, which waits for it, so its parent-death signal (see
core/common/children.py) fires only when the process dies.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpu_companion.core.transfers.queue import TransferQueue

log = logging.getLogger(__name__)

HEARTBEAT_S = 30.0  # how often the jobs of a process that runs lanes are marked alive


class LaneScheduler:
    """Owns the lane threads of one `TransferQueue`. Thread-safe."""

    def __init__(self, queue: TransferQueue, heartbeat_s: float = HEARTBEAT_S) -> None:
        self.queue = queue
        self.heartbeat_s = heartbeat_s
        self._cond = threading.Condition()
        self._threads: dict[str, threading.Thread] = {}
        self._again: set[str] = set()  # woken while its lane was finishing: look once more
        self._started = False
        self._closed = False
        self._beat: threading.Thread | None = None
        self._beat_wake = threading.Event()

    # --- control -------------------------------------------------------------------------

    def start(self) -> None:
        """From now on a job added, resumed or retried starts its host's lane; lanes start now
        for the hosts that have jobs of this process queued. Idempotent."""
        with self._cond:
            if self._closed:
                return
            self._started = True
        self.start_lanes()

    @property
    def started(self) -> bool:
        with self._cond:
            return self._started and not self._closed

    def start_lanes(self) -> list[str]:
        """A lane for every host with queued jobs of this process and none running."""
        started = [a for a in self.queue.lanes_to_start() if self._ensure(a)]
        return started

    def wake(self, alias: str) -> None:
        """The queue's call when a job of `alias` was queued (added, resumed, retried)."""
        with self._cond:
            if not self._started or self._closed:
                return
        self._ensure(alias)

    def close(self) -> None:
        """No lane starts from now on; running lanes end after their current job (the queue's
        `shutdown` pauses it)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._beat_wake.set()

    # --- reading -------------------------------------------------------------------------

    def lanes(self) -> list[str]:
        """The hosts whose lane runs now."""
        with self._cond:
            return sorted(self._threads)

    def wait_idle(self, timeout_s: float | None = None) -> bool:
        """Wait until no lane runs; False when one still runs after `timeout_s`."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._cond:
            while self._threads:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def run_until_idle(self, timeout_s: float | None = None) -> None:
        """Start the lanes of every host with queued jobs of this process (started or not) and
        wait until none is left; TimeoutError when lanes still run after `timeout_s`."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            self.start_lanes()
            left = None if deadline is None else max(deadline - time.monotonic(), 0)
            if not self.wait_idle(left):
                raise TimeoutError(f"transfers still running after {timeout_s:g} s: "
                                   f"{self._where()}")  # fmt: skip
            if not self.queue.lanes_to_start():
                return

    def _where(self) -> str:
        """What each running lane is doing: its jobs' states and the line its thread waits on
        (what a hung transfer needs to be understood from a log)."""
        import sys
        import traceback

        frames = sys._current_frames()
        with self._cond:
            threads = dict(self._threads)
        out = []
        for alias, thread in sorted(threads.items()):
            jobs = [
                f"job {j.id} {j.direction} {j.state.value} {j.bytes_done} B: {j.message!r}"
                for j in self.queue.unfinished()
                if j.host_alias == alias
            ]
            frame = frames.get(thread.ident or -1)
            stack = traceback.format_stack(frame, limit=4) if frame is not None else []
            where = " <- ".join(line.strip().replace("\n", " ") for line in reversed(stack))
            out.append(f"{alias}: {'; '.join(jobs) or 'no job'}; at {where}")
        return " | ".join(out) or "no lane"

    # --- the threads ---------------------------------------------------------------------

    def _ensure(self, alias: str) -> bool:
        """Start the host's lane unless one runs (then it looks again before it ends)."""
        with self._cond:
            if self._closed:
                return False
            if alias in self._threads:
                self._again.add(alias)
                return False
            thread = threading.Thread(
                target=self._lane, args=(alias,), name=f"transfer-lane:{alias}", daemon=True
            )
            self._threads[alias] = thread
            self._ensure_heartbeat()
        thread.start()
        return True

    def _lane(self, alias: str) -> None:
        while True:
            with self._cond:
                self._again.discard(alias)
            try:
                for _snapshot in self.queue.run_lane(alias):
                    pass  # snapshots reach listeners through the queue's on_job_changed
            except Exception:  # a bug or a store error: logged, the lane ends
                log.exception("the transfer lane of %s stopped", alias)
                with self._cond:
                    self._again.discard(alias)
            with self._cond:
                if alias in self._again and not self._closed:
                    continue  # a job came while the lane was finding none
                del self._threads[alias]
                self._cond.notify_all()
                return

    def _ensure_heartbeat(self) -> None:  # under self._cond
        if self._beat is not None:
            return
        self._beat_wake.clear()
        self._beat = threading.Thread(
            target=self._heartbeat, name="transfer-heartbeat", daemon=True
        )
        self._beat.start()

    def _heartbeat(self) -> None:
        """While lanes run: the store says every `heartbeat_s` that this process still owns its
        queued and running jobs (for a process on another computer reading the same store)."""
        while True:
            self._beat_wake.wait(self.heartbeat_s)
            with self._cond:
                if not self._threads or self._closed:
                    self._beat = None
                    return
            try:
                self.queue.beat()
            except Exception:
                log.warning("could not mark the transfer jobs alive", exc_info=True)
