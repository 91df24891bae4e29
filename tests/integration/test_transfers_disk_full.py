"""A download into a disk that fills up: the job fails at once, clearly, and stays failed.

The local destination is a small tmpfs (2 MiB), so the disk really fills: ENOSPC from the kernel,
not a mock. Both engines (SFTP and rsync) must end the job failed with a message that names the
folder and says what to do, without the retry loop meant for dropped connections; files that
arrived before, and files that were there before, stay. A host whose file never ends (listed at
10 bytes, reads that keep returning data) is read up to its listed size and no further.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpu_companion.core.transfers.job import PARTIAL_DIR, JobState, TransferJob
from gpu_companion.core.transfers.queue import TransferQueue
from tests.conftest import missing_component
from tests.integration.test_transfers_hostile import _server as hostile_server

TMPFS_BYTES = 2 * 1024 * 1024
MESSAGE_RE = re.compile(
    r"The disk holding (?P<folder>.+) is full: free space there "
    r"\((?P<needed>\d+) MiB needed, (?P<free>\d+) MiB free\), then retry the transfer\."
)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs of its own (needs root; skipped with the reason outside CI, fails in CI)."""
    mnt = tmp_path / "small disk"
    mnt.mkdir()
    if os.geteuid() != 0:
        missing_component("mounting a small tmpfs needs root")
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_BYTES}", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        missing_component(f"cannot mount a tmpfs: {proc.stderr.strip()}")
    try:
        yield mnt
    finally:
        if subprocess.run(["umount", str(mnt)], capture_output=True, check=False).returncode:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True, check=False)


def _remote_tree(root: Path) -> Path:
    """`a.bin` fits, `big.bin` (3 MB) does not, `z.txt` comes after it."""
    root.mkdir(parents=True)
    (root / "a.bin").write_bytes(os.urandom(300_000))
    (root / "big.bin").write_bytes(os.urandom(3_000_000))
    (root / "z.txt").write_bytes(b"new notes\n")
    return root


def _renters_files(dest: Path) -> dict[str, bytes]:
    """Files the renter had in the folder before the download: one the host also has."""
    dest.mkdir(parents=True, exist_ok=True)
    before = {"mine.txt": b"my own notes\n", "z.txt": b"old notes, mine\n"}
    for name, data in before.items():
        (dest / name).write_bytes(data)
    return before


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _run_lane(queue: TransferQueue, alias: str) -> list[str]:
    """Runs the host's lane here and returns every message the job showed on the way."""
    return [job.message for job in queue.run_lane(alias)]


def _no_local_rsync(tmp_path: Path) -> str:
    """A PATH with ssh only: this computer has no rsync, so SFTP runs."""
    bare = tmp_path / "bare-bin"
    bare.mkdir(exist_ok=True)
    os.symlink(shutil.which("ssh") or "/usr/bin/ssh", bare / "ssh")
    return str(bare)


def _check_disk_full_message(message: str, dest: Path) -> re.Match[str]:
    m = MESSAGE_RE.search(message)
    assert m is not None, message
    assert m.group("folder") == str(dest)
    assert "Connection" not in message and "Gave up" not in message, message
    return m


