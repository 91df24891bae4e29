"""`gpu-companion transfer ...` as a user's terminal runs it: the app's services, its managed ssh
config, the platform key from the keyring (in an ssh-agent), the host trusted by fingerprint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_companion.cli import main
from tests.integration.test_hosts_cli import fingerprint_of
from tests.integration.transfer_helpers import AWKWARD, make_tree, tree_hashes

pytestmark = [pytest.mark.sshd, pytest.mark.keyring]


def cli(capsys, *argv: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def host(app_paths, sshd, keyring_backend, ssh_agent, capsys, tmp_path):  # type: ignore[no-untyped-def]
    """gpu1 on the harness sshd, added and trusted through the CLI; its platform's key made by
    the vault and loaded into the session's agent (what "Load into ssh-agent" does)."""
    from gpu_companion.core.hosts.registry import Platform
    from gpu_companion.services import build_services

    name = f"cli-{os.getpid()}-{tmp_path.name}"
    services = build_services(app_paths)
    try:
        services.registry.save_platform(Platform(name))
        sshd.authorize(services.vault.generate(name).public_line)
        services.vault.load_into_agent(name, lifetime_s=600)
    finally:
        services.close()
    add = ["hosts", "add", "gpu1", "127.0.0.1", "--port", str(sshd.port), "--user", sshd.user]
    assert cli(capsys, *add, "--platform", name)[0] == 0
    assert cli(capsys, "hosts", "trust", "gpu1", "--fingerprint", fingerprint_of(sshd))[0] == 0
    yield "gpu1"
    services = build_services(app_paths)
    try:
        services.vault.delete(name)
    finally:
        services.close()


def test_a_tree_with_spaces_and_unicode_goes_up_and_comes_back_verified(
    host, tmp_path: Path, capsys
) -> None:
    local = make_tree(tmp_path / "my data ü")
    remote = tmp_path / "remote dir ✓"
    done = subprocess.run(
        [sys.executable, "-m", "gpu_companion", "transfer", "upload", host, str(local),
         str(remote), "--json"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    [job] = report["jobs"]
    assert report["exit"] == 0 and job["state"] == "done" and job["verified"] is True
    assert job["engine"] == "rsync"
    assert tree_hashes(remote) == tree_hashes(local)
    assert set(AWKWARD) <= set(tree_hashes(remote))
    assert f"#{job['id']} done: Verified." in done.stderr  # progress lines on a pipe

    back = tmp_path / "back here"
    code, out, err = cli(capsys, "transfer", "download", host, str(remote), str(back))
    assert code == 0, err
    assert out.startswith(f"#{job['id'] + 1}\tdone\tverified\tgpu1:{remote} -> {back}")
    assert tree_hashes(back) == tree_hashes(local)


def test_exit_codes_for_failed_partial_and_usage(host, tmp_path: Path, capsys) -> None:
    there = make_tree(tmp_path / "there")
    missing = tmp_path / "not there"
    dst = tmp_path / "dst"

    code, _, err = cli(capsys, "transfer", "download", host, str(there), str(missing), str(dst))
    assert code == 3
    assert "partial: 1 of 2 done; not done: #" in err and f" {missing} (failed: " in err
    assert tree_hashes(dst) == tree_hashes(there)

    single = tmp_path / "one file"
    code, _, err = cli(capsys, "transfer", "download", host, str(there / AWKWARD[1]), str(single),
                       "--file")  # fmt: skip
    assert code == 0, err
    assert tree_hashes(single) == {AWKWARD[1]: tree_hashes(there)[AWKWARD[1]]}

    code, out, err = cli(capsys, "transfer", "download", host, str(missing), str(dst), "--json")
    assert code == 1 and json.loads(out)["jobs"][0]["state"] == "failed"

    code, _, err = cli(capsys, "transfer", "upload", "nope", str(there), "x")
    assert code == 2 and "nope: no such active host" in err
    code, _, err = cli(capsys, "transfer", "upload", host, str(missing), "x")
    assert code == 2 and f"{missing} does not exist" in err
    code, _, err = cli(capsys, "transfer", "upload", host, str(there), "bad\x01name")
    assert code == 2 and "refused: The remote path has a control character" in err
    with pytest.raises(SystemExit) as usage:
        main(["transfer", "upload", host])
    assert usage.value.code == 2
    # refused jobs were never queued: the page shows only the three that ran
    from gpu_companion.services import build_services

    services = build_services()
    try:
        assert [j.state.value for j in services.transfers.jobs()] == [
            "done",
            "failed",
            "done",
            "failed",
        ]
    finally:
        services.close()


def test_ctrl_c_pauses_the_running_job_and_exits_130(host, app_paths, tmp_path: Path) -> None:
    import signal
    import sqlite3
    import time

    local = tmp_path / "slow"
    local.mkdir()
    (local / "big.bin").write_bytes(os.urandom(2_000_000))  # ~20 s at 100 KiB/s
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpu_companion", "transfer", "upload", host, str(local),
         str(tmp_path / "r"), "--bwlimit", "100"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        lines = []
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline and "rsync on both sides" not in "".join(lines):
            lines.append(proc.stderr.readline())
        db = sqlite3.connect(app_paths.database)
        try:  # bytes have arrived and were saved: the pause must keep them
            while (
                time.monotonic() < deadline
                and not db.execute(
                    "SELECT bytes_done FROM transfer_jobs WHERE bytes_done > 0"
                ).fetchall()
            ):
                time.sleep(0.2)
        finally:
            db.close()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted: running jobs are paused" in err
    assert "\tpaused\t" in out
    from gpu_companion.services import build_services

    services = build_services()
    try:
        [job] = services.transfers.jobs()
        assert job.state.value == "paused" and 0 < job.bytes_done < 2_000_000
    finally:
        services.close()
