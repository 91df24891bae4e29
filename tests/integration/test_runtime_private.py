"""A neighbour cannot take a key: the app's runtime dir and agent socket are checked before any
key goes there, and a planted link never makes the app overwrite another file.

The neighbour is a real second OS user (`useradd -M`, removed afterwards) running a fake
ssh-agent in a child process that drops to that user with os.setuid, and records every request
that reaches it: "no key was sent" is what it received, not what the app says.
"""

from __future__ import annotations

import os
import pwd
import select
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.ssh.agent import AppAgent, RuntimePaths
from tests.conftest import missing_component

ADD_IDENTITY = {17, 25}  # SSH2_AGENTC_ADD_IDENTITY, SSH2_AGENTC_ADD_ID_CONSTRAINED

# Binds as root, gives the socket file to `file_uid`, then becomes `uid` before listen(): the
# peer credentials a client reads are the listener's at listen() time. Answers like an empty
# agent (so `ssh-add -l` works) and prints each request's type.
FAKE_AGENT = r"""
import os, socket, struct, sys
path, uid, gid, file_uid, file_gid = sys.argv[1], *map(int, sys.argv[2:6])
srv = socket.socket(socket.AF_UNIX)
srv.bind(path)
os.chown(path, file_uid, file_gid)
os.setgroups([]); os.setgid(gid); os.setuid(uid)
srv.listen(8)
print("ready", flush=True)
while True:
    conn, _ = srv.accept()
    with conn:
        while True:
            head = conn.recv(4, socket.MSG_WAITALL)
            if len(head) < 4:
                break
            body = conn.recv(struct.unpack(">I", head)[0], socket.MSG_WAITALL)
            print(body[0], flush=True)
            if body[0] == 11:
                reply = bytes([12]) + struct.pack(">I", 0)
            else:
                reply = bytes([6 if body[0] in (17, 25) else 5])
            conn.sendall(struct.pack(">I", len(reply)) + reply)
"""


@dataclass
class FakeAgent:
    proc: subprocess.Popen[str]

    def stop(self) -> list[int]:
        """End it; the request types that reached it."""
        self.proc.terminate()
        out, _ = self.proc.communicate(timeout=10)
        return [int(line) for line in out.split() if line.isdigit()]


def serve_fake_agent(
    path: Path, as_user: tuple[int, int], file_owner: tuple[int, int]
) -> FakeAgent:
    proc = subprocess.Popen(
        [sys.executable, "-c", FAKE_AGENT, str(path), *map(str, (*as_user, *file_owner))],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 10)
    if not ready or proc.stdout.readline().strip() != "ready":
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"the fake agent did not start: {err}")
    return FakeAgent(proc)


@pytest.fixture(scope="session")
def neighbour() -> Iterator[tuple[int, int]]:
    """(uid, gid) of a throwaway second user: the one who got to the shared /tmp first."""
    useradd, userdel = shutil.which("useradd"), shutil.which("userdel")
    if os.geteuid() != 0 or not useradd or not userdel:
        missing_component(
            "a second OS user is needed (the neighbour), and making one takes root and useradd"
        )
    name = f"gpucn{os.getpid()}"
    done = subprocess.run(
        [useradd, "-M", "-s", "/usr/sbin/nologin", name], capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    if done.returncode != 0:
        missing_component(f"useradd could not make a second user: {done.stderr.strip()}")
    entry = pwd.getpwnam(name)
    try:
        yield entry.pw_uid, entry.pw_gid
    finally:
        subprocess.run([userdel, name], capture_output=True, check=False)


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No XDG_RUNTIME_DIR (a cron job, an ssh login, macOS): the case that went to /tmp."""
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    data = tmp_path / "data"
    yield data
    shutil.rmtree(RuntimePaths.for_data_dir(data).root, ignore_errors=True)


def _squat(root: Path, owner: tuple[int, int]) -> None:
    """What the neighbour did: make the folder first, open to the victim."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(mode=0o755)
    os.chmod(root, 0o755)
    os.chown(root, *owner)


# --- (a) a folder another user made at the app's runtime path ---------------------------------


def test_a_neighbours_folder_at_the_runtime_path_gets_no_key(data_dir, vault, neighbour):
    vault.generate("vast.ai")
    paths = RuntimePaths.for_data_dir(data_dir)
    _squat(paths.root, neighbour)
    fake = serve_fake_agent(paths.socket, neighbour, neighbour)
    cli = AppAgent(paths, vault)  # what `transfer` and `run` hold
    try:
        with pytest.raises(UserError, match="owned by another user") as refused:
            cli.start_or_attach()
            cli.ensure_loaded("vast.ai")
        assert "GPU Companion will not use it" in str(refused.value)
        assert not cli.running
    finally:
        received = fake.stop()
        shutil.rmtree(paths.root)
    assert received == [], "a request reached the neighbour's agent"


def test_the_app_never_waits_on_a_name_a_neighbour_can_take(data_dir, neighbour):
    """Without XDG_RUNTIME_DIR the folder is private to the data dir, or a fresh mkdtemp name
    recorded there; a squatted name is dropped for a fresh one, never adopted."""
    first = RuntimePaths.for_data_dir(data_dir)
    assert first == RuntimePaths.for_data_dir(data_dir)  # the window and a CLI agree
    assert not first.root.name.startswith(f"gpu-companion-{os.getuid()}-")  # the old, guessable one
    first.make()
    info = first.root.lstat()
    assert info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) == 0o700
    _squat(first.root, neighbour)  # gone at a reboot, taken by the neighbour since
    try:
        again = RuntimePaths.for_data_dir(data_dir)
        assert again.root != first.root and again.root.lstat().st_uid == os.getuid()
        assert stat.S_IMODE(again.root.lstat().st_mode) == 0o700
    finally:
        shutil.rmtree(first.root)
    longest = f"{again.control_dir}/{'0' * 40}.{'x' * 16}"  # what ssh binds for %C
    assert len(os.fsencode(longest)) <= 107


