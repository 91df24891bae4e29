"""The app's own SSH sessions and the terminal path, against the harness's real sshd."""

from __future__ import annotations

import socket
import subprocess

import pytest

from gpu_companion.core.hosts.registry import Host, HostRegistry, Platform
from gpu_companion.core.ssh.config_writer import SshConfigWriter
from gpu_companion.core.ssh.connection import ConnectionProblem, SessionFactory
from gpu_companion.core.ssh.managed import entries_from_registry

pytestmark = [pytest.mark.sshd, pytest.mark.keyring]


@pytest.fixture
def setup(vault, store, sshd, isolated_home):
    """A platform with a generated key authorized on the sshd, one host pointing at it."""
    reg = HostRegistry(store)
    platform = reg.save_platform(Platform("vast.ai"))
    host = reg.save_host(Host("gpu1", "127.0.0.1", sshd.port, sshd.user, platform_id=platform.id))
    stored = vault.generate("vast.ai")
    sshd.authorize(stored.public_line)
    writer = SshConfigWriter(isolated_home)
    factory = SessionFactory(vault, writer.known_hosts)
    return reg, host, factory, writer


def first_contact(factory, host):
    with pytest.raises(ConnectionProblem) as info:
        factory.connect(host)
    assert info.value.kind == "host_key_unknown"
    return info.value


def run(client, command):
    _in, out, _err = client.exec_command(command, timeout=10)
    return out.read().decode().strip()


