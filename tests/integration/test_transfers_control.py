"""Pause, cancel (keeping or discarding partial data), delete preview, checkpoint sync, browsing."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.transfers.job import PARTIAL_DIR, JobState, TransferJob, TransferOptions
from gpu_companion.core.transfers.presets import sync_checkpoints
from gpu_companion.core.transfers.remote_browse import list_remote_dir
from tests.integration.transfer_helpers import tree_hashes

pytestmark = pytest.mark.sshd
SIZE = 3_000_000


def _run_until(queue, job_id: int, fraction: float) -> threading.Thread:  # type: ignore[no-untyped-def]
    t = threading.Thread(target=queue.run_until_idle, args=(60,), daemon=True)
    t.start()
    deadline = time.monotonic() + 20
    while queue.get(job_id).bytes_done < SIZE * fraction and time.monotonic() < deadline:
        time.sleep(0.05)
    return t


def test_pause_keeps_partial_data_and_resume_finishes(tmp_path: Path, shipped_transfers) -> None:
    local, remote = tmp_path / "local", tmp_path / "remote"
    local.mkdir()
    (local / "w.bin").write_bytes(os.urandom(SIZE))
    queue = shipped_transfers.queue
    job = queue.add(
        TransferJob(
            "gpu-test", "upload", str(local), str(remote), TransferOptions(bwlimit_kbps=2000)
        )
    )
    t = _run_until(queue, job.id, 0.4)
    queue.pause(job.id)
    t.join(20)
    paused = queue.get(job.id)
    assert paused.state is JobState.PAUSED and paused.message.startswith("Paused")
    assert (remote / PARTIAL_DIR / "w.bin").stat().st_size > SIZE * 0.3
    queue.resume(job.id)
    queue.run_until_idle(60)
    done = queue.get(job.id)
    assert done.state is JobState.DONE and done.verified
    assert done.bytes_sent <= 1.1 * SIZE


@pytest.mark.parametrize("keep", [True, False])
def test_cancel_keeps_or_discards_partial_data(
    keep: bool, tmp_path: Path, shipped_transfers
) -> None:
    local, remote = tmp_path / "local", tmp_path / "remote"
    local.mkdir()
    (local / "w.bin").write_bytes(os.urandom(SIZE))
    queue = shipped_transfers.queue
    job = queue.add(
        TransferJob(
            "gpu-test", "upload", str(local), str(remote), TransferOptions(bwlimit_kbps=2000)
        )
    )
    t = _run_until(queue, job.id, 0.1)
    queue.cancel(job.id, keep_partial=keep)
    t.join(20)
    assert queue.get(job.id).state is JobState.CANCELLED
    assert (remote / PARTIAL_DIR / "w.bin").exists() is keep


def test_delete_needs_a_preview_that_lists_what_goes(tmp_path: Path, shipped_transfers) -> None:
    local, remote = tmp_path / "local", tmp_path / "remote"
    local.mkdir()
    remote.mkdir()
    (local / "keep.txt").write_text("k")
    (remote / "stale ckpt.pt").write_text("old")
    queue = shipped_transfers.queue
    unpreviewed = TransferJob(
        "gpu-test", "upload", str(local), str(remote), TransferOptions(delete=True)
    )
    job = queue.add(unpreviewed)
    queue.run_until_idle(30)
    refused = queue.get(job.id)
    assert refused.state is JobState.FAILED and "preview" in refused.message
    assert (remote / "stale ckpt.pt").exists()

    preview = queue.engine.preview_delete(unpreviewed, shipped_transfers.host)
    assert preview == ["stale ckpt.pt"]
    assert (remote / "stale ckpt.pt").exists()  # a preview changes nothing
    ok = queue.add(
        TransferJob(
            "gpu-test",
            "upload",
            str(local),
            str(remote),
            TransferOptions(delete=True, delete_previewed=True),
        )
    )
    queue.run_until_idle(30)
    assert queue.get(ok.id).verified
    assert sorted(p.name for p in remote.iterdir()) == ["keep.txt"]


def test_sync_checkpoints_is_incremental_and_verified(tmp_path: Path, shipped_transfers) -> None:
    out = tmp_path / "remote" / "outputs"
    out.mkdir(parents=True)
    (out / "step-100.pt").write_bytes(os.urandom(300_000))
    (out / "run.log.tmp").write_text("scratch")
    backup = tmp_path / "backup"
    queue = shipped_transfers.queue
    first = sync_checkpoints(queue, shipped_transfers.host, str(out), str(backup))
    queue.run_until_idle(30)
    assert queue.get(first.id).verified
    assert sorted(p.name for p in backup.iterdir()) == ["step-100.pt"]
    (out / "step-200.pt").write_bytes(os.urandom(300_000))
    (out / "step-100.pt").unlink()  # rotated away on the instance: the backup keeps it
    second = sync_checkpoints(queue, shipped_transfers.host, str(out), str(backup))
    queue.run_until_idle(30)
    done = queue.get(second.id)
    assert done.verified and done.label.startswith("Sync checkpoints")
    assert sorted(p.name for p in backup.iterdir()) == ["step-100.pt", "step-200.pt"]
    assert done.bytes_sent < 400_000  # only the new checkpoint crossed the wire
    assert tree_hashes(backup)["step-200.pt"] == tree_hashes(out)["step-200.pt"]


def test_remote_listing_folders_first_and_unreadable_path(
    tmp_path: Path, shipped_transfers
) -> None:
    base = tmp_path / "r"
    (base / "b dir").mkdir(parents=True)
    (base / "A-dir").mkdir()
    (base / "file.txt").write_text("x")
    connect, host = shipped_transfers.client_factory, shipped_transfers.host
    path, entries = list_remote_dir(connect, host, str(base))
    assert path == str(base)
    assert [e.name for e in entries] == ["A-dir", "b dir"]
    _, everything = list_remote_dir(connect, host, str(base), dirs_only=False)
    assert [e.name for e in everything] == ["A-dir", "b dir", "file.txt"]
    with pytest.raises(UserError, match="Cannot list"):
        list_remote_dir(connect, host, str(base / "missing"))


def test_progress_while_paused_and_after_resume_is_true(tmp_path: Path, shipped_transfers) -> None:
    """The total is the upload's real size from the start (not rsync's percent estimate), the
    paused job shows what reached the host, and the resumed job never shows less than that
    (rsync counts from 0 again while the partial data is reused)."""
    import threading

    local, remote = tmp_path / "local", tmp_path / "remote"
    local.mkdir()
    (local / "w.bin").write_bytes(os.urandom(SIZE))
    (local / "v.bin").write_bytes(os.urandom(SIZE // 2))
    exact = SIZE + SIZE // 2
    queue = shipped_transfers.queue
    job = queue.add(
        TransferJob(
            "gpu-test", "upload", str(local), str(remote), TransferOptions(bwlimit_kbps=2000)
        )
    )
    t = _run_until(queue, job.id, 0.4)
    queue.pause(job.id)
    t.join(20)
    paused = queue.get(job.id)
    assert paused.state is JobState.PAUSED and paused.bytes_total == exact
    assert paused.percent == int(paused.bytes_done * 100 / exact) and paused.bytes_done > 0
    queue.resume(job.id)
    seen = []
    lane = threading.Thread(target=queue.run_until_idle, args=(60,))
    lane.start()
    while lane.is_alive():
        now = queue.get(job.id)
        seen.append((now.bytes_done, now.bytes_total))
        time.sleep(0.05)
    assert queue.get(job.id).state is JobState.DONE
    assert all(total == exact for _done, total in seen), seen
    done_values = [d for d, _total in seen]
    assert min(done_values) >= paused.bytes_done, seen  # never back below the paused point
    assert done_values == sorted(done_values), seen
