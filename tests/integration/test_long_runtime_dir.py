"""A long XDG_RUNTIME_DIR (40 characters; /run/user/<10-digit uid> is as long) must not break the
app's OpenSSH transfers: the shared-connection socket (ControlPath) would pass the socket length
limit there, so the app's runtime folder goes where the longest socket fits, and an upload
through the app's own ssh config, agent and queue finishes and is verified."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from gpu_companion.core.transfers.job import JobState, TransferJob

pytestmark = [pytest.mark.sshd, pytest.mark.keyring]


@pytest.fixture
def long_runtime_dir(monkeypatch):  # type: ignore[no-untyped-def]
    base = tempfile.mkdtemp(prefix="xdg-", dir="/tmp")
    path = Path(base) / ("r" * (40 - len(base) - 1))
    path.mkdir(mode=0o700)
    assert len(str(path)) == 40
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(path))  # before the fleet's app starts its agent
    yield path
    import shutil

    shutil.rmtree(base, ignore_errors=True)


def test_an_upload_with_a_40_character_runtime_dir_finishes(long_runtime_dir, fleet, tmp_path):
    s = fleet.services
    runtime = s.runtime_paths
    longest = f"{runtime.control_dir}/{'0' * 40}.{'x' * 16}"  # what ssh binds for ControlPath
    assert len(os.fsencode(longest)) <= 107
    src = tmp_path / "data"
    src.mkdir()
    (src / "weights.bin").write_bytes(os.urandom(256 * 1024))
    job = s.transfers.add(TransferJob("box-a", "upload", str(src), str(tmp_path / "remote")))
    s.transfers.run_until_idle(60)
    done = s.transfers.get(job.id)
    assert done.state is JobState.DONE and done.verified, done.message
    assert done.engine == "rsync"  # OpenSSH, through the managed config's ControlPath
    assert (tmp_path / "remote" / "weights.bin").read_bytes() == (src / "weights.bin").read_bytes()
