"""The transfer queue, kept in the store: one lane per host (in order), hosts in parallel.

Jobs survive the app: on start every job that was queued or running *by a process that is gone*
comes back paused with its progress. Each job records its owner (the process that queued it, or
runs it: boot id, pid and the pid's start time, see core/common/owner.py), the owner's computer
and a heartbeat (written when the job is queued or claimed, with each progress save and every
`HEARTBEAT_S` while the process runs lanes). An owner is gone when

- no owner is recorded (a job from before owners were), or
- it is on this computer and its process no longer runs (a dead pid, a pid reused by another
  process, an earlier boot), or
- it is on another computer (the data dir on a shared disk, where this one cannot look at its
  processes) and its heartbeat is older than `OWNER_STALE_S`.

A job of a live owner is never touched by another process: a second process (`gpu-companion
transfer` while the window runs) leaves the window's jobs alone, and a process's lanes only claim
the jobs it queued (or resumed, or retried: that makes it the owner).

A lane is a generator (`run_lane`) that the queue's `LaneScheduler` runs on a thread of its own
per host; it yields a fresh job snapshot on every change. Every snapshot the queue saves (a job
added, a state change, a progress save) is also emitted on `on_job_changed`, on the thread that
saved it: the pages and the headless command follow jobs through it instead of reading the store.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.common.listeners import Listeners
from gpu_companion.core.common.owner import owner_alive, this_machine, this_owner
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
from gpu_companion.core.transfers.scheduler import HEARTBEAT_S, LaneScheduler

log = logging.getLogger(__name__)

INTERRUPTED = N_("Interrupted when the app closed; resume to continue from where it stopped.")
# A job whose owner is on another computer counts as orphaned after this long without a beat:
# four missed beats (the heartbeat is written every HEARTBEAT_S while lanes run).
OWNER_STALE_S = 4 * HEARTBEAT_S
_PENDING_STATES = "('queued', 'running')"
_OPEN_STATES = "('queued', 'running', 'paused')"  # not finished (JobState.finished)
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


_me: tuple[int, str, str] | None = None


def _owner() -> tuple[str, str]:
    """This process as a job's owner, and this computer (read once per process)."""
    global _me
    pid = os.getpid()
    if _me is None or _me[0] != pid:  # computed again in a forked child
        _me = (pid, this_owner(), this_machine())
    return _me[1], _me[2]


def _claimed_by_me() -> dict[str, Any]:
    owner, machine = _owner()
    return {"owner": owner, "owner_machine": machine, "heartbeat_at": time.time()}


