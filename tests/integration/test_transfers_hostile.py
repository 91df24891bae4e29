"""A hostile host (a paramiko server with SFTP and no rsync, whose listings hold `../../x` and
`/abs/x`) cannot make a download write outside its folder: the job fails naming the entry."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from gpu_companion.core.transfers.job import JobState, TransferJob
from gpu_companion.core.transfers.remote_browse import list_remote_dir
from tests.harness.hostile_sftp import PAYLOAD, HostileSftpHost


def _server(tmp_path: Path, names: tuple[str, ...]) -> HostileSftpHost:
    server = HostileSftpHost(tmp_path / "host files", names).start()
    (server.files / "data").mkdir()
    (server.files / "data" / "ok.txt").write_bytes(b"fine\n")
    return server


@pytest.fixture
def hostile(tmp_path: Path, ship, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """The app's queue and host `gpu-test` on the hostile server, wired as shipped."""
    server = _server(tmp_path, request.param)
    try:
        yield ship(server)
    finally:
        server.stop()


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("hostile", "named"),
    [(("../../x", "/abs/x"), "'../../x'"), (("/abs/x",), "'/abs/x'"), (("a\0b",), "'a\\x00b'")],
    indirect=["hostile"],
)
def test_a_hostile_listing_cannot_write_outside_the_download_folder(
    tmp_path: Path, hostile, named: str
) -> None:
    out = tmp_path / "out"
    local = out / "deep" / "dl"
    queue = hostile.queue
    job = queue.add(TransferJob("gpu-test", "download", str(local), "/data"))
    queue.run_until_idle(60)
    done = queue.get(job.id)
    assert done.engine == "sftp"  # `rsync --version` answered 127: the SFTP fallback ran
    assert done.state is JobState.FAILED, done.message
    assert named in done.message and "unsafe name" in done.message
    assert files_under(out) == set()  # nothing at all, inside or out
    assert not Path("/abs/x").exists()
    assert not any(PAYLOAD in p.read_bytes() for p in tmp_path.rglob("x") if p.is_file())
    assert any(r.endswith("data") for r in hostile.server.requested)  # it was really listed


@pytest.mark.parametrize("hostile", [()], indirect=True)
def test_the_same_host_without_hostile_names_downloads(tmp_path: Path, hostile) -> None:
    local = tmp_path / "dl"
    queue = hostile.queue
    job = queue.add(TransferJob("gpu-test", "download", str(local), "/data"))
    queue.run_until_idle(60)
    done = queue.get(job.id)
    assert done.state is JobState.DONE and done.verified, done.message
    assert (local / "ok.txt").read_bytes() == b"fine\n"


@pytest.mark.parametrize("hostile", [()], indirect=True)
def test_a_link_in_the_download_folder_is_not_followed_out(tmp_path: Path, hostile) -> None:
    local = tmp_path / "dl"
    local.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere / "ok.txt", local / "ok.txt")  # e.g. left by an earlier rsync -a run
    queue = hostile.queue
    job = queue.add(TransferJob("gpu-test", "download", str(local), "/data"))
    queue.run_until_idle(60)
    done = queue.get(job.id)
    assert done.state is JobState.FAILED and "outside" in done.message, done.message
    assert files_under(elsewhere) == set()


@pytest.mark.parametrize("hostile", [("../../x", "/abs/x", "..", "a\0b")], indirect=True)
def test_the_remote_picker_leaves_unsafe_and_undecodable_names_out(hostile) -> None:
    (hostile.server.files / "data" / os.fsdecode(b"old-\xe9")).mkdir()
    (hostile.server.files / "data" / "runs").mkdir()
    path, entries = list_remote_dir(hostile.client_factory, hostile.host, "/data", dirs_only=False)
    assert path == "/data"
    assert [(e.name, e.path) for e in entries] == [
        ("runs", "/data/runs"),
        ("ok.txt", "/data/ok.txt"),
    ]


def test_a_size_the_host_lies_about_neither_hangs_nor_grows_memory(tmp_path: Path, ship) -> None:
    """1 PB listed for a 5-byte file: reads are pipelined a window at a time and end at the
    real end of file (paramiko's prefetch(size) would queue 3e10 requests first)."""
    server = _server(tmp_path, ())
    server.claim_size = 10**15
    try:
        queue = ship(server).queue
        job = queue.add(TransferJob("gpu-test", "download", str(tmp_path / "dl"), "/data"))
        started = time.monotonic()
        queue.run_until_idle(30)
        done = queue.get(job.id)
        assert time.monotonic() - started < 20
        assert done.state is JobState.DONE and done.verified, done.message
        assert (tmp_path / "dl" / "ok.txt").read_bytes() == b"fine\n"
    finally:
        server.stop()
