"""Links and special files from a hostile host: a download never makes a link out of its folder,
a device node or a fifo, and an upload never follows a link out of the chosen folder - so a
host's `notes.txt -> /root/secret` cannot carry a local secret anywhere (real sshd, rsync and
the SFTP fallback)."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from gpu_companion.core.transfers.job import JobState, TransferJob

pytestmark = pytest.mark.sshd
SECRET = b"TOP-SECRET-do-not-leave-this-machine\n"


def _hostile_folder(folder: Path, secret: Path) -> Path:
    """ok.txt, sub/inner.txt, an absolute link to the secret, a relative one climbing out to it,
    a link to /dev/zero, a fifo, and a link that stays inside."""
    (folder / "sub").mkdir(parents=True)
    (folder / "ok.txt").write_bytes(b"fine\n")
    (folder / "sub" / "inner.txt").write_bytes(b"inner\n")
    (folder / "notes.txt").symlink_to(secret)
    (folder / "sub" / "up.txt").symlink_to(Path("..") / ".." / ".." / secret.name)
    (folder / "zero").symlink_to("/dev/zero")
    os.mkfifo(folder / "fifo")
    (folder / "inside").symlink_to("sub/inner.txt")
    return folder


def _no_rsync_on_host(tmp_path: Path, target) -> None:  # type: ignore[no-untyped-def]
    fake = tmp_path / "no-rsync"
    fake.mkdir(parents=True)
    (fake / "rsync").write_text("#!/bin/sh\necho 'bash: rsync: command not found' >&2\nexit 127\n")
    (fake / "rsync").chmod(0o755)
    target.server.path_prefix.insert(0, fake)
    target.server.restart()


def _leaks(root: Path, outside: Path) -> list[str]:
    """Anything under `root` that holds the secret, is special, or is a link leaving `root`."""
    bad = []
    for p in root.rglob("*"):
        st = p.lstat()
        if stat.S_ISLNK(st.st_mode):
            if not p.resolve().is_relative_to(root.resolve()):
                bad.append(f"{p} -> {os.readlink(p)}")
        elif stat.S_ISREG(st.st_mode):
            if SECRET in p.read_bytes():
                bad.append(f"{p} holds the secret")
        elif not stat.S_ISDIR(st.st_mode):
            bad.append(f"{p} is special ({stat.filemode(st.st_mode)})")
    return bad


def _run(queue, job: TransferJob):  # type: ignore[no-untyped-def]
    added = queue.add(job)
    queue.run_until_idle(60)
    return queue.get(added.id)


@pytest.mark.parametrize("engine", ["rsync", "sftp"])
def test_a_hostile_folder_downloaded_then_uploaded_carries_no_secret(
    tmp_path: Path, shipped_transfers, engine: str
) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(SECRET)
    host_dir = _hostile_folder(tmp_path / "host" / "data", secret)
    if engine == "sftp":
        _no_rsync_on_host(tmp_path, shipped_transfers)
    queue = shipped_transfers.queue
    dl = tmp_path / "dl"
    down = _run(queue, TransferJob("gpu-test", "download", str(dl), str(host_dir)))
    assert down.state is JobState.DONE and down.engine == engine, down.message
    assert (dl / "ok.txt").read_bytes() == b"fine\n"
    assert (dl / "sub" / "inner.txt").read_bytes() == b"inner\n"
    assert _leaks(dl, secret) == []
    if engine == "sftp":  # said, by name
        assert "notes.txt" in down.message and "fifo" in down.message, down.message

    if engine == "rsync":  # the upload goes over SFTP either way
        _no_rsync_on_host(tmp_path, shipped_transfers)
    up_dir = tmp_path / "host" / "up"
    queue = shipped_transfers.restart()  # the app starts again: it learns the host has no rsync
    up = _run(queue, TransferJob("gpu-test", "upload", str(dl), str(up_dir)))
    assert up.state is JobState.DONE and up.engine == "sftp", up.message
    assert (up_dir / "ok.txt").read_bytes() == b"fine\n"
    assert _leaks(up_dir, secret) == []


def test_an_sftp_upload_never_follows_a_link_out_of_the_folder(
    tmp_path: Path, shipped_transfers
) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(SECRET)
    local = _hostile_folder(tmp_path / "mine" / "data", secret)
    _no_rsync_on_host(tmp_path, shipped_transfers)
    queue = shipped_transfers.queue
    up_dir = tmp_path / "host" / "up"
    up = _run(queue, TransferJob("gpu-test", "upload", str(local), str(up_dir)))
    assert up.state is JobState.DONE and up.engine == "sftp" and up.verified, up.message
    assert _leaks(up_dir, secret) == []
    assert os.readlink(up_dir / "inside") == "sub/inner.txt"  # a link inside stays a link
    assert not (up_dir / "notes.txt").exists() and not (up_dir / "zero").exists()
    for name in ("notes.txt", "sub/up.txt", "zero", "fifo"):
        assert name in up.message, up.message


def test_rsync_upload_skips_links_out_and_special_files(tmp_path: Path, shipped_transfers) -> None:
    secret = tmp_path / "secret"
    secret.write_bytes(SECRET)
    local = _hostile_folder(tmp_path / "mine" / "data", secret)
    queue = shipped_transfers.queue
    up_dir = tmp_path / "host" / "up"
    up = _run(queue, TransferJob("gpu-test", "upload", str(local), str(up_dir)))
    assert up.state is JobState.DONE and up.engine == "rsync", up.message
    assert _leaks(up_dir, secret) == []
    assert os.readlink(up_dir / "inside") == "sub/inner.txt"
    assert subprocess.run(["test", "-p", str(up_dir / "fifo")]).returncode != 0
