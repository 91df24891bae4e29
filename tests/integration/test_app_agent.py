"""The app's own ssh-agent: a real `ssh-agent -D`, keys from the real keyring over stdin, a
private runtime dir that goes away at exit, and one shared ssh connection per host."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import uuid
from pathlib import Path

import pytest

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.ssh.agent import (
    IDENTITY_DIR,
    AppAgent,
    RuntimePaths,
    agent_key_count,
    close_control_masters,
)
from gpu_companion.core.ssh.vault import KeyVault
from gpu_companion.core.system.envcheck import check_agent
from tests.unit.core.system.test_envcheck import DEBIAN


@pytest.fixture
def vault(store, keyring_backend, tmp_path):  # type: ignore[no-untyped-def]
    v = KeyVault(
        store, tmp_path / "pub", keyring_backend, f"gpu-companion-agent-{uuid.uuid4().hex[:8]}"
    )
    yield v
    for k in v.keys():
        v.delete(k.platform)


@pytest.fixture
def agent(vault, tmp_path):  # type: ignore[no-untyped-def]
    a = AppAgent(RuntimePaths.for_data_dir(tmp_path / "data"), vault)  # short: sockets
    yield a
    a.stop()
    shutil.rmtree(a.paths.root, ignore_errors=True)  # named, never started: a /tmp fallback


def test_runtime_dir_is_stable_per_data_dir_and_short(tmp_path, monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    one = RuntimePaths.for_data_dir(tmp_path / "a")
    other = RuntimePaths.for_data_dir(tmp_path / "b")
    try:
        assert one == RuntimePaths.for_data_dir(tmp_path / "a")
        assert one != other
        # ssh writes `<ControlPath>.<16 random chars>` first; a unix socket path has 108 bytes
        assert len(f"{one.control_dir}/{'0' * 40}.{'x' * 16}") < 108
        monkeypatch.setenv("XDG_RUNTIME_DIR", "/" + "r" * 80)
        assert RuntimePaths.for_data_dir(tmp_path / "a") == one  # too long: not used
    finally:
        for paths in (one, other):  # a fallback under /tmp is made when named
            shutil.rmtree(paths.root, ignore_errors=True)


def test_start_and_stop_own_the_runtime_dir(agent):
    agent.start()
    root = agent.paths.root
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert agent.paths.socket.is_socket() and agent_key_count(agent.paths.socket) == 0
    pid = agent._proc.pid
    agent.stop()
    assert not root.exists() and not agent.running
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_stop_of_an_agent_never_started_leaves_the_running_one_alone(agent, vault):
    agent.start()
    other = AppAgent(agent.paths, vault)  # what a CLI command's Services holds
    other.stop()
    assert agent.running and agent.paths.socket.exists()


def test_a_runtime_dir_someone_else_made_is_refused(tmp_path, vault):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "run").symlink_to(target)  # a squatter's link in a shared /tmp
    agent = AppAgent(RuntimePaths(tmp_path / "run"), vault)
    with pytest.raises(UserError, match="is a link"):
        agent.start()
    assert not agent.running and not list(target.iterdir())


def test_key_goes_in_from_the_keyring_over_stdin_with_a_lifetime(agent, vault):
    stored = vault.generate("vast.ai")
    assert agent.ensure_loaded("vast.ai") is False  # not running: ssh will say so itself
    agent.start()
    assert agent.ensure_loaded("vast.ai") is True
    listed = agent.identities()
    assert len(listed) == 1 and stored.fingerprint in listed[0]
    stem = agent.paths.identity_dir / "vast.ai"
    assert Path(f"{stem}.pub").read_text().strip() == stored.public_line
    assert not stem.exists()  # only the public half is on disk
    assert agent.paths.identity_dir.name == IDENTITY_DIR
    lifetimes = subprocess.run(  # ssh-add -l does not print lifetimes: -L lists the key itself
        ["ssh-add", "-L"], env=agent.env(), capture_output=True, text=True, check=True
    ).stdout
    assert stored.public_line.split()[1] in lifetimes
    assert agent.ensure_loaded("vast.ai") is True  # loaded once, not again
    assert len(agent.identities()) == 1


def test_passphrase_key_is_asked_through_the_callback(vault, tmp_path):
    vault.generate("lambda", passphrase="correct horse")
    asked: list[str] = []
    answers = {"lambda": "correct horse"}
    paths = RuntimePaths.for_data_dir(tmp_path / "data")
    agent = AppAgent(paths, vault, lambda p: asked.append(p) or None)
    try:
        agent.start()
        with pytest.raises(UserError, match="protected by a passphrase"):
            agent.ensure_loaded("lambda")
        assert agent.preload(["lambda"]) == []  # start-up never asks; it waits for a use
        agent.passphrase_for = answers.get
        assert agent.ensure_loaded("lambda") and len(agent.identities()) == 1
    finally:
        agent.stop()
    assert set(asked) == {"lambda"}  # a lookup of what the user typed, never a prompt here


@pytest.mark.parametrize("how", ["start", "start_or_attach"])
def test_a_crash_leftover_socket_is_replaced(agent, how):
    agent.paths.make()
    agent.paths.socket.write_text("stale")
    (agent.paths.identity_dir / "old.pub").write_text("ssh-ed25519 AAAA stale")
    getattr(agent, how)()
    assert agent._proc is not None  # its own agent, not an attach to a leftover
    assert agent.paths.socket.is_socket()
    assert not (agent.paths.identity_dir / "old.pub").exists()


def test_shared_connection_one_handshake_then_closed(fleet):
    """The app's own ssh (its managed config, its agent, as the app builds them) reuses one
    authenticated connection per host; stopping the agent closes it."""
    services, sshd, alias = fleet.services, fleet.servers[0], fleet.aliases[0]
    argv = [*services.managed_ssh.ssh_argv, alias, "true"]
    before = sshd.log_path.read_text().count("Accepted publickey")
    for _ in range(3):
        done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
        assert done.returncode == 0, done.stderr
    assert sshd.log_path.read_text().count("Accepted publickey") - before == 1
    control_dir = services.runtime_paths.control_dir
    assert len(list(control_dir.iterdir())) == 1
    assert close_control_masters(control_dir) == 1
    assert list(control_dir.iterdir()) == []


def test_check_agent_reports_what_runs(agent, monkeypatch):
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    before = check_agent(DEBIAN, agent_socket=agent.paths.socket)
    assert (
        before.ok and "is not running" in before.detail and "starts with the app" in before.detail
    )
    assert "SSH_AUTH_SOCK is not set" in before.detail
    window = check_agent(DEBIAN, agent_socket=agent.paths.socket, app_running=True)
    assert not window.ok and window.fix
    agent.start()
    running = check_agent(DEBIAN, agent_socket=agent.paths.socket, app_running=True)
    assert running.ok and "runs with 0 key(s)" in running.detail
    monkeypatch.setenv("SSH_AUTH_SOCK", str(agent.paths.root / "nothing-here"))
    assert "no agent answers there" in check_agent(DEBIAN).detail


def test_an_agent_left_by_a_crashed_app_is_ended_at_the_next_start(agent, vault):
    agent.start()
    orphan = agent._proc
    agent._proc = None  # the app died without stop(): its agent lives on
    fresh = AppAgent(agent.paths, vault)
    try:
        fresh.start()
        assert orphan.wait(5) is not None  # ended, not left holding keys
        assert fresh.running and agent_key_count(fresh.paths.socket) == 0
    finally:
        fresh.stop()
        if orphan.poll() is None:
            orphan.kill()
            orphan.wait()
        if orphan.stderr:
            orphan.stderr.close()
