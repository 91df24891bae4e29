"""The harness is proven, not just present: real connections to its sshd and its keyring."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import paramiko
import pytest

from tests.conftest import connect_verified, make_ed25519


def connect(sshd, identity, known_hosts: Path) -> paramiko.SSHClient:  # type: ignore[no-untyped-def]
    known_hosts.write_text(sshd.known_hosts_line())
    return connect_verified(
        paramiko.SSHClient(), known_hosts, sshd.port, sshd.user, identity.private_key
    )


def run(client: paramiko.SSHClient, command: str) -> tuple[int, str]:
    _stdin, stdout, _stderr = client.exec_command(command, timeout=10)
    out = stdout.read().decode()
    return stdout.channel.recv_exit_status(), out


def test_sshd_accepts_the_client_key_and_runs_a_command(sshd, client_identity, tmp_path):
    client = connect(sshd, client_identity, tmp_path / "known_hosts")
    try:
        assert run(client, "echo ok") == (0, "ok\n")
    finally:
        client.close()


def test_sshd_rejects_an_unknown_key(sshd, tmp_path):
    other = make_ed25519()
    (tmp_path / "kh").write_text(sshd.known_hosts_line())
    client = paramiko.SSHClient()
    client.load_host_keys(str(tmp_path / "kh"))
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    with pytest.raises(paramiko.AuthenticationException):
        client.connect(
            "127.0.0.1",
            port=sshd.port,
            username=sshd.user,
            pkey=other,
            allow_agent=False,
            look_for_keys=False,
            timeout=10,
        )
    client.close()


def test_a_new_host_key_is_refused_by_the_old_known_hosts(sshd, client_identity, tmp_path):
    kh = tmp_path / "known_hosts"
    connect(sshd, client_identity, kh).close()
    old_line = kh.read_text()
    sshd.regenerate_host_key()
    client = paramiko.SSHClient()
    (tmp_path / "old").write_text(old_line)
    client.load_host_keys(str(tmp_path / "old"))
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    with pytest.raises(paramiko.BadHostKeyException):
        client.connect(
            "127.0.0.1",
            port=sshd.port,
            username=sshd.user,
            pkey=client_identity.private_key,
            allow_agent=False,
            look_for_keys=False,
        )
    client.close()


def test_standin_nvidia_smi_is_on_the_remote_path_and_follows_its_scenario(
    sshd, client_identity, standin, tmp_path
):
    standin.configure(gpu_count=4, util="idle", name="NVIDIA A100-SXM4-80GB", memory_total=81920)
    client = connect(sshd, client_identity, tmp_path / "known_hosts")
    try:
        code, out = run(
            client,
            "nvidia-smi --query-gpu=index,name,utilization.gpu,memory.total "
            "--format=csv,noheader,nounits",
        )
        assert code == 0
        assert out.splitlines() == [f"{i}, NVIDIA A100-SXM4-80GB, 0, 81920" for i in range(4)]
        standin.configure(mode="gpu_lost")
        code, out = run(client, "nvidia-smi")
        assert code != 0 and "GPU is lost" in out
        assert standin.starts() == 2
    finally:
        client.close()


def test_standin_streams_until_the_connection_is_cut(sshd, client_identity, standin, tmp_path):
    standin.configure(gpu_count=2)
    client = connect(sshd, client_identity, tmp_path / "known_hosts")
    try:
        _i, stdout, _e = client.exec_command(
            "exec nvidia-smi --query-gpu=timestamp,index --format=csv,noheader,nounits -lms 100"
        )
        lines = [stdout.readline() for _ in range(6)]
        assert [ln.split(", ")[1].strip() for ln in lines] == ["0", "1"] * 3
        assert sshd.kill_sessions() >= 1
        with pytest.raises(Exception):  # noqa: B017 - any read error or EOF means the cut worked
            for _ in range(200):
                if not stdout.readline():
                    raise EOFError
    finally:
        client.close()


def test_openssh_client_reaches_the_harness(sshd, tmp_path):
    """The terminal path (`ssh`) works against the harness too, with a key file made for it."""
    ssh = shutil.which("ssh")
    if ssh is None:
        pytest.fail("openssh-client missing")
    key = tmp_path / "id"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    sshd.authorize(Path(str(key) + ".pub").read_text())
    kh = tmp_path / "kh"
    kh.write_text(sshd.known_hosts_line())
    out = subprocess.run(
        [
            ssh,
            "-F",
            "/dev/null",
            "-i",
            str(key),
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            f"UserKnownHostsFile={kh}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-p",
            str(sshd.port),
            f"{sshd.user}@127.0.0.1",
            "echo",
            "ok",
        ],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert (out.returncode, out.stdout) == (0, "ok\n"), out.stderr


def test_keyring_stores_and_reads_back_a_secret(keyring_backend):
    service = f"gpu-companion-test-{uuid.uuid4()}"
    keyring_backend.set_password(service, "alice", "s3cret\nwith newline")
    assert keyring_backend.get_password(service, "alice") == "s3cret\nwith newline"
    keyring_backend.delete_password(service, "alice")
    assert keyring_backend.get_password(service, "alice") is None


def test_keyring_secret_is_not_on_disk_in_plain_text(keyring_backend, keyring_session):
    secret = f"plain-{uuid.uuid4()}"
    keyring_backend.set_password("gpu-companion-test", "bob", secret)
    files = [p for p in keyring_session.root.rglob("*") if p.is_file()]
    assert files, "gnome-keyring wrote no files"
    assert not any(secret.encode() in p.read_bytes() for p in files)
