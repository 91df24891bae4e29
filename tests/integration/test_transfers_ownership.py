# ruff: noqa: F811  (the `host` fixture is imported from the transfer CLI tests)
"""Jobs belong to the process that queued or runs them: real `gpu-companion transfer` processes
over the harness sshd. A second process leaves a live one's jobs alone; a `kill -9` leaves no
rsync behind, and the next process pauses only the dead one's job."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from gpu_companion.core.transfers.queue import INTERRUPTED
from tests.integration.test_transfer_cli import host  # noqa: F401

pytestmark = [pytest.mark.sshd, pytest.mark.keyring]

CLI = [sys.executable, "-m", "gpu_companion", "transfer"]


def _rows(database: Path) -> dict[str, tuple[int, str, int, str]]:
    """local path -> (id, state, bytes done, message) as the store has them now."""
    db = sqlite3.connect(database, timeout=30)
    try:
        rows = db.execute(
            "SELECT id, local_path, state, bytes_done, message FROM transfer_jobs"
        ).fetchall()
    finally:
        db.close()
    return {r[1]: (r[0], r[2], r[3], r[4]) for r in rows}


def _wait_for(what, timeout: float = 60):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("timed out")


def _running_with_bytes(database: Path, local: str) -> bool:
    row = _rows(database).get(local)
    return row is not None and row[1] == "running" and row[2] > 0


def _processes_naming(token: str) -> list[str]:
    """Command lines of every process (local rsync and ssh, the server's rsync) naming `token`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if token.encode() in cmdline:
            words = cmdline.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry.name}: {words}")
    return found


def _finish(proc: subprocess.Popen[str], sig: int | None = None, timeout: float = 90) -> str:
    try:
        if sig is not None:
            proc.send_signal(sig)
        _out, err = proc.communicate(timeout=timeout)
        return err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_a_second_process_leaves_the_first_ones_jobs_alone(
    host, app_paths, tmp_path: Path
) -> None:
    big, small, other = tmp_path / "big", tmp_path / "small", tmp_path / "other"
    for folder, size in ((big, 3_000_000), (small, 20_000), (other, 20_000)):
        folder.mkdir()
        (folder / "data.bin").write_bytes(os.urandom(size))
    # the "window": two jobs for one host, the first running (~7 s at 400 KiB/s), one queued
    first = subprocess.Popen(
        [*CLI, "upload", host, str(big), str(small), str(tmp_path / "r1"), "--bwlimit", "400"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        _wait_for(lambda: _running_with_bytes(app_paths.database, str(big)))
        before = _rows(app_paths.database)
        assert before[str(small)][1] == "queued"

        second = subprocess.run(
            [*CLI, "upload", host, str(other), str(tmp_path / "r2")],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert second.returncode == 0, second.stderr
        after = _rows(app_paths.database)
        assert after[str(other)][1] == "done"
        assert after[str(small)][1:] == ("queued", 0, ""), after  # not "paused: interrupted"
        assert after[str(big)][1] == "running" and after[str(big)][3] != INTERRUPTED, after
        assert first.poll() is None  # still at it

        err = _finish(first)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == 0, err  # both of its jobs done and verified
    final = _rows(app_paths.database)
    assert final[str(big)][1] == final[str(small)][1] == "done"


def test_kill_9_of_a_download_leaves_no_rsync_and_the_next_process_pauses_only_its_job(
    host, app_paths, tmp_path: Path
) -> None:
    token = f"killed-{uuid.uuid4().hex[:12]}"
    remote = tmp_path / token  # the path every rsync and ssh of the killed job names
    remote.mkdir()
    (remote / "ckpt.pt").write_bytes(os.urandom(4_000_000))  # ~20 s at 200 KiB/s
    alive_src = tmp_path / "alive"
    alive_src.mkdir()
    (alive_src / "data.bin").write_bytes(os.urandom(4_000_000))
    local = tmp_path / "local"

    # a live process with a running job of its own; the one killed below starts once it runs
    # and uses its ssh-agent (a command's own agent outliving a kill -9 is core/ssh/agent.py's)
    alive = subprocess.Popen(
        [*CLI, "upload", host, str(alive_src), str(tmp_path / "up"), "--bwlimit", "200"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    killed: subprocess.Popen[str] | None = None
    try:
        _wait_for(lambda: _running_with_bytes(app_paths.database, str(alive_src)))
        killed = subprocess.Popen(
            [*CLI, "download", host, str(remote), str(local), "--bwlimit", "200"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
            text=True,
        )  # fmt: skip
        _wait_for(lambda: _running_with_bytes(app_paths.database, str(local)))
        assert _processes_naming(token)  # its rsync (and ssh, and the server's rsync) run
        os.kill(killed.pid, signal.SIGKILL)  # the command only: no goodbye, no Ctrl-C
        killed.wait(10)
        deadline = time.monotonic() + 5
        while _processes_naming(token) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _processes_naming(token) == [], "rsync of the killed command still runs"
        assert _rows(app_paths.database)[str(local)][1] == "running"  # nobody said otherwise

        # the next process to open the queue
        code = (
            "import json\n"
            "from gpu_companion.services import build_services\n"
            "s = build_services()\n"
            "try:\n"
            "    print(json.dumps({j.local_path: [j.state.value, j.message]"
            " for j in s.transfers.jobs()}))\n"
            "finally:\n"
            "    s.close()\n"
        )
        opened = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
        )
        assert opened.returncode == 0, opened.stderr
        seen = json.loads(opened.stdout)
        assert seen[str(local)] == ["paused", INTERRUPTED]  # the dead command's job
        assert seen[str(alive_src)][0] == "running"  # the live command's job: untouched
        assert _rows(app_paths.database)[str(alive_src)][1] == "running"
        assert alive.poll() is None
        err = _finish(alive, signal.SIGINT)
        assert alive.returncode == 130, err
    finally:
        for proc in (alive, killed):
            if proc is not None and proc.poll() is None:
                proc.kill()
            if proc is not None:
                proc.communicate()
    assert _rows(app_paths.database)[str(alive_src)][1] == "paused"