def owner_gone(
    owner: str,
    machine: str,
    heartbeat_at: float | None,
    *,
    now: float | None = None,
    stale_after_s: float = OWNER_STALE_S,
) -> bool:
    """Whether a job's owner is gone (the module docstring has the rule)."""
    if not owner:
        return True
    if machine and machine != this_machine():
        now = time.time() if now is None else now
        return heartbeat_at is None or now - heartbeat_at > stale_after_s
    return not owner_alive(owner)


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
        stale_after_s: float = OWNER_STALE_S,
    ) -> None:
        self.store = store
        self.engine = engine
        self.hosts = hosts
        self.clock = clock
        self.save_every_s = save_every_s
        self.on_finished = on_finished
        self.stale_after_s = stale_after_s
        # every snapshot the queue saves, on the thread that saved it (a lane's, or the caller's)
        self.on_job_changed: Listeners[TransferJob] = Listeners("transfer jobs")
        self._lock = threading.Lock()
        self._lanes: set[str] = set()
        self._controls: dict[int, TransferControl] = {}
        self._discard: set[int] = set()
        self._closing = False
        self.scheduler = LaneScheduler(self)
        self.recover_orphans()

    # --- reading -------------------------------------------------------------------------

    def get(self, job_id: int) -> TransferJob | None:
        row = self.store.db.execute(
            f"SELECT {_COLUMNS} FROM transfer_jobs WHERE id = ?", [job_id]
        ).fetchone()
        return _job_from_row(row) if row else None

    def jobs(self, alias: str | None = None) -> list[TransferJob]:
        """Every job (of one host with `alias`), oldest first. A year of use leaves tens of
        thousands: a page shows `recent` instead."""
        if alias is None:
            rows = self.store.db.execute(f"SELECT {_COLUMNS} FROM transfer_jobs ORDER BY id")
        else:
            rows = self.store.db.execute(
                f"SELECT {_COLUMNS} FROM transfer_jobs WHERE host_alias = ? ORDER BY id", [alias]
            )
        return [_job_from_row(r) for r in rows.fetchall()]

    def recent(self, finished: int) -> list[TransferJob]:
        """Every unfinished job and the newest `finished` finished ones, oldest first: what the
        Transfers page shows (index look-ups: it never reads the whole table)."""
        rows = self.store.db.execute(
            f"SELECT {_COLUMNS} FROM transfer_jobs WHERE state IN {_OPEN_STATES} UNION ALL "
            f"SELECT * FROM (SELECT {_COLUMNS} FROM transfer_jobs WHERE id IN (SELECT id FROM "
            f"transfer_jobs WHERE state NOT IN {_OPEN_STATES} ORDER BY id DESC LIMIT ?)) "
            "ORDER BY id",
            [max(int(finished), 0)],
        ).fetchall()
        return [_job_from_row(r) for r in rows]

    def count_finished(self) -> int:
        row = self.store.db.execute(  # all, less the few open ones (found in the state index)
            "SELECT (SELECT COUNT(*) FROM transfer_jobs) - "
            f"(SELECT COUNT(*) FROM transfer_jobs WHERE state IN {_OPEN_STATES})"
        ).fetchone()
        return int(row[0])

    def unfinished(self) -> list[TransferJob]:
        """Queued, running and paused jobs, oldest first (a look-up in the state index)."""
        rows = self.store.db.execute(
            f"SELECT {_COLUMNS} FROM transfer_jobs WHERE state IN {_OPEN_STATES} ORDER BY id"
        ).fetchall()
        return [_job_from_row(r) for r in rows]

    def history(self, limit: int | None = None) -> list[TransferJob]:
        """Finished jobs, newest first (bytes, duration, mean rate, verified)."""
        sql = (
            f"SELECT {_COLUMNS} FROM transfer_jobs WHERE state NOT IN {_OPEN_STATES} "
            "ORDER BY coalesce(finished_at, 0) DESC, id DESC"
        )
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [_job_from_row(r) for r in self.store.db.execute(sql).fetchall()]

    def last_verified_download(self, alias: str) -> datetime | None:
        """When a download from `alias` last finished verified (a spot rental's last backup)."""
        row = self.store.db.execute(
            "SELECT MAX(finished_at) FROM transfer_jobs WHERE host_alias = ? "
            "AND direction = 'download' AND verified AND finished_at",
            [alias],
        ).fetchone()
        return datetime.fromtimestamp(row[0], timezone.utc) if row and row[0] else None

    def lanes_to_start(self) -> list[str]:
        """Hosts with jobs this process queued and no lane running."""
        owner, _machine = _owner()
        rows = self.store.db.execute(
            "SELECT DISTINCT host_alias FROM transfer_jobs WHERE state = 'queued' AND owner = ?",
            [owner],
        ).fetchall()
        queued = {r[0] for r in rows}
        with self._lock:
            return [] if self._closing else sorted(queued - self._lanes)

    def is_running(self) -> bool:
        with self._lock:
            return bool(self._controls)

    # --- changing ------------------------------------------------------------------------

    def add(self, job: TransferJob) -> TransferJob:
        job = job.validated()
        if self.hosts(job.host_alias) is None:
            raise ValidationError(
                "host", _("No host named {alias}.").format(alias=repr(job.host_alias))
            )
        job = replace(job, id=None, state=JobState.QUEUED, created_at=self.clock())
        with self.store.transaction() as db:
            rowid = db.table("transfer_jobs").insert(_row(job) | _claimed_by_me()).last_rowid
        assert rowid is not None
        job = replace(job, id=int(rowid))
        self.on_job_changed.emit(job)
        self.scheduler.wake(job.host_alias)
        return job

    def pause(self, job_id: int) -> None:
        with self._lock:
            control = self._controls.get(job_id)
        if control is not None:
            control.request("paused")  # the lane saves the paused state when rsync has stopped
            return
        self._set_state(job_id, {JobState.QUEUED}, JobState.PAUSED)

    def resume(self, job_id: int) -> None:
        """The paused job goes back in line, in this process's lane for its host (this process
        becomes its owner)."""
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
            raise UserError(_("Pause or cancel the transfer before removing it."))
        with self.store.transaction() as db:
            db.table("transfer_jobs").delete(job_id)

    def shutdown(self, timeout_s: float = 15.0) -> None:
        """Pause every running job (the app is quitting) and wait until their lanes saved it;
        lanes start no further job. Queued jobs come back paused at the next start."""
        with self._lock:
            self._closing = True
            controls = list(self._controls.values())
        self.scheduler.close()
        for c in controls:
            c.request("paused")
        deadline = time.monotonic() + timeout_s
        while self.is_running() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.scheduler.wait_idle(max(deadline - time.monotonic(), 0))

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
            if new is JobState.QUEUED:  # this process runs it now: its lane claims only its own
                changes.update(message="", verified=0, finished_at=None, **_claimed_by_me())
            if new is JobState.CANCELLED:
                changes.update(message="Cancelled.", finished_at=self.clock())
            db.table("transfer_jobs").update(job_id, changes)
        job = replace(
            job,
            state=new,
            message=changes.get("message", job.message),
            verified=bool(changes.get("verified", job.verified)),
            finished_at=changes.get("finished_at", job.finished_at),
        )
        self.on_job_changed.emit(job)
        if new is JobState.QUEUED:
            self.scheduler.wake(job.host_alias)
        return job

    def _save(self, job: TransferJob) -> None:
        assert job.id is not None
        row = _row(job)
        del row["host_alias"]  # a rename of the host while this job ran has rewritten it
        row["heartbeat_at"] = time.time()
        with self.store.transaction() as db:
            db.table("transfer_jobs").update(job.id, row)
        self.on_job_changed.emit(job)

    def recover_orphans(self) -> list[int]:
        """Pause the queued or running jobs whose owner is gone (the module docstring says when),
        progress and partial data kept; a job of a live process is left as it is. Runs when the
        queue is made (the app or a command starts); returns the ids it paused."""
        rows = self.store.db.execute(
            "SELECT id, owner, owner_machine, heartbeat_at FROM transfer_jobs "
            f"WHERE state IN {_PENDING_STATES}"
        ).fetchall()
        now = time.time()
        gone = [
            (r[0], r[1])
            for r in rows
            if owner_gone(r[1] or "", r[2] or "", r[3], now=now, stale_after_s=self.stale_after_s)
        ]
        paused = []
        with self.store.transaction() as db:
            for job_id, owner in gone:
                cur = db.execute(  # unless its owner changed meanwhile (another start resumed it)
                    "UPDATE transfer_jobs SET state = 'paused', message = ? "
                    f"WHERE id = ? AND owner = ? AND state IN {_PENDING_STATES}",
                    [_(INTERRUPTED), job_id, owner or ""],
                )
                if cur.rowcount:
                    paused.append(job_id)
        if paused:
            log.info("transfer jobs %s were left by a process that is gone: paused", paused)
        self._emit_ids(paused)
        return paused

    def beat(self) -> None:
        """This process still runs the jobs it owns (the scheduler calls it while lanes run)."""
        owner, _machine = _owner()
        with self.store.transaction() as db:
            db.execute(
                "UPDATE transfer_jobs SET heartbeat_at = ? "
                f"WHERE owner = ? AND state IN {_PENDING_STATES}",
                [time.time(), owner],
            )

    def mark_interrupted(self, job_ids: list[int]) -> None:
        """This process is ending (Ctrl-C on the command line): whatever of `job_ids` is still
        queued or running is saved paused now, as the next start would find it, partial data
        kept."""
        with self.store.transaction() as db:
            for job_id in job_ids:
                db.execute(
                    "UPDATE transfer_jobs SET state = 'paused', message = ? "
                    f"WHERE id = ? AND state IN {_PENDING_STATES}",
                    [_(INTERRUPTED), job_id],
                )
        self._emit_ids(job_ids)

    def _emit_ids(self, job_ids: list[int]) -> None:
        for job_id in job_ids:
            job = self.get(job_id)
            if job is not None:
                self.on_job_changed.emit(job)

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
        """Run the host's jobs that this process queued, in order, until none is left; yields job
        snapshots: the body of `LaneScheduler`'s lane threads (tests drive it directly)."""
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
        """The host's next job that this process queued, now running; None when there is none
        (jobs another live process queued are that process's to run)."""
        job = self._claim(alias)
        if job is not None:
            self.on_job_changed.emit(job)
        return job

    def _claim(self, alias: str) -> TransferJob | None:
        owner, _machine = _owner()
        with self._lock, self.store.transaction() as db:
            row = db.execute(
                f"SELECT {_COLUMNS} FROM transfer_jobs WHERE host_alias = ? AND state = 'queued' "
                "AND owner = ? ORDER BY id LIMIT 1",
                [alias, owner],
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
            db.table("transfer_jobs").update(job.id, _row(job) | _claimed_by_me())
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
                outcome = TransferOutcome(
                    "failed", message=_("No host named {alias}.").format(alias=repr(job.host_alias))
                )
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
            outcome = TransferOutcome(
                "failed", message=_("Unexpected error: {problem}").format(problem=exc)
            )
        finally:
            final = self._finish(job, outcome, time.monotonic() - started)
        yield final

    def _finish(
        self, job: TransferJob, outcome: TransferOutcome | None, elapsed: float
    ) -> TransferJob:
        job_id = job.id
        assert job_id is not None
        if outcome is None:
            outcome = TransferOutcome("paused", message=_(INTERRUPTED))
        state = {
            "done": JobState.DONE,
            "failed": JobState.FAILED,
            "paused": JobState.PAUSED,
            "cancelled": JobState.CANCELLED,
        }[outcome.outcome]
        message = (
            outcome.message
            or {
                JobState.DONE: _("Verified.") if outcome.verified else _("Done (not verified)."),
                JobState.PAUSED: _("Paused; partial data kept."),
                JobState.CANCELLED: _("Cancelled."),
                JobState.FAILED: _("Failed."),
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
        """Run every host's lane (the scheduler's threads) until no job of this process is
        queued; TimeoutError when lanes still run after `timeout_s`."""
        self.scheduler.run_until_idle(timeout_s)


def _apply(job: TransferJob, event: EngineEvent) -> TransferJob:
    if isinstance(event, TransferProgress):
        total = event.bytes_total or job.bytes_total
        # a resumed job's rsync counts from 0 again while the data it paused with is still at
        # the destination: the shown progress never goes back below it
        kept = job.bytes_done if total is None or job.bytes_done <= total else 0
        return replace(
            job,
            bytes_done=max(event.bytes_done, kept),
            bytes_total=total,
            rate_bps=event.rate_bps,
            eta_s=event.eta_s,
            current_file=event.current_file or job.current_file,
        )
    if isinstance(event, EngineChosen):
        return replace(job, engine=event.engine, message=event.reason)
    if isinstance(event, Retrying):
        return replace(
            job,
            message=_("Connection dropped; retry {attempt} in {seconds} s. {reason}").format(
                attempt=event.attempt, seconds=f"{event.delay_s:.0f}", reason=event.reason
            ),
        )
    if isinstance(event, Verifying):
        return replace(job, message=_("Verifying checksums on both sides…"))
    if isinstance(event, TransferNote) and event.level != "info":
        return replace(job, message=event.text)
    return job
