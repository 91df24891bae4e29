"""Interrupted transfers resume from their partial data: a SIGKILL, a cut SSH connection."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from gpu_companion.core.transfers.job import JobState, TransferJob, TransferOptions
from tests.integration.transfer_helpers import tree_hashes

pytestmark = pytest.mark.sshd

SIZE = 3_000_000
BW = 2000  # KiB/s: about 1.5 s for the file


def _start(queue, job):  # type: ignore[no-untyped-def]
    t = threading.Thread(target=queue.run_until_idle, args=(60,), daemon=True)
    t.start()
    return t


def _wait_half(queue, job_id: int) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        j = queue.get(job_id)
        if j.bytes_done >= SIZE * 0.4:
            return
        time.sleep(0.05)
    raise AssertionError(f"no progress: {queue.get(job_id)}")


def _rsync_children() -> list[int]:
    out = subprocess.run(
        ["pgrep", "-P", str(os.getpid()), "-x", "rsync"], capture_output=True, text=True
    ).stdout
    return [int(p) for p in out.split()]


def test_sigkill_at_half_resumes_with_little_resent(tmp_path: Path, shipped_transfers) -> None:
    # An upload; the killed download (a local receiver) is in test_transfers_restart.
    direction = "upload"
    local, remote = tmp_path / "local", tmp_path / "remote"
    src = local if direction == "upload" else remote
    src.mkdir()
    (src / "model.safetensors").write_bytes(os.urandom(SIZE))
    queue = shipped_transfers.queue
    job = queue.add(
        TransferJob(
            "gpu-test", direction, str(local), str(remote), TransferOptions(bwlimit_kbps=BW)
        )
    )
    t = _start(queue, job)
    _wait_half(queue, job.id)
    pids = _rsync_children()
    assert pids
    for pid in pids:
        os.killpg(pid, signal.SIGKILL)
    t.join(30)
    killed = queue.get(job.id)
    assert killed.state is JobState.FAILED and "signal 9" in killed.message
    sent_before = killed.bytes_sent

    queue.retry(job.id)
    queue.run_until_idle(60)
    done = queue.get(job.id)
    assert done.state is JobState.DONE and done.verified, done.message
    resent = done.bytes_sent - sent_before
    assert 0 < resent <= 1.1 * (SIZE - killed.bytes_done * 0.9), (resent, killed.bytes_done)
    assert tree_hashes(local) == tree_hashes(remote)


def test_cut_connection_retries_without_a_click(tmp_path: Path, shipped_transfers) -> None:
    local, remote = tmp_path / "local", tmp_path / "remote"
    local.mkdir()
    (local / "data.bin").write_bytes(os.urandom(SIZE))
    queue = shipped_transfers.queue
    job = queue.add(
        TransferJob("gpu-test", "upload", str(local), str(remote), TransferOptions(bwlimit_kbps=BW))
    )
    t = _start(queue, job)
    _wait_half(queue, job.id)
    assert shipped_transfers.server.kill_sessions() >= 1
    t.join(60)
    done = queue.get(job.id)
    assert done.state is JobState.DONE and done.verified, done.message
    assert done.attempts == 1  # one run of the job: the retry happened inside it
    assert done.bytes_sent <= 1.1 * SIZE, done.bytes_sent
    assert tree_hashes(local) == tree_hashes(remote)