def test_first_contact_shows_the_fingerprint_then_echo_ok(setup, sshd):
    _reg, host, factory, writer = setup
    problem = first_contact(factory, host)
    server_fp = subprocess.run(
        ["ssh-keygen", "-lf", str(sshd.host_key_path) + ".pub"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()[1]
    assert problem.fingerprint == server_fp
    assert server_fp in str(problem)
    assert not writer.known_hosts.exists() or writer.known_hosts.read_text() == ""
    factory.trust_host_key(host, problem.key)
    assert writer.known_hosts.read_text() == sshd.known_hosts_line()
    client = factory.connect(host)
    try:
        assert run(client, "echo ok") == "ok"
    finally:
        client.close()
    ok, rtt, message = factory.test_connection(host)
    assert ok and rtt is not None and rtt > 0
    assert "round trip" in message


def test_terminal_ssh_through_the_agent_with_no_private_key_file(
    setup, vault, ssh_agent, isolated_home, app_paths
):
    reg, host, factory, writer = setup
    factory.trust_host_key(host, first_contact(factory, host).key)
    result = writer.write(entries_from_registry(reg, vault))
    assert result.checked_with_ssh == 1
    vault.load_into_agent("vast.ai", lifetime_s=300)
    done = subprocess.run(
        [
            "ssh",
            "-F",
            str(isolated_home / ".ssh" / "config"),
            "-o",
            "BatchMode=yes",
            "gpu1",
            "true",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for root in (isolated_home, app_paths.data_dir):
        for path in root.rglob("*"):
            if path.is_file() and not path.is_symlink():
                assert b"PRIVATE KEY" not in path.read_bytes(), path
    # without the agent, the same command is refused: the key really came from the agent
    subprocess.run(["ssh-add", "-D"], capture_output=True, check=True)
    again = subprocess.run(
        [
            "ssh",
            "-F",
            str(isolated_home / ".ssh" / "config"),
            "-o",
            "BatchMode=yes",
            "gpu1",
            "true",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert again.returncode != 0


def test_a_changed_host_key_blocks_until_accepted_as_a_new_instance(setup, sshd):
    _reg, host, factory, writer = setup
    factory.trust_host_key(host, first_contact(factory, host).key)
    old_line = sshd.known_hosts_line()
    sshd.regenerate_host_key()
    with pytest.raises(ConnectionProblem) as info:
        factory.connect(host)
    problem = info.value
    assert problem.kind == "host_key_changed"
    assert "has changed" in problem.message and "new instance" in problem.hint
    assert problem.fingerprint != problem.known_fingerprint
    assert writer.known_hosts.read_text() == old_line  # nothing trusted silently
    ok, _rtt, message = factory.test_connection(host)
    assert not ok and "has changed" in message
    with pytest.raises(Exception, match="already has a trusted host key"):
        factory.trust_host_key(host, problem.key)
    factory.replace_host_key(host, problem.key)
    assert writer.known_hosts.read_text() == sshd.known_hosts_line() != old_line
    assert factory.test_connection(host).ok


def test_forgetting_the_trusted_key_makes_the_next_connection_a_first_contact(setup, sshd):
    _reg, host, factory, writer = setup
    factory.trust_host_key(host, first_contact(factory, host).key)
    other = (
        "[203.0.113.9]:2222 ssh-ed25519 "
        "AAAAC3NzaC1lZDI1NTE5AAAAIHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0\n"
    )
    with writer.known_hosts.open("a") as f:
        f.write(other)  # another host's entry stays
    fingerprint = factory.known_keys(host)["ssh-ed25519"].fingerprint
    assert factory.trusted_fingerprints(host) == [f"ssh-ed25519 {fingerprint}"]
    sshd.regenerate_host_key()
    assert factory.forget_host_keys(host) == 1
    assert factory.trusted_fingerprints(host) == [] and factory.forget_host_keys(host) == 0
    assert writer.known_hosts.read_text() == other
    problem = first_contact(factory, host)
    assert problem.kind == "host_key_unknown" and problem.fingerprint != fingerprint


def test_a_key_the_platform_does_not_have_yet(setup, vault, sshd):
    _reg, host, factory, _writer = setup
    factory.trust_host_key(host, first_contact(factory, host).key)
    vault.rotate("vast.ai")
    assert factory.test_connection(host).ok  # the previous key still opens running hosts
    vault.forget_previous("vast.ai")
    with pytest.raises(ConnectionProblem) as info:
        factory.connect(host)
    assert info.value.kind == "auth_failed"
    assert "does not have this public key yet" in str(info.value)


def test_refused_dns_timeout_and_no_key(setup, store, vault):
    reg, host, factory, _writer = setup
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    cases = {
        "refused": Host("a", "127.0.0.1", closed_port, "root", platform_id=host.platform_id),
        "dns": Host("b", "no-such-host.invalid", 22, "root", platform_id=host.platform_id),
    }
    for kind, h in cases.items():
        with pytest.raises(ConnectionProblem) as info:
            factory.connect(h, timeout=3)
        assert info.value.kind == kind, info.value
    # a listener that never speaks SSH: the banner wait times out
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        h = Host("c", "127.0.0.1", silent.getsockname()[1], "root", platform_id=host.platform_id)
        with pytest.raises(ConnectionProblem) as info:
            factory.connect(h, timeout=0.5)
        assert info.value.kind == "timeout", info.value
    orphan = Host("d", "127.0.0.1", 22, "root")
    with pytest.raises(ConnectionProblem) as info:
        factory.connect(orphan)
    assert info.value.kind == "no_key" and "Keys page" in str(info.value)


def test_a_host_that_hangs_up_in_the_handshake_is_explained(setup):
    """An SSH banner, then the connection closes (a restarting instance, MaxStartups, fail2ban):
    the message says so instead of an empty 'failed: .'."""
    import threading

    _reg, host, factory, _writer = setup
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()

        def hang_up() -> None:
            conn, _ = server.accept()
            with conn:
                conn.sendall(b"SSH-2.0-OpenSSH_9.2p1\r\n")
                conn.recv(4096)  # the client's banner / first packet, then hang up

        answering = threading.Thread(target=hang_up, daemon=True)
        answering.start()
        h = Host("e", "127.0.0.1", server.getsockname()[1], "root", platform_id=host.platform_id)
        with pytest.raises(ConnectionProblem) as info:
            factory.connect(h, timeout=5)
        answering.join(5)
    assert "closed the connection during the SSH handshake" in str(info.value), info.value
    assert "try again in a minute" in info.value.hint
