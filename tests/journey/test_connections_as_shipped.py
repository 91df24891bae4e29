"""Connections as shipped: Services built as `run_gui` builds them, the app's own ssh-agent, no
test-only ssh options, no session agent. Keys from the keyring reach rsync, `ssh -F` and the
user's terminal `ssh ALIAS` only through the app's agent; the managed blocks pin what a user's
`Host *` must not weaken."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.core.ssh.connection import ConnectionProblem
from gpu_companion.core.transfers.job import JobState, TransferJob
from gpu_companion.services import Services, build_services
from tests.integration.transfer_helpers import make_tree, tree_hashes

pytestmark = pytest.mark.sshd

ALIAS = "journey-gpu"


@pytest.fixture
def shipped(app_paths, keyring_backend, sshd, monkeypatch) -> Iterator[tuple[Services, Host]]:  # type: ignore[no-untyped-def]
    """What a new user has after the wizard: a key made by the app and installed on the host,
    the host's key trusted through the fingerprint the app shows, the app running."""
    import keyring.core

    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    # what keyring picks in a fresh process on this desktop: the Secret Service on the harness
    # bus (keyring caches its first pick per process, so an earlier test may have seen none)
    monkeypatch.setattr(keyring.core, "_keyring_backend", keyring_backend)
    services = build_services(app_paths)
    services.start()  # what run_gui runs before the window shows
    assert services.start_background() == []  # and then off the GUI thread
    platform = f"journey-{uuid.uuid4().hex[:8]}"
    try:
        p = services.registry.save_platform(Platform(platform))
        host = services.registry.save_host(
            Host(ALIAS, "127.0.0.1", sshd.port, sshd.user, platform_id=p.id)
        )
        stored = services.vault.generate(platform)
        sshd.authorize(stored.public_line)  # what the user pastes into the platform's console
        with pytest.raises(ConnectionProblem) as first:
            services.sessions.connect(host)
        assert first.value.kind == "host_key_unknown"
        assert first.value.fingerprint == host_fingerprint(sshd.host_key_path)
        services.sessions.trust_host_key(host, first.value.key)  # the dialog's "Trust"
        services.ssh_config.write(services.managed_ssh.entries())  # ssh-config --write
        yield services, host
    finally:
        services.close()
        if services.vault.key(platform) is not None:
            services.vault.delete(platform)


def host_fingerprint(key_path: Path) -> str:
    """What `ssh-keygen -lf` prints for the host's key: the number the provider shows."""
    out = subprocess.run(
        ["ssh-keygen", "-lf", f"{key_path}.pub"], capture_output=True, text=True, check=True
    ).stdout
    return out.split()[1]


def terminal_ssh(*args: str) -> subprocess.CompletedProcess[str]:
    """The user's terminal: their ~/.ssh/config, no session agent, no extra options."""
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    config = Path(os.environ["HOME"]) / ".ssh" / "config"  # ssh reads ~ from passwd, not $HOME
    return subprocess.run(
        ["ssh", "-F", str(config), *args],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=60,
        check=False,
    )  # fmt: skip


def run_job(services: Services, job: TransferJob) -> TransferJob:
    added = services.transfers.add(job)
    services.transfers.run_until_idle(120)
    got = services.transfers.get(added.id)
    assert got is not None
    return got


