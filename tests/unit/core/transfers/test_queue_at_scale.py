"""A year of transfers (issue 30: the queue read its whole table on the GUI thread, 0.5 s at
20,000 jobs): the page's reads are index look-ups or stop after the newest rows."""

from __future__ import annotations

from datetime import datetime, timezone

from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.transfers.job import JobState
from gpu_companion.core.transfers.queue import TransferQueue

HOSTS = {a: Host(alias=a, hostname="h") for a in ("a", "b")}


def _fill(store, finished: int) -> None:  # type: ignore[no-untyped-def]
    """`finished` finished jobs (every third a verified download of "a"), then one queued,
    one paused and one running job in between."""
    rows = []
    for i in range(finished):
        state = ("done", "failed", "cancelled")[i % 3] if i % 10 else "done"
        rows.append(("a" if i % 2 else "b", "download" if i % 3 == 0 else "upload", state,
                     int(state == "done"), 1000.0 + i))  # fmt: skip
    rows[5:5] = [("a", "upload", s, 0, None) for s in ("queued", "paused", "running")]
    with store.transaction() as db:
        db.conn.executemany(
            "INSERT INTO transfer_jobs (host_alias, direction, local_path, remote_path, state, "
            "verified, created_at, finished_at, owner) VALUES (?, ?, '/l', '/r', ?, ?, 0, ?, "
            "'x:1:1')",
            rows,
        )


def _queue(store) -> TransferQueue:  # type: ignore[no-untyped-def]
    return TransferQueue(store, None, HOSTS.get)  # type: ignore[arg-type]


def test_recent_is_every_unfinished_job_and_the_newest_finished_ones(store):  # type: ignore[no-untyped-def]
    _fill(store, 500)
    q = _queue(store)
    everything = q.jobs()
    recent = q.recent(50)
    assert len(recent) == 53
    assert [j.id for j in recent] == sorted(j.id for j in recent)  # oldest first, as jobs()
    unfinished = [j for j in everything if not j.state.finished]
    assert [j.id for j in q.unfinished()] == [j.id for j in unfinished]
    assert {j.state for j in unfinished} == {JobState.PAUSED}  # the dead owner's: paused
    assert all(j in recent for j in unfinished)
    newest = sorted((j.id for j in everything if j.state.finished), reverse=True)[:50]
    assert sorted(j.id for j in recent if j.state.finished) == sorted(newest)
    assert q.count_finished() == 500


def test_history_and_last_backup_are_read_in_sql(store):  # type: ignore[no-untyped-def]
    _fill(store, 300)
    q = _queue(store)
    everything = q.jobs()
    finished = sorted((j for j in everything if j.state.finished),
                      key=lambda j: j.finished_at or 0, reverse=True)  # fmt: skip
    assert [j.id for j in q.history()] == [j.id for j in finished]
    assert [j.id for j in q.history(limit=7)] == [j.id for j in finished[:7]]
    for alias in ("a", "b"):
        times = [j.finished_at for j in everything if j.host_alias == alias and j.verified
                 and j.direction == "download" and j.finished_at]  # fmt: skip
        expect = datetime.fromtimestamp(max(times), timezone.utc) if times else None
        assert q.last_verified_download(alias) == expect
        assert [j.id for j in q.jobs(alias)] == [j.id for j in everything if j.host_alias == alias]
    assert q.last_verified_download("nobody") is None


def test_the_unfinished_jobs_are_found_in_the_state_index(store):  # type: ignore[no-untyped-def]
    q = _queue(store)
    said: list[str] = []
    store.db.conn.set_trace_callback(said.append)
    try:
        q.unfinished()
        q.count_finished()
    finally:
        store.db.conn.set_trace_callback(None)
    for sql in said:
        plan = " | ".join(r[3] for r in store.db.execute(f"EXPLAIN QUERY PLAN {sql}"))
        assert "transfer_jobs_state" in plan, plan  # never a read of every job
