"""Where rsync is missing on one side, the SFTP engine does the job: resume by offset, verified."""

from __future__ import annotations

import os
import stat
import threading
import time
from pathlib import Path

import pytest

from gpu_companion.core.transfers.job import PARTIAL_DIR, JobState, TransferJob, TransferOptions
from tests.integration.transfer_helpers import make_tree, tree_hashes

pytestmark = pytest.mark.sshd
SIZE = 3_000_000


@pytest.fixture
def rsyncless_host(tmp_path: Path, shipped_transfers):  # type: ignore[no-untyped-def]
    """The app's host, whose PATH starts with an `rsync` that says it is not there (exit 127)."""
    fake = tmp_path / "no-rsync"
    fake.mkdir()
    (fake / "rsync").write_text("#!/bin/sh\necho 'bash: rsync: command not found' >&2\nexit 127\n")
    (fake / "rsync").chmod(0o755)
    shipped_transfers.server.path_prefix.insert(0, fake)
    shipped_transfers.server.restart()
    return shipped_transfers


def _pause_midway(queue, job_id: int) -> None:  # type: ignore[no-untyped-def]
    t = threading.Thread(target=queue.run_until_idle, args=(60,), daemon=True)
    t.start()
    deadline = time.monotonic() + 20
    while queue.get(job_id).bytes_done < SIZE * 0.4 and time.monotonic() < deadline:
        time.sleep(0.05)
    queue.pause(job_id)
    t.join(20)
    assert not t.is_alive()


def test_upload_without_remote_rsync_uses_sftp_and_resumes(tmp_path: Path, rsyncless_host) -> None:
    local = make_tree(tmp_path / "local", big=SIZE)
    remote = tmp_path / "remote dir" / "-x"
    queue = rsyncless_host.queue
    job = queue.add(
        TransferJob(
            "gpu-test", "upload", str(local), str(remote), TransferOptions(bwlimit_kbps=2000)
        )
    )
    _pause_midway(queue, job.id)
    paused = queue.get(job.id)
    assert paused.state is JobState.PAUSED and paused.engine == "sftp"
    partial = remote / PARTIAL_DIR / "big.bin"
    kept = partial.stat().st_size
    assert SIZE * 0.3 < kept < SIZE

    queue.resume(job.id)
    queue.run_until_idle(60)
    done = queue.get(job.id)
    assert done.state is JobState.DONE and done.verified and done.engine == "sftp", done.message
    assert tree_hashes(remote) == tree_hashes(local)
    assert done.bytes_sent <= SIZE + 20_000  # nothing sent twice: the resume began at the offset
    assert not (remote / PARTIAL_DIR).exists()


def test_download_without_local_rsync_uses_sftp(tmp_path: Path, shipped_transfers) -> None:
    remote = make_tree(tmp_path / "remote", big=200_000)
    local = tmp_path / "local"
    bare = tmp_path / "bare-bin"  # ssh only: this computer has no rsync
    bare.mkdir()
    os.symlink("/usr/bin/ssh", bare / "ssh")
    queue = shipped_transfers.queue_on_path(str(bare))
    job = queue.add(TransferJob("gpu-test", "download", str(local), str(remote)))
    queue.run_until_idle(60)
    done = queue.get(job.id)
    assert done.state is JobState.DONE and done.verified and done.engine == "sftp", done.message
    assert tree_hashes(local) == tree_hashes(remote)


def test_sftp_verification_catches_a_flipped_byte(tmp_path: Path, rsyncless_host) -> None:
    local = make_tree(tmp_path / "local")
    remote = tmp_path / "remote"
    queue = rsyncless_host.queue
    job = queue.add(TransferJob("gpu-test", "upload", str(local), str(remote)))
    queue.run_until_idle(60)
    assert queue.get(job.id).verified
    f = remote / "with space.txt"
    data = bytearray(f.read_bytes())
    data[0] ^= 1
    f.write_bytes(bytes(data))
    bad = queue.engine._verify(queue.get(job.id), rsyncless_host.host, "sftp")
    assert bad == ["with space.txt"]


def test_delete_is_refused_on_sftp_rather_than_skipped(tmp_path: Path, rsyncless_host) -> None:
    queue = rsyncless_host.queue
    opts = TransferOptions(delete=True, delete_previewed=True)
    job = queue.add(TransferJob("gpu-test", "upload", str(tmp_path), "x", opts))
    queue.run_until_idle(30)
    got = queue.get(job.id)
    assert got.state is JobState.FAILED and "needs rsync on both sides" in got.message


def _no_local_rsync(tmp_path: Path) -> str:
    """A PATH with ssh only: this computer has no rsync."""
    bare = tmp_path / "bare-bin"
    bare.mkdir(exist_ok=True)
    if not (bare / "ssh").exists():
        os.symlink("/usr/bin/ssh", bare / "ssh")
    return str(bare)


LATIN1 = os.fsdecode(b"caf\xe9 \xff.bin")  # not UTF-8: a name from an old Latin-1 host


def test_download_keeps_names_that_are_not_utf8_and_masks_modes(
    tmp_path: Path, shipped_transfers
) -> None:
    remote = tmp_path / "remote"
    remote.mkdir()
    for name, mode in ((LATIN1, 0o644), ("suid", 0o4777), ("shared", 0o2775), ("plain", 0o600)):
        (remote / name).write_bytes(name.encode("utf-8", "surrogateescape") * 10)
        os.chmod(remote / name, mode)
    local = tmp_path / "local"
    queue = shipped_transfers.queue_on_path(_no_local_rsync(tmp_path))
    job = queue.add(TransferJob("gpu-test", "download", str(local), str(remote)))
    queue.run_until_idle(60)
    done = queue.get(job.id)
    assert done.state is JobState.DONE and done.verified and done.engine == "sftp", done.message
    assert sorted(os.listdir(os.fsencode(local))) == sorted(os.listdir(os.fsencode(remote)))
    assert tree_hashes(local) == tree_hashes(remote)
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in local.iterdir()}
    assert modes == {LATIN1: 0o644, "suid": 0o755, "shared": 0o755, "plain": 0o600}


def test_upload_keeps_names_that_are_not_utf8(tmp_path: Path, rsyncless_host) -> None:
    local = tmp_path / "local"
    local.mkdir()
    (local / LATIN1).write_bytes(b"x" * 1000)
    remote = tmp_path / "remote"
    queue = rsyncless_host.queue
    job = queue.add(TransferJob("gpu-test", "upload", str(local), str(remote)))
    queue.run_until_idle(60)
    done = queue.get(job.id)
    assert done.state is JobState.DONE and done.verified and done.engine == "sftp", done.message
    assert os.listdir(os.fsencode(remote)) == [b"caf\xe9 \xff.bin"]