@pytest.mark.sshd
def test_an_sftp_download_into_a_full_disk_fails_once_with_what_to_do(
    tmp_path: Path, shipped_transfers, small_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = _remote_tree(tmp_path / "remote")
    dest = small_disk / "run 7"
    before = _renters_files(dest)
    connects: list[object] = []
    sessions = shipped_transfers.services.sessions
    connect = sessions.connect

    def counting_connect(host: Any, *args: Any, **kwargs: Any) -> Any:  # a spy, then the app's
        connects.append(host)
        return connect(host, *args, **kwargs)

    monkeypatch.setattr(sessions, "connect", counting_connect)  # before the queue is built
    queue = shipped_transfers.queue_on_path(_no_local_rsync(tmp_path))
    job = queue.add(TransferJob("gpu-test", "download", str(dest), str(remote)))
    messages = _run_lane(queue, "gpu-test")

    done = queue.get(job.id)
    assert done.engine == "sftp"
    assert done.state is JobState.FAILED, done.message  # in the queue, not left "running"
    m = _check_disk_full_message(done.message, dest)
    assert not any(msg.startswith("Connection dropped") for msg in messages), messages
    assert len(connects) == 1  # one attempt: no retry, no verification
    # big.bin (2.9 MiB) and z.txt are still to come; what is free is the disk less a.bin
    assert int(m.group("needed")) == 3
    assert int(m.group("free")) == shutil.disk_usage(small_disk).free // (1024 * 1024) >= 1
    # what arrived stays, the renter's files are untouched, the file that did not fit is gone
    assert _digest(dest / "a.bin") == _digest(remote / "a.bin")
    assert {n: (dest / n).read_bytes() for n in before} == before
    assert not (dest / "big.bin").exists() and not (dest / PARTIAL_DIR).exists()
    assert sorted(os.listdir(dest)) == ["a.bin", "mine.txt", "z.txt"]

    # the renter frees space (here: a bigger disk is not possible, so the big file goes away on
    # the host) and retries: the job finishes, a.bin is not fetched again
    (remote / "big.bin").unlink()
    queue.retry(job.id)
    _run_lane(queue, "gpu-test")
    again = queue.get(job.id)
    assert again.state is JobState.DONE and again.verified, again.message
    assert (dest / "z.txt").read_bytes() == b"new notes\n"


@pytest.mark.sshd
def test_an_rsync_download_into_a_full_disk_fails_once_with_what_to_do(
    tmp_path: Path, shipped_transfers, small_disk: Path
) -> None:
    remote = _remote_tree(tmp_path / "remote")
    dest = small_disk / "run 8"
    before = _renters_files(dest)
    real_rsync = shutil.which("rsync")
    assert real_rsync is not None
    wrapper = tmp_path / "counting-bin"  # an `rsync` first on PATH that logs each run
    wrapper.mkdir()
    log = tmp_path / "rsync-runs.log"
    (wrapper / "rsync").write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real_rsync}" "$@"\n'
    )
    (wrapper / "rsync").chmod(0o755)
    queue = shipped_transfers.queue_on_path(f"{wrapper}:{os.environ.get('PATH', os.defpath)}")
    job = queue.add(TransferJob("gpu-test", "download", str(dest), str(remote)))
    messages = _run_lane(queue, "gpu-test")

    done = queue.get(job.id)
    assert done.engine == "rsync"
    assert done.state is JobState.FAILED, done.message
    m = _check_disk_full_message(done.message, dest)
    assert "rsync exit code 11" in done.message  # rsync's own words stay for the log
    assert not any(msg.startswith("Connection dropped") for msg in messages), messages
    runs = [line for line in log.read_text().splitlines() if "--info=progress2" in line]
    transfers = [line for line in runs if "--dry-run" not in line]
    assert len(transfers) == 1, runs  # one attempt: no retry loop
    assert int(m.group("needed")) == 3  # big.bin in full (its partial was given back) + z.txt
    assert int(m.group("free")) == shutil.disk_usage(small_disk).free // (1024 * 1024) >= 1
    assert _digest(dest / "a.bin") == _digest(remote / "a.bin")
    assert {n: (dest / n).read_bytes() for n in before} == before
    assert not (dest / "big.bin").exists() and not (dest / PARTIAL_DIR).exists()
    assert not [n for n in os.listdir(dest) if n.startswith(".big.bin.")]  # no temp file left


def test_a_file_that_never_ends_is_read_up_to_its_listed_size(
    tmp_path: Path, ship, small_disk: Path
) -> None:
    """Listed at 10 bytes, its reads keep returning data: 10 bytes arrive, the job is done, and
    the host was never asked for more (a disk of any size cannot be filled this way)."""
    server = hostile_server(tmp_path, ())
    server.endless["/data/endless.bin"] = 10
    try:
        queue = ship(server).queue
        dest = small_disk / "dl"
        job = queue.add(TransferJob("gpu-test", "download", str(dest), "/data"))
        queue.run_until_idle(30)
        done = queue.get(job.id)
        assert done.state is JobState.DONE and done.verified, done.message
        assert (dest / "endless.bin").read_bytes() == b"\xee" * 10
        assert (dest / "ok.txt").read_bytes() == b"fine\n"
        assert server.served_up_to["/data/endless.bin"] <= 10
        assert shutil.disk_usage(small_disk).free > TMPFS_BYTES // 2
    finally:
        server.stop()