def test_upload_download_and_terminal_ssh_work_as_shipped(shipped, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    services, host = shipped
    assert "SSH_AUTH_SOCK" not in os.environ
    src = make_tree(tmp_path / "src dir ünï")
    remote = tmp_path / "remote side" / "data ✓ run"
    up = run_job(services, TransferJob(ALIAS, "upload", str(src), str(remote)))
    assert up.state is JobState.DONE and up.verified and up.engine == "rsync", up.message
    assert tree_hashes(remote) == tree_hashes(src)

    back = tmp_path / "back here ✓"
    down = run_job(services, TransferJob(ALIAS, "download", str(back), str(remote)))
    assert down.state is JobState.DONE and down.verified, down.message
    assert tree_hashes(back) == tree_hashes(src)

    # the app's agent holds the key (from the keyring, over stdin); no private key file exists
    assert len(services.agent.identities()) == 1
    app_files = [
        *_files(tmp_path / "home"),
        *_files(tmp_path / "app"),
        *_files(services.runtime_paths.root),
    ]
    assert app_files and not any("PRIVATE KEY" in p.read_text(errors="replace") for p in app_files)

    done = terminal_ssh(ALIAS, "true")
    assert done.returncode == 0, done.stderr

    # the app closes its agent: the terminal says where the key is, not a .pub permission story
    services.agent.stop()
    assert not services.runtime_paths.root.exists()
    refused = terminal_ssh(ALIAS, "true")
    assert refused.returncode == 255
    assert "start-GPU-Companion-to-use-this-key" in refused.stderr, refused.stderr
    assert "UNPROTECTED" not in refused.stderr and ".pub" not in refused.stderr

    # and the same upload fails at once, in plain words, with no retries
    started = time.monotonic()
    again = run_job(services, TransferJob(ALIAS, "upload", str(src), str(remote)))
    elapsed = time.monotonic() - started
    assert again.state is JobState.FAILED
    stored = services.vault.key(services.vault.platform_of(host) or "")
    assert stored is not None
    assert f"refused the {stored.platform} key" in again.message
    assert stored.fingerprint in again.message and "Keys page" in again.message
    assert "ssh-agent is not running" in again.message
    assert again.attempts <= 1 and "Gave up" not in again.message
    assert elapsed < 15, elapsed


def test_user_host_star_cannot_weaken_a_managed_host(shipped, sshd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    services, host = shipped
    user_config = Path(os.environ["HOME"]) / ".ssh" / "config"
    user_config.write_bytes(
        user_config.read_bytes()
        + b"\nHost *\n    StrictHostKeyChecking no\n    ForwardAgent yes\n"
        + b"    UserKnownHostsFile /dev/null\n"
    )
    services.ssh_config.write(services.managed_ssh.entries())  # the Include stays first
    shown = dict(
        line.split(" ", 1) for line in terminal_ssh("-G", ALIAS).stdout.splitlines() if " " in line
    )
    assert shown["stricthostkeychecking"] == "true"  # ssh -G prints "yes" as "true"
    assert shown["forwardagent"] == "no"
    assert shown["identityagent"] == str(services.runtime_paths.socket)
    assert shown["identitiesonly"] == "yes"
    assert shown["userknownhostsfile"] == str(services.ssh_config.known_hosts)

    src = make_tree(tmp_path / "src")
    ok = run_job(services, TransferJob(ALIAS, "upload", str(src), str(tmp_path / "r1")))
    assert ok.state is JobState.DONE and ok.verified, ok.message
    assert terminal_ssh(ALIAS, "true").returncode == 0

    sshd.kill_sessions()  # the old instance is gone (its connections with it)
    sshd.regenerate_host_key()  # a new instance behind the same address

    refused = terminal_ssh(ALIAS, "true")
    assert refused.returncode == 255
    assert "REMOTE HOST IDENTIFICATION HAS CHANGED" in refused.stderr, refused.stderr
    config = str(user_config)
    rsync = subprocess.run(
        ["rsync", "-a", "-e", f"ssh -F {config}", "--", f"{src}/", f"{ALIAS}:{tmp_path / 'r2'}/"],
        capture_output=True, text=True, timeout=60, check=False,
        env={k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"},
    )  # fmt: skip
    # rsync may exit 12 (protocol stream) before it reaps ssh's 255: ssh's words decide
    assert rsync.returncode in (12, 255), rsync.stderr
    assert "Host key verification failed" in rsync.stderr
    assert not (tmp_path / "r2").exists()

    app = run_job(services, TransferJob(ALIAS, "upload", str(src), str(tmp_path / "r3")))
    assert app.state is JobState.FAILED and app.attempts <= 1, app.message
    assert "host key" in app.message.lower()
    assert not (tmp_path / "r3").exists()
    with pytest.raises(ConnectionProblem) as changed:
        services.sessions.connect(host)
    assert changed.value.kind == "host_key_changed"


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and p.stat().st_size < 1_000_000]
