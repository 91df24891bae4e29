"""Quitting the app mid-transfer (a real killed process) and starting again: paused, resumable."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gpu_companion.core.storage.store import Store
from gpu_companion.core.transfers.job import JobState, TransferJob, TransferOptions
from tests.conftest import REPO
from tests.integration.transfer_helpers import tree_hashes

pytestmark = pytest.mark.sshd
SIZE = 3_000_000


def test_killed_app_comes_back_paused_and_resumes(tmp_path: Path, shipped_transfers) -> None:
    # A download: the killed receiver is local, so this also covers salvaging its temp file.
    direction = "download"
    local, remote = tmp_path / "local", tmp_path / "remote"
    src = remote
    src.mkdir()
    (src / "ckpt-0001.pt").write_bytes(os.urandom(SIZE))
    app_paths = shipped_transfers.app_paths
    queue = shipped_transfers.queue
    job = queue.add(
        TransferJob(
            "gpu-test", direction, str(local), str(remote), TransferOptions(bwlimit_kbps=2000)
        )
    )
    queue.pause(job.id)  # queued by this (live) process: the "app" below resumes it as its own
    shipped_transfers.quit()  # this app closes; the next one (a process of its own) runs it

    app = subprocess.Popen(  # the app as shipped, from the same data dir, keyring and config
        [sys.executable, "-m", "tests.integration.transfer_helpers"],
        cwd=REPO,
        start_new_session=True,
        stdout=subprocess.PIPE,
    )
    try:
        assert app.stdout is not None and app.stdout.readline() == b"running\n"
        watch = Store(app_paths.database)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            row = watch.db.execute(
                "SELECT bytes_done FROM transfer_jobs WHERE id = ?", [job.id]
            ).fetchone()
            if row[0] >= SIZE * 0.4:
                break
            time.sleep(0.05)
        watch.close()
    finally:
        os.killpg(app.pid, signal.SIGKILL)  # the app and its rsync and ssh, no goodbye
        app.wait(10)
        app.stdout.close()

    queue = shipped_transfers.restart()  # the app starts again
    back = queue.get(job.id)
    assert back.state is JobState.PAUSED
    assert SIZE * 0.3 <= back.bytes_done < SIZE
    assert "resume" in back.message
    queue.resume(job.id)
    queue.run_until_idle(60)
    done = queue.get(job.id)
    assert done.state is JobState.DONE and done.verified, done.message
    assert tree_hashes(local) == tree_hashes(remote)
    assert done.bytes_sent - back.bytes_sent <= 1.1 * (SIZE - back.bytes_done) + 200_000
