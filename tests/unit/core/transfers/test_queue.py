"""Queue rules with an engine double: order per host, parallel hosts, states, restart."""

from __future__ import annotations

import threading
import time
from collections.abc import Generator

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
from gpu_companion.core.transfers.queue import INTERRUPTED, TransferQueue

HOSTS = {a: Host(alias=a, hostname="h") for a in ("a", "b")}


class ScriptedEngine:
    """Records the order jobs ran in; each job takes `hold` seconds unless paused."""

    def __init__(self, hold: float = 0.0) -> None:
        self.ran: list[tuple[str, str, float]] = []
        self.hold = hold

    def run(
        self, job: TransferJob, host: Host, control: TransferControl
    ) -> Generator[EngineEvent, None, TransferOutcome]:
        self.ran.append((host.alias, job.local_path, time.monotonic()))
        yield EngineChosen("rsync", "test")
        yield TransferProgress(5, 10, 1.0, 5, "f")
        if control.wait(self.hold):
            return TransferOutcome(control.stop_requested or "paused")
        yield TransferProgress(10, 10, 1.0, 0, "f")
        return TransferOutcome("done", verified=True, bytes_sent=10)

    def discard_partial(self, job: TransferJob, host: Host) -> None:
        self.discarded = job.id


def _queue(store, engine) -> TransferQueue:  # type: ignore[no-untyped-def]
    return TransferQueue(store, engine, HOSTS.get, save_every_s=0)  # type: ignore[arg-type]


def test_jobs_of_one_host_run_in_order_hosts_in_parallel(store) -> None:
    engine = ScriptedEngine(hold=0.3)
    q = _queue(store, engine)
    for alias, path in [("a", "/1"), ("a", "/2"), ("b", "/3")]:
        q.add(TransferJob(alias, "upload", path, "x"))
    assert q.lanes_to_start() == ["a", "b"]
    q.run_until_idle(10)
    order_a = [p for a, p, _ in engine.ran if a == "a"]
    assert order_a == ["/1", "/2"]
    starts = {p: t for _, p, t in engine.ran}
    assert abs(starts["/3"] - starts["/1"]) < 0.25  # b did not wait for a
    assert all(j.state is JobState.DONE and j.verified for j in q.jobs())


def test_one_lane_per_host(store) -> None:
    q = _queue(store, ScriptedEngine(hold=0.2))
    q.add(TransferJob("a", "upload", "/1", "x"))
    first = q.run_lane("a")
    assert next(first).state is JobState.RUNNING
    assert list(q.run_lane("a")) == []  # a second lane for the same host returns at once
    assert q.lanes_to_start() == []
    for _ in first:
        pass


def test_restart_brings_unfinished_jobs_back_paused_with_progress(store) -> None:
    q = _queue(store, ScriptedEngine(hold=5))
    job = q.add(TransferJob("a", "upload", "/1", "x"))
    queued = q.add(TransferJob("a", "upload", "/2", "x"))
    lane = q.run_lane("a")
    while (snap := next(lane)).bytes_done < 5:
        pass
    assert snap.state is JobState.RUNNING
    with store.transaction() as db:  # the process that queued and ran them "died"
        db.execute("UPDATE transfer_jobs SET owner = 'an-earlier-boot:4242:1'")
    again = _queue(store, ScriptedEngine())  # a new app on the same store
    back = again.get(job.id)
    assert back.state is JobState.PAUSED and back.bytes_done == 5 and back.message == INTERRUPTED
    assert again.get(queued.id).state is JobState.PAUSED
    lane.close()  # the old lane stops its engine: paused, progress kept
    assert q.get(job.id).state is JobState.PAUSED


def test_pause_resume_cancel_retry_transitions(store) -> None:
    engine = ScriptedEngine(hold=5)
    q = _queue(store, engine)
    job = q.add(TransferJob("a", "upload", "/1", "x"))
    q.pause(job.id)
    assert q.get(job.id).state is JobState.PAUSED
    q.resume(job.id)
    assert q.get(job.id).state is JobState.QUEUED
    t = threading.Thread(target=q.run_until_idle, args=(10,))
    t.start()
    while q.get(job.id).state is not JobState.RUNNING:
        time.sleep(0.01)
    q.cancel(job.id, keep_partial=False)
    t.join(5)
    got = q.get(job.id)
    assert got.state is JobState.CANCELLED and got.finished_at
    assert engine.discarded == job.id
    q.retry(job.id)
    engine.hold = 0
    q.run_until_idle(10)
    assert q.get(job.id).state is JobState.DONE


def test_unknown_host_is_refused_and_missing_host_fails_the_job(store) -> None:
    import pytest

    from gpu_companion.core.common.errors import ValidationError

    q = _queue(store, ScriptedEngine())
    with pytest.raises(ValidationError, match="No host"):
        q.add(TransferJob("zzz", "upload", "/1", "x"))
    job = q.add(TransferJob("a", "upload", "/1", "x"))
    HOSTS.pop("a")
    try:
        q.run_until_idle(5)
    finally:
        HOSTS["a"] = Host(alias="a", hostname="h")
    assert q.get(job.id).state is JobState.FAILED


def test_shutdown_pauses_the_running_job_and_starts_no_other(store) -> None:
    q = _queue(store, ScriptedEngine(hold=5))
    first = q.add(TransferJob("a", "upload", "/1", "x"))
    second = q.add(TransferJob("a", "upload", "/2", "x"))
    t = threading.Thread(target=q.run_until_idle, args=(10,))
    t.start()
    while q.get(first.id).state is not JobState.RUNNING:
        time.sleep(0.01)
    q.shutdown(5)
    t.join(5)
    assert q.get(first.id).state is JobState.PAUSED
    assert q.get(second.id).state is JobState.QUEUED  # paused by the next start's recovery


def test_last_verified_download_is_the_newest_verified_download_of_that_host(store):
    from datetime import datetime, timezone

    clock = iter([100.0, 200.0, 300.0, 400.0, 500.0] + [600.0] * 50)
    queue = TransferQueue(store, ScriptedEngine(), HOSTS.get, clock=lambda: next(clock))
    assert queue.last_verified_download("a") is None
    queue.add(TransferJob("a", "download", "/tmp/x", "ckpt"))
    queue.add(TransferJob("a", "upload", "/tmp/y", "data"))
    queue.add(TransferJob("b", "download", "/tmp/z", "ckpt"))
    queue.run_until_idle(10)
    a_download = next(j for j in queue.jobs() if j.host_alias == "a" and j.direction == "download")
    assert a_download.verified
    expected = datetime.fromtimestamp(a_download.finished_at, timezone.utc)
    assert queue.last_verified_download("a") == expected
    assert queue.last_verified_download("nobody") is None
