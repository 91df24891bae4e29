"""Upload and download with real rsync over the harness sshd: awkward names, verified."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gpu_companion.core.transfers.job import JobState, TransferJob, TransferOptions
from gpu_companion.core.transfers.presets import upload_options
from tests.integration.transfer_helpers import make_tree, tree_hashes

pytestmark = pytest.mark.sshd


def test_upload_then_download_awkward_names_end_verified(tmp_path: Path, shipped_transfers) -> None:
    src = make_tree(tmp_path / "src")
    (src / ".git").mkdir()
    (src / ".git" / "HEAD").write_text("ref")
    (src / "scratch.tmp").write_text("x")
    remote = tmp_path / "remote side" / "-data ünï"
    queue = shipped_transfers.queue
    up = queue.add(
        TransferJob("gpu-test", "upload", str(src), str(remote), options=upload_options())
    )
    queue.run_until_idle(60)
    done = queue.get(up.id)
    assert done.state is JobState.DONE, done.message
    assert done.verified and done.engine == "rsync"
    expected = {k: v for k, v in tree_hashes(src).items() if ".git" not in k and ".tmp" not in k}
    assert tree_hashes(remote) == expected
    assert done.bytes_total == sum(p.stat().st_size for p in remote.rglob("*") if p.is_file())

    back = tmp_path / "back here"
    down = queue.add(TransferJob("gpu-test", "download", str(back), str(remote)))
    queue.run_until_idle(120)  # a timeout says where the lane waits
    got = queue.get(down.id)
    assert got.state is JobState.DONE and got.verified, got.message
    assert tree_hashes(back) == expected
    assert [j.id for j in queue.history()] == [down.id, up.id]
    assert got.mean_rate_bps and got.active_s > 0


def test_flipped_byte_fails_verification(tmp_path: Path, shipped_transfers) -> None:
    src = make_tree(tmp_path / "src")
    remote = tmp_path / "remote"
    shutil.copytree(src, remote)  # an exact copy, times included, made without the engine
    queue = shipped_transfers.queue
    target = remote / "sub dir" / "-nested" / "weights.pt"
    data = bytearray(target.read_bytes())
    data[100] ^= 0xFF
    st = target.stat()
    target.write_bytes(bytes(data))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime: only a checksum
    # rsync -a skips the file (same size and time): the copy "succeeds", the checksum pass does not.
    job = queue.add(TransferJob("gpu-test", "upload", str(src), str(remote)))
    queue.run_until_idle(60)
    failed = queue.get(job.id)
    assert failed.state is JobState.FAILED and not failed.verified
    assert "Verification failed: 1 file(s) differ" in failed.message
    assert "sub dir/-nested/weights.pt" in failed.message


def test_missing_local_folder_fails_with_a_message(tmp_path: Path, shipped_transfers) -> None:
    queue = shipped_transfers.queue
    job = queue.add(
        TransferJob("gpu-test", "upload", str(tmp_path / "nope"), "x", TransferOptions())
    )
    queue.run_until_idle(30)
    got = queue.get(job.id)
    assert got.state is JobState.FAILED
    assert "exit code 23" in got.message or "missing" in got.message


def test_a_download_drops_setuid_setgid_and_group_other_write(
    tmp_path: Path, shipped_transfers
) -> None:
    remote = tmp_path / "remote"
    remote.mkdir()
    for name, mode in (("suid", 0o4777), ("sgid", 0o2775), ("plain", 0o640), ("tool", 0o755)):
        (remote / name).write_bytes(name.encode())
        os.chmod(remote / name, mode)
    local = tmp_path / "local"
    queue = shipped_transfers.queue
    job = queue.add(TransferJob("gpu-test", "download", str(local), str(remote)))
    queue.run_until_idle(60)
    done = queue.get(job.id)
    assert done.state is JobState.DONE and done.verified and done.engine == "rsync", done.message
    modes = {p.name: p.stat().st_mode & 0o7777 for p in local.iterdir()}
    assert modes == {"suid": 0o755, "sgid": 0o755, "plain": 0o640, "tool": 0o755}
