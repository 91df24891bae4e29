"""The lane scheduler (one lane thread per host, hosts in parallel), the queue's change events and
the jobs' owners, with an engine double."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Generator

import pytest

from gpu_companion.core.common.owner import this_machine, this_owner
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.transfers.job import (
    EngineChosen,
    EngineEvent,
    JobState,
    TransferControl,
    TransferJob,
    TransferOutcome,
    TransferProgress,
)
from gpu_companion.core.transfers.queue import INTERRUPTED, TransferQueue, owner_gone

HOSTS = {a: Host(alias=a, hostname="h") for a in ("a", "b")}


class CountingEngine:
    """Each job holds `hold` seconds; records how many jobs of each host ran at once."""

    def __init__(self, hold: float) -> None:
        self.hold = hold
        self.lock = threading.Lock()
        self.now: dict[str, int] = {}
        self.most: dict[str, int] = {}
        self.started: dict[str, float] = {}
        self.threads: set[str] = set()
        self.order: list[str] = []

    def run(
        self, job: TransferJob, host: Host, control: TransferControl
    ) -> Generator[EngineEvent, None, TransferOutcome]:
        with self.lock:
            self.now[host.alias] = self.now.get(host.alias, 0) + 1
            self.most[host.alias] = max(self.most.get(host.alias, 0), self.now[host.alias])
            self.started[job.local_path] = time.monotonic()
            self.threads.add(threading.current_thread().name)
            self.order.append(job.local_path)
        try:
            yield EngineChosen("rsync", "test")
            yield TransferProgress(5, 10, 1.0, 5, "f")
            if control.wait(self.hold):
                return TransferOutcome(control.stop_requested or "paused")
            return TransferOutcome("done", verified=True, bytes_sent=10)
        finally:
            with self.lock:
                self.now[host.alias] -= 1

    def discard_partial(self, job: TransferJob, host: Host) -> None:
        pass


def _queue(store, engine) -> TransferQueue:  # type: ignore[no-untyped-def]
    return TransferQueue(store, engine, HOSTS.get, save_every_s=0)  # type: ignore[arg-type]


def _wait(predicate, timeout: float = 10) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_one_lane_per_host_and_hosts_in_parallel(store) -> None:
    engine = CountingEngine(hold=0.3)
    q = _queue(store, engine)
    q.scheduler.start()
    jobs = [q.add(TransferJob(a, "upload", p, "x")) for a, p in
            [("a", "/a1"), ("a", "/a2"), ("a", "/a3"), ("b", "/b1"), ("b", "/b2")]]  # fmt: skip
    assert q.scheduler.lanes() == ["a", "b"]  # started by the adds: nobody drives run_lane
    assert q.scheduler.wait_idle(10)
    assert engine.most == {"a": 1, "b": 1}  # one lane per host
    assert [p for p in engine.order if p.startswith("/a")] == ["/a1", "/a2", "/a3"]  # in order
    assert abs(engine.started["/b1"] - engine.started["/a1"]) < 0.25  # b did not wait for a
    assert all(name.startswith("transfer-lane:") for name in engine.threads)
    assert all(q.get(j.id).state is JobState.DONE for j in jobs)
    assert q.scheduler.lanes() == []  # a lane ends when its host has nothing queued


def test_a_lane_starts_again_for_a_job_added_after_it_ended(store) -> None:
    engine = CountingEngine(hold=0)
    q = _queue(store, engine)
    q.scheduler.start()
    for i in range(30):  # adds racing the lane's "nothing left" find their way in
        q.add(TransferJob("a", "upload", f"/{i}", "x"))
        time.sleep(0.002 * (i % 3))
    assert q.scheduler.wait_idle(10)
    assert all(j.state is JobState.DONE for j in q.jobs())
    assert engine.most == {"a": 1}


def test_before_start_an_added_job_waits_and_run_until_idle_runs_it(store) -> None:
    q = _queue(store, CountingEngine(hold=0))
    job = q.add(TransferJob("a", "upload", "/1", "x"))
    time.sleep(0.1)
    assert q.get(job.id).state is JobState.QUEUED and q.scheduler.lanes() == []
    q.run_until_idle(10)
    assert q.get(job.id).state is JobState.DONE


def test_a_lane_that_outlasts_run_until_idle_says_what_it_waits_on(store) -> None:
    engine = CountingEngine(hold=30)
    q = _queue(store, engine)
    job = q.add(TransferJob("a", "upload", "/slow", "x"))
    with pytest.raises(TimeoutError) as err:
        q.run_until_idle(0.3)
    said = str(err.value)
    assert said.startswith("transfers still running after 0.3 s: a: ")
    assert f"job {job.id} upload running" in said and "control.wait(self.hold)" in said
    q.shutdown()


def test_resume_and_retry_start_the_lane(store) -> None:
    engine = CountingEngine(hold=5)
    q = _queue(store, engine)
    job = q.add(TransferJob("a", "upload", "/1", "x"))
    q.pause(job.id)
    q.scheduler.start()
    assert q.scheduler.lanes() == []
    q.resume(job.id)
    _wait(lambda: q.get(job.id).state is JobState.RUNNING)
    q.cancel(job.id)
    _wait(lambda: q.get(job.id).state is JobState.CANCELLED)
    engine.hold = 0
    q.retry(job.id)
    _wait(lambda: q.get(job.id).state is JobState.DONE)


def test_every_saved_snapshot_is_an_event(store) -> None:
    q = _queue(store, CountingEngine(hold=0))
    seen: list[tuple[int | None, JobState, int]] = []
    q.on_job_changed.subscribe(lambda j: seen.append((j.id, j.state, j.bytes_done)))
    q.scheduler.start()
    job = q.add(TransferJob("a", "upload", "/1", "x"))
    assert q.scheduler.wait_idle(10)
    states = [s for i, s, _ in seen if i == job.id]
    assert states[0] is JobState.QUEUED and states[1] is JobState.RUNNING
    assert states[-1] is JobState.DONE
    assert (job.id, JobState.RUNNING, 5) in seen  # progress
    q.scheduler.close()  # no lane for the next one: a pause from the page is an event too
    paused = q.add(TransferJob("a", "upload", "/2", "x"))
    q.pause(paused.id)
    assert seen[-1][:2] == (paused.id, JobState.PAUSED)


def test_shutdown_pauses_running_jobs_and_starts_no_lane(store) -> None:
    q = _queue(store, CountingEngine(hold=5))
    q.scheduler.start()
    first = q.add(TransferJob("a", "upload", "/1", "x"))
    _wait(lambda: q.get(first.id).state is JobState.RUNNING)
    q.shutdown(5)
    assert q.get(first.id).state is JobState.PAUSED and q.scheduler.lanes() == []
    later = q.add(TransferJob("b", "upload", "/2", "x"))
    time.sleep(0.1)
    assert q.get(later.id).state is JobState.QUEUED and q.scheduler.lanes() == []


# --- owners -------------------------------------------------------------------------------


def _set_owner(store, job_id: int, owner: str, machine: str, beat: float | None) -> None:  # type: ignore[no-untyped-def]
    with store.transaction() as db:
        db.execute(
            "UPDATE transfer_jobs SET owner = ?, owner_machine = ?, heartbeat_at = ? WHERE id = ?",
            [owner, machine, beat, job_id],
        )


def test_a_job_records_its_owner_when_queued_and_when_claimed(store) -> None:
    q = _queue(store, CountingEngine(hold=5))
    job = q.add(TransferJob("a", "upload", "/1", "x"))
    row = store.db.execute(
        "SELECT owner, owner_machine, heartbeat_at FROM transfer_jobs WHERE id = ?", [job.id]
    ).fetchone()
    assert row[0] == this_owner() and row[1] == this_machine() and row[2] > time.time() - 5
    _set_owner(store, job.id, this_owner(), this_machine(), 0.0)
    lane = q.run_lane("a")
    assert next(lane).state is JobState.RUNNING
    beat = store.db.execute("SELECT heartbeat_at FROM transfer_jobs").fetchone()[0]
    assert beat > time.time() - 5
    q.shutdown(0.1)
    lane.close()


def test_owner_gone_rules() -> None:
    now = 1_000_000.0
    me = this_owner()
    here = this_machine()
    assert not owner_gone(me, here, None, now=now)  # alive here: whatever the heartbeat says
    assert owner_gone("", "", now, now=now)  # a job from before owners were recorded
    boot, _pid, started = me.split(":")
    assert owner_gone(f"{boot}:{2**22 + 7}:{started}", here, now, now=now)  # no such pid
    assert owner_gone(f"another-boot:{os.getpid()}:{started}", here, now, now=now)
    elsewhere = here + "-elsewhere"  # a data dir on a shared disk: only the heartbeat says
    assert not owner_gone("b:1:1", elsewhere, now - 60, now=now, stale_after_s=120)
    assert owner_gone("b:1:1", elsewhere, now - 121, now=now, stale_after_s=120)
    assert owner_gone("b:1:1", elsewhere, None, now=now)


def test_start_up_pauses_only_jobs_whose_owner_is_gone(store) -> None:
    q = _queue(store, CountingEngine(hold=5))
    live = q.add(TransferJob("a", "upload", "/live", "x"))
    running = q.add(TransferJob("b", "upload", "/running", "x"))
    lane = q.run_lane("b")
    assert next(lane).state is JobState.RUNNING
    dead = q.add(TransferJob("a", "upload", "/dead", "x"))
    foreign_fresh = q.add(TransferJob("a", "upload", "/far-fresh", "x"))
    foreign_stale = q.add(TransferJob("a", "upload", "/far-stale", "x"))
    legacy = q.add(TransferJob("a", "upload", "/legacy", "x"))
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    boot, _pid, started = this_owner().split(":")
    _set_owner(store, dead.id, f"{boot}:{child.pid}:{started}", this_machine(), time.time())
    far = this_machine() + "-far"
    _set_owner(store, foreign_fresh.id, "b:1:1", far, time.time() - 30)
    _set_owner(store, foreign_stale.id, "b:1:1", far, time.time() - 600)
    _set_owner(store, legacy.id, "", "", None)

    again = _queue(store, CountingEngine(hold=0))  # a second process on the same store
    state = {j.local_path: (j.state, j.message) for j in again.jobs()}
    assert state["/live"] == (JobState.QUEUED, "")
    assert state["/running"][0] is JobState.RUNNING
    assert state["/far-fresh"] == (JobState.QUEUED, "")
    for path in ("/dead", "/far-stale", "/legacy"):
        assert state[path] == (JobState.PAUSED, INTERRUPTED), path
    assert again.lanes_to_start() == ["a"]  # this process's own queued jobs only
    q.shutdown(0.1)
    lane.close()
    assert store.db.execute(
        "SELECT state FROM transfer_jobs WHERE id = ?", [running.id]
    ).fetchone()[0] == "paused"
    assert live.id is not None


def test_a_process_claims_only_the_jobs_it_queued(store) -> None:
    q = _queue(store, CountingEngine(hold=0))
    theirs = q.add(TransferJob("a", "upload", "/theirs", "x"))
    _set_owner(store, theirs.id, this_owner() + "0", this_machine(), time.time())
    mine = q.add(TransferJob("a", "upload", "/mine", "x"))
    q.run_until_idle(10)
    assert q.get(mine.id).state is JobState.DONE
    assert q.get(theirs.id).state is JobState.QUEUED


@pytest.mark.parametrize("action", ["resume", "retry"])
def test_resuming_or_retrying_makes_this_process_the_owner(store, action: str) -> None:
    q = _queue(store, CountingEngine(hold=0))
    job = q.add(TransferJob("a", "upload", "/1", "x"))
    q.pause(job.id)
    _set_owner(store, job.id, "gone:1:1", this_machine(), None)
    if action == "retry":
        q.cancel(job.id)
    getattr(q, action)(job.id)
    q.run_until_idle(10)
    assert q.get(job.id).state is JobState.DONE
