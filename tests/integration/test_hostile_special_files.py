"""Special files from a hostile host: rsync run as root (as these tests are) makes no device node
and keeps no owner from the host, and a download of a "file" that is /dev/zero or a fifo ends
at once instead of filling the disk (real sshd, rsync and the SFTP fallback)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gpu_companion.core.transfers.job import JobState, TransferJob, TransferOptions
from tests.integration.test_hostile_links_transfers import _no_rsync_on_host, _run

pytestmark = pytest.mark.sshd
STRANGER = 54321  # a uid no local user has


@pytest.mark.skipif(os.geteuid() != 0, reason="only root makes device nodes and chowns")
def test_rsync_as_root_makes_no_device_node_and_keeps_no_owner(
    tmp_path: Path, shipped_transfers
) -> None:
    host_dir = tmp_path / "host" / "data"
    host_dir.mkdir(parents=True)
    (host_dir / "ok.txt").write_bytes(b"fine\n")
    os.chown(host_dir / "ok.txt", STRANGER, STRANGER)
    os.mknod(host_dir / "disk", 0o644 | stat.S_IFBLK, os.makedev(7, 0))  # a loop device
    os.mknod(host_dir / "tty", 0o666 | stat.S_IFCHR, os.makedev(5, 0))
    queue = shipped_transfers.queue
    dl = tmp_path / "dl"
    down = _run(queue, TransferJob("gpu-test", "download", str(dl), str(host_dir)))
    assert down.state is JobState.DONE and down.engine == "rsync", down.message
    assert (dl / "ok.txt").read_bytes() == b"fine\n"
    st = (dl / "ok.txt").stat()
    assert (st.st_uid, st.st_gid) == (os.geteuid(), os.getegid())  # not the host's 54321
    assert not (dl / "disk").exists() and not (dl / "tty").exists()


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_an_sftp_download_of_an_endless_file_ends(
    tmp_path: Path, shipped_transfers, kind: str
) -> None:
    host_dir = tmp_path / "host"
    host_dir.mkdir()
    endless = host_dir / "weights.bin"
    if kind == "dev-zero":
        endless.symlink_to("/dev/zero")
    else:
        os.mkfifo(endless)
    _no_rsync_on_host(tmp_path, shipped_transfers)
    queue = shipped_transfers.queue
    dl = tmp_path / "dl"
    job = TransferJob(
        "gpu-test", "download", str(dl), str(endless), options=TransferOptions(source_is_dir=False)
    )
    done = _run(queue, job)
    assert done.state is JobState.DONE, (done.state, done.message)
    assert "weights.bin (not a regular file)" in done.message, done.message  # said, by name
    written = sum(p.stat().st_size for p in dl.rglob("*") if p.is_file()) if dl.exists() else 0
    assert written == 0, written  # nothing past the size the host listed (0)