# --- (b) a runtime dir open to others, or a link -------------------------------------------


@pytest.fixture
def window(data_dir, vault):  # type: ignore[no-untyped-def]
    """The window's agent, running, with a key to steal in the vault."""
    vault.generate("vast.ai")
    agent = AppAgent(RuntimePaths.for_data_dir(data_dir), vault)
    agent.start()
    yield agent
    agent.stop()


def test_a_runtime_dir_open_to_others_is_refused(window, vault):
    os.chmod(window.paths.root, 0o755)
    cli = AppAgent(window.paths, vault)
    with pytest.raises(UserError, match="other users can open it") as refused:
        cli.start_or_attach()
        cli.ensure_loaded("vast.ai")
    assert "GPU Companion will not use it" in str(refused.value)
    assert window.identities() == []
    with pytest.raises(UserError, match="other users can open it"):
        window.paths.make()  # never quietly "fixed": someone may have been inside
    os.chmod(window.paths.root, 0o700)


def test_a_runtime_dir_that_is_a_link_is_refused(window, vault):
    holder = Path(tempfile.mkdtemp(prefix="gpuc-link-"))  # short: a socket path
    try:
        (holder / "run").symlink_to(window.paths.root)
        cli = AppAgent(RuntimePaths(holder / "run"), vault)
        with pytest.raises(UserError, match="is a link") as refused:
            cli.start_or_attach()
            cli.ensure_loaded("vast.ai")
        assert "GPU Companion will not use it" in str(refused.value)
        assert window.identities() == []
        with pytest.raises(UserError, match="is a link"):
            cli.start()
        assert window.running and window.paths.socket.is_socket()
    finally:
        shutil.rmtree(holder)


# --- (c) who answers on the socket ------------------------------------------------------------


def test_an_agent_answering_as_another_user_gets_no_key(data_dir, vault, neighbour):
    vault.generate("vast.ai")
    paths = RuntimePaths.for_data_dir(data_dir)
    paths.make()
    me = (os.getuid(), os.getgid())
    fake = serve_fake_agent(paths.socket, neighbour, me)  # the file is ours, the peer is not
    cli = AppAgent(paths, vault)
    try:
        with pytest.raises(UserError, match="runs as another user") as refused:
            cli.start_or_attach()
            cli.ensure_loaded("vast.ai")
        assert f"uid {neighbour[0]}" in str(refused.value)
    finally:
        received = fake.stop()
    assert received == [], "a request reached the neighbour's agent"


def test_the_apps_own_agent_passes_and_is_checked_before_each_key(window, vault, neighbour):
    vault.generate("lambda")
    cli = AppAgent(window.paths, vault)
    cli.start_or_attach()
    assert cli.running and cli._proc is None  # attached to the window's, not a second one
    assert cli.ensure_loaded("vast.ai") and len(window.identities()) == 1
    # the socket is swapped after the attach: the next key is checked again
    socket = window.paths.socket
    aside = socket.with_name("real.sock")
    socket.rename(aside)
    fake = serve_fake_agent(socket, neighbour, (os.getuid(), os.getgid()))
    try:
        with pytest.raises(UserError, match="runs as another user"):
            cli.ensure_loaded("lambda")
    finally:
        received = fake.stop()
        socket.unlink()
        aside.rename(socket)
    assert received == []
    assert len(window.identities()) == 1


# --- (d) planted links where the app writes public keys ----------------------------------------


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "victim" / "authorized_keys"
    victim.parent.mkdir()
    victim.write_text("the victim's own line\n")
    victim.chmod(0o600)
    return victim


def test_a_link_planted_at_a_public_key_file_is_not_followed(tmp_path, vault):
    victim = _victim(tmp_path)
    path = vault.public_key_path("vast.ai")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(victim)
    stored = vault.generate("vast.ai")
    assert victim.read_text() == "the victim's own line\n"
    assert stat.S_IMODE(victim.stat().st_mode) == 0o600
    assert not path.is_symlink() and path.read_text().strip() == stored.public_line
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_link_planted_at_an_identity_file_is_not_followed(tmp_path, window, vault):
    victim = _victim(tmp_path)
    stored = vault.key("vast.ai")
    assert stored is not None
    stem = window.paths.identity_stem(stored.public_path)
    pub = stem.with_name(stem.name + ".pub")
    pub.symlink_to(victim)
    assert window.ensure_loaded("vast.ai")
    assert victim.read_text() == "the victim's own line\n"
    assert not pub.is_symlink() and pub.read_text().strip() == stored.public_line
