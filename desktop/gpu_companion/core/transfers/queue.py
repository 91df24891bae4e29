"""The transfer queue, kept in the store: one lane per host (in order), hosts in parallel.

Jobs survive the app: on start every job that was queued or running comes back paused with its
progress. A lane is a generator (`run_lane`) that the GUI runs on its worker and a headless
caller runs on a thread (`run_until_idle`); it yields a fresh job snapshot on every change.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.storage.store import Store
from gpu_companion.core.transfers.engine import TransferEngine
from gpu_companion.core.transfers.job import (
    EngineChosen,
    EngineEvent,
    JobState,
    Retrying,
    TransferControl,
    TransferJob,
    TransferNote,
    TransferOptions,
    TransferOutcome,
    TransferProgress,
    Verifying,
)

log = logging.getLogger(__name__)

INTERRUPTED = "Interrupted when the app closed; resume to continue from where it stopped."
_COLUMNS = (
    "id, host_alias, direction, local_path, remote_path, options, label, state, bytes_done, "
    "bytes_total, current_file, engine, message, verified, attempts, bytes_sent, active_s, "
    "created_at, first_started_at, finished_at"
)


def _job_from_row(r: tuple[Any, ...]) -> TransferJob:
    return TransferJob(
        id=r[0],
        host_alias=r[1],
        direction=r[2],
        local_path=r[3],
        remote_path=r[4],
        options=TransferOptions.from_json(json.loads(r[5] or "{}")),
        label=r[6] or "",
        state=JobState(r[7]),
        bytes_done=r[8] or 0,
        bytes_total=r[9],
        current_file=r[10],
        engine=r[11],
        message=r[12] or "",
        verified=bool(r[13]),
        attempts=r[14] or 0,
        bytes_sent=r[15] or 0,
        active_s=r[16] or 0.0,
        created_at=r[17] or 0.0,
        first_started_at=r[18],
        finished_at=r[19],
    )


def _row(job: TransferJob) -> dict[str, Any]:
    return {
        "host_alias": job.host_alias,
        "direction": job.direction,
        "local_path": job.local_path,
        "remote_path": job.remote_path,
        "options": json.dumps(job.options.to_json()),
        "label": job.label,
        "state": job.state.value,
        "bytes_done": job.bytes_done,
        "bytes_total": job.bytes_total,
        "current_file": job.current_file,
        "engine": job.engine,
        "message": job.message,
        "verified": int(job.verified),
        "attempts": job.attempts,
        "bytes_sent": job.bytes_sent,
        "active_s": job.active_s,
        "created_at": job.created_at,
        "first_started_at": job.first_started_at,
        "finished_at": job.finished_at,
    }


class TransferQueue:
    """Persistent jobs and their lanes. All methods are thread-safe; lanes run off the GUI."""

    def __init__(
        self,
        store: Store,
        engine: TransferEngine,
        hosts: Callable[[str], Host | None],
        *,
        clock: Callable[[], float] = time.time,
        save_every_s: float = 1.0,
        on_finished: Callable[[TransferJob], None] | None = None,
    ) -> None:
        self.store = store
        self.engine = engine
        self.hosts = hosts
        self.clock = clock
        self.save_every_s = save_every_s
        self.on_finished = on_finished
        self._lock = threading.Lock()
        self._lanes: set[str] = set()
        self._controls: dict[int, TransferControl] = {}
        self._discard: set[int] = set()
        self._closing = False
        self._recover()

    # --- reading -------------------------------------------------------------------------

    def get(self, job_id: int) -> TransferJob | None:
        row = self.store.db.execute(
            f"SELECT {_COLUMNS} FROM transfer_jobs WHERE id = ?", [job_id]
        ).fetchone()
        return _job_from_row(row) if row else None

    def jobs(self) -> list[TransferJob]:
        rows = self.store.db.execute(f"SELECT {_COLUMNS} FROM transfer_jobs ORDER BY id").fetchall()
        return [_job_from_row(r) for r in rows]

    def history(self) -> list[TransferJob]:
        """Finished jobs, newest first (bytes, duration, mean rate, verified)."""
        return sorted(
            (j for j in self.jobs() if j.state.finished),
            key=lambda j: j.finished_at or 0,
            reverse=True,
        )

    def last_verified_download(self, alias: str) -> datetime | None:
        """When a download from `alias` last finished verified (a spot rental's last backup)."""
        times = [
            j.finished_at
            for j in self.jobs()
            if j.host_alias == alias and j.direction == "download" and j.verified and j.finished_at
        ]
        return datetime.fromtimestamp(max(times), timezone.utc) if times else None

    def lanes_to_start(self) -> list[str]:
        """Hosts with queued jobs and no lane running."""
        queued = {j.host_alias for j in self.jobs() if j.state is JobState.QUEUED}
        with self._lock:
            return [] if self._closing else sorted(queued - self._lanes)

    def is_running(self) -> bool:
        with self._lock:
            return bool(self._controls)

    # --- changing ------------------------------------------------------------------------

    def add(self, job: TransferJob) -> TransferJob:
        job = job.validated()
        if self.hosts(job.host_alias) is None:
            raise ValidationError("host", f"No host named {job.host_alias!r}.")
        job = replace(job, id=None, state=JobState.QUEUED, created_at=self.clock())
        with self.store.transaction() as db:
            rowid = db.table("transfer_jobs").insert(_row(job)).last_rowid
        assert rowid is not None
        return replace(job, id=int(rowid))

    def pause(self, job_id: int) -> None:
        with self._lock:
            control = self._controls.get(job_id)
        if control is not None:
            control.request("paused")  # the lane saves the paused state when rsync has stopped
            return
        self._set_state(job_id, {JobState.QUEUED}, JobState.PAUSED)

    def resume(self, job_id: int) -> None:
        self._set_state(job_id, {JobState.PAUSED}, JobState.QUEUED)

    def retry(self, job_id: int) -> None:
        """A failed or cancelled job goes back in line; rsync resends only what is missing."""
        self._set_state(
            job_id, {JobState.FAILED, JobState.CANCELLED, JobState.PAUSED}, JobState.QUEUED
        )

    def cancel(self, job_id: int, keep_partial: bool = True) -> None:
        """Stop the job; without `keep_partial` its partial data is removed (may use the network:
        call it off the GUI thread)."""
        with self._lock:
            control = self._controls.get(job_id)
            if control is not None and not keep_partial:
                self._discard.add(job_id)
        if control is not None:
            control.request("cancelled")
            return
        job = self._set_state(job_id, {JobState.QUEUED, JobState.PAUSED}, JobState.CANCELLED)
        if job is not None and not keep_partial:
            self._discard_partial(job)

    def remove(self, job_id: int) -> None:
        job = self.get(job_id)
        if job is None:
            return
        if job.state is JobState.RUNNING:
            raise UserError("Pause or cancel the transfer before removing it.")
        with self.store.transaction() as db:
            db.table("transfer_jobs").delete(job_id)

    def shutdown(self, timeout_s: float = 15.0) -> None:
        """Pause every running job (the app is quitting) and wait until their lanes saved it;
        lanes start no further job. Queued jobs come back paused at the next start."""
        with self._lock:
            self._closing = True
            controls = list(self._controls.values())
        for c in controls:
            c.request("paused")
        deadline = time.monotonic() + timeout_s
        while self.is_running() and time.monotonic() < deadline:
            time.sleep(0.05)

    def _set_state(self, job_id: int, allowed: set[JobState], new: JobState) -> TransferJob | None:
        with self.store.transaction() as db:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM transfer_jobs WHERE id = ?", [job_id]
            ).fetchone()
            if row is None:
                return None
            job = _job_from_row(row)
            if job.state not in allowed:
                return None
            changes: dict[str, Any] = {"state": new.value}
            if new is JobState.QUEUED:
                changes.update(message="", verified=0, finished_at=None)
            if new is JobState.CANCELLED:
                changes.update(message="Cancelled.", finished_at=self.clock())
            db.table("transfer_jobs").update(job_id, changes)
        return replace(job, state=new)

    def _save(self, job: TransferJob) -> None:
        assert job.id is not None
        row = _row(job)
        del row["host_alias"]  # a rename of the host while this job ran has rewritten it
        with self.store.transaction() as db:
            db.table("transfer_jobs").update(job.id, row)

    def _recover(self) -> None:
        with self.store.transaction() as db:
            db.execute(
                "UPDATE transfer_jobs SET state = 'paused', message = ? "
                "WHERE state IN ('queued', 'running')",
                [INTERRUPTED],
            )

    def mark_interrupted(self, job_ids: list[int]) -> None:
        """This process is ending (Ctrl-C on the command line): whatever of `job_ids` is still
        queued or running is saved paused now, as the next start would find it, partial data
        kept."""
        with self.store.transaction() as db:
            for job_id in job_ids:
                db.execute(
                    "UPDATE transfer_jobs SET state = 'paused', message = ? "
                    "WHERE id = ? AND state IN ('queued', 'running')",
                    [INTERRUPTED, job_id],
                )

    def _discard_partial(self, job: TransferJob) -> None:
        host = self.hosts(job.host_alias)
        if host is None:
            return
        try:
            self.engine.discard_partial(job, host)
        except Exception:  # best effort: the job is cancelled either way
            log.warning("could not remove partial data of job %s", job.id, exc_info=True)

    # --- running -------------------------------------------------------------------------

    def run_lane(
        self, alias: str, cancel_event: threading.Event | None = None
    ) -> Iterator[TransferJob]:
        """Run the host's queued jobs in order until none is left; yields job snapshots."""
        with self._lock:
            if alias in self._lanes:
                return
            self._lanes.add(alias)
        try:
            while not (cancel_event is not None and cancel_event.is_set()):
                job = self._claim_next(alias)
                if job is None:
                    return
                yield from self._run_job(job)
        finally:
            with self._lock:
                self._lanes.discard(alias)

    def _claim_next(self, alias: str) -> TransferJob | None:
        with self._lock, self.store.transaction() as db:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM transfer_jobs WHERE host_alias = ? AND state = 'queued' "
                "ORDER BY id LIMIT 1",
                [alias],
            ).fetchone()
            if row is None or self._closing:
                self._lanes.discard(alias)  # under the lock: a later add() starts a new lane
                return None
            job = _job_from_row(row)
            now = self.clock()
            job = replace(
                job,
                state=JobState.RUNNING,
                attempts=job.attempts + 1,
                message="",
                first_started_at=job.first_started_at or now,
                rate_bps=None,
                eta_s=None,
            )
            assert job.id is not None
            db.table("transfer_jobs").update(job.id, _row(job))
            self._controls[job.id] = TransferControl()
            return job

    def _run_job(self, job: TransferJob) -> Iterator[TransferJob]:
        assert job.id is not None
        control = self._controls[job.id]
        started = time.monotonic()
        outcome: TransferOutcome | None = None
        host = self.hosts(job.host_alias)
        try:
            yield job
            if host is None:
                outcome = TransferOutcome("failed", message=f"No host named {job.host_alias!r}.")
                return
            events = self.engine.run(job, host, control)
            last_save = time.monotonic()
            try:
                while True:
                    try:
                        event = next(events)
                    except StopIteration as stop:
                        outcome = stop.value
                        break
                    job = _apply(job, event)
                    if time.monotonic() - last_save >= self.save_every_s or not isinstance(
                        event, TransferProgress
                    ):
                        self._save(job)
                        last_save = time.monotonic()
                    yield job
            finally:
                if outcome is None:  # the lane was closed mid-run (worker stopped): pause it
                    control.request("paused")
                events.close()
        except UserError as exc:
            outcome = TransferOutcome("failed", message=str(exc))
        except Exception as exc:  # a bug or an unexpected library error: log it, fail the job
            log.exception("transfer job %s failed", job.id)
            outcome = TransferOutcome("failed", message=f"Unexpected error: {exc}")
        finally:
            final = self._finish(job, outcome, time.monotonic() - started)
        yield final

    def _finish(
        self, job: TransferJob, outcome: TransferOutcome | None, elapsed: float
    ) -> TransferJob:
        job_id = job.id
        assert job_id is not None
        if outcome is None:
            outcome = TransferOutcome("paused", message=INTERRUPTED)
        state = {
            "done": JobState.DONE,
            "failed": JobState.FAILED,
            "paused": JobState.PAUSED,
            "cancelled": JobState.CANCELLED,
        }[outcome.outcome]
        message = (
            outcome.message
            or {
                JobState.DONE: "Verified." if outcome.verified else "Done (not verified).",
                JobState.PAUSED: "Paused; partial data kept.",
                JobState.CANCELLED: "Cancelled.",
                JobState.FAILED: "Failed.",
            }[state]
        )
        job = replace(
            job,
            state=state,
            message=message,
            verified=outcome.verified,
            bytes_sent=job.bytes_sent + outcome.bytes_sent,
            active_s=job.active_s + elapsed,
            rate_bps=None,
            eta_s=None,
            finished_at=self.clock() if state.finished else None,
        )
        if state is JobState.DONE:
            job = replace(job, bytes_done=job.bytes_total or job.bytes_done, current_file=None)
        with self._lock:
            self._controls.pop(job_id, None)
            discard = job_id in self._discard
            self._discard.discard(job_id)
        self._save(job)
        if state is JobState.CANCELLED and discard:
            self._discard_partial(job)
        if state.finished and self.on_finished is not None:
            self.on_finished(job)
        return job

    def run_until_idle(self, timeout_s: float | None = None) -> None:
        """Headless: run every host's lane on its own thread until no job is queued."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            threads = [
                threading.Thread(target=_drain, args=(self.run_lane(a),), daemon=True)
                for a in self.lanes_to_start()
            ]
            if not threads:
                return
            for t in threads:
                t.start()
            for t in threads:
                left = None if deadline is None else max(deadline - time.monotonic(), 0)
                t.join(left)
                if t.is_alive():
                    raise TimeoutError("transfers still running")


def _drain(it: Iterator[TransferJob]) -> None:
    for _ in it:
        pass


def _apply(job: TransferJob, event: EngineEvent) -> TransferJob:
    if isinstance(event, TransferProgress):
        return replace(
            job,
            bytes_done=event.bytes_done,
            bytes_total=event.bytes_total or job.bytes_total,
            rate_bps=event.rate_bps,
            eta_s=event.eta_s,
            current_file=event.current_file or job.current_file,
        )
    if isinstance(event, EngineChosen):
        return replace(job, engine=event.engine, message=event.reason)
    if isinstance(event, Retrying):
        return replace(
            job,
            message=f"Connection dropped; retry {event.attempt} in {event.delay_s:.0f} s. "
            f"{event.reason}",
        )
    if isinstance(event, Verifying):
        return replace(job, message="Verifying checksums on both sides…")
    if isinstance(event, TransferNote) and event.level != "info":
        return replace(job, message=event.text)
    return job
