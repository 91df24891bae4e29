"""Tunnels over the app's own verified connection, against the harness sshd and a real HTTP
server on the host: the page served on the local port, a cut link made again on the same port,
a taken local port, a changed host key, and a released host."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import urllib.request
from dataclasses import replace

import pytest

from gpu_companion.core.access.jupyter import jupyter_url
from gpu_companion.core.access.specs import TunnelSpec
from gpu_companion.core.access.tunnel import PortInUse
from gpu_companion.core.ssh.connection import ConnectionProblem
from tests.harness.util import free_port, port_open, wait_for

pytestmark = [pytest.mark.sshd, pytest.mark.keyring]

PAGE = "served from the rented host"


def fetch(port: int, path: str = "/index.html") -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=20) as r:
        return r.read().decode()


def test_the_remote_page_is_served_on_the_chosen_local_port(rented, remote_web):
    tunnels = rented.services.tunnels
    local = free_port()
    status = tunnels.start(rented.host, TunnelSpec("web", remote_web.port, local))
    assert (status.state, status.local_port, status.message) == ("up", local, "")
    assert PAGE in fetch(local)
    tunnel = tunnels.tunnel(rented.host.id, "web")
    assert tunnel.connections >= 1 and tunnel.link.reconnects == 0
    wait_for(lambda: tunnel.status().answers is True, 10, "the probe to see the server")


def test_a_killed_connection_comes_back_on_the_same_port(rented, remote_web, sshd):
    tunnels = rented.services.tunnels
    status = tunnels.start(rented.host, TunnelSpec("web", remote_web.port, free_port()))
    assert PAGE in fetch(status.local_port)
    seen: list[str] = []
    tunnels.on_change.subscribe(lambda s: seen.append(s.state))
    assert sshd.kill_sessions() >= 1
    tunnel = tunnels.tunnel(rented.host.id, "web")
    wait_for(lambda: tunnel.link.reconnects >= 1, 20, "the link to be made again")
    assert PAGE in fetch(status.local_port)
    assert "down" in seen and tunnel.status().state == "up"
    assert tunnel.local_port == status.local_port


def test_a_request_during_the_cut_waits_for_the_link(rented, remote_web, sshd):
    tunnels = rented.services.tunnels
    status = tunnels.start(rented.host, TunnelSpec("web", remote_web.port, free_port()))
    assert sshd.kill_sessions() >= 1
    assert PAGE in fetch(status.local_port)  # no pause: the first request after the cut


def test_a_taken_local_port_moves_to_the_next_free_one_and_says_so(rented, remote_web):
    tunnels = rented.services.tunnels
    # the default local port is the remote port: here the server itself holds it
    status = tunnels.start(rented.host, TunnelSpec("web", remote_web.port))
    assert status.local_port != remote_web.port
    assert status.message == (
        f"Local port {remote_web.port} is in use; using {status.local_port} instead."
    )
    assert PAGE in fetch(status.local_port)


def test_a_taken_port_asked_for_exactly_is_refused(rented, remote_web):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(PortInUse) as info:
            rented.services.tunnels.start(
                rented.host, TunnelSpec("web", remote_web.port, port), exact_port=True
            )
    assert f"Local port {port} is already in use" in str(info.value)
    assert rented.services.tunnels.statuses() == []


def test_a_changed_host_key_blocks_the_tunnel_before_it_listens(rented, remote_web, sshd):
    sshd.regenerate_host_key()
    local = free_port()
    with pytest.raises(ConnectionProblem) as info:
        rented.services.tunnels.start(rented.host, TunnelSpec("web", remote_web.port, local))
    assert info.value.kind == "host_key_changed"
    assert "has changed: the connection was blocked" in str(info.value)
    assert "new instance behind a recycled address" in str(info.value)
    assert not port_open(local)
    assert rented.services.tunnels.statuses() == []


def test_a_host_key_that_changes_while_up_blocks_the_reconnect(rented, remote_web, sshd):
    tunnels = rented.services.tunnels
    status = tunnels.start(rented.host, TunnelSpec("web", remote_web.port, free_port()))
    sessions = subprocess.run(
        ["pgrep", "-P", str(sshd.proc.pid)], capture_output=True, text=True, check=True
    ).stdout.split()
    sshd.regenerate_host_key()  # a new instance behind the same address
    for pid in sessions:  # the old instance's session goes with it
        os.kill(int(pid), signal.SIGKILL)
    tunnel = tunnels.tunnel(rented.host.id, "web")
    wait_for(lambda: tunnel.status().state == "blocked", 20, "the tunnel to be blocked")
    assert "has changed" in tunnel.status().message
    with pytest.raises(OSError):
        fetch(status.local_port)  # accepted, then closed: no byte from an unverified host
    # the user accepts the new key ("this is a new instance"): starting it again works
    with pytest.raises(ConnectionProblem) as info:
        rented.services.sessions.connect(rented.host)
    rented.services.sessions.replace_host_key(rented.host, info.value.key)
    again = tunnels.start(rented.host, TunnelSpec("web", remote_web.port, status.local_port))
    assert again.state == "up" and PAGE in fetch(again.local_port)


def test_releasing_the_host_closes_its_tunnels(rented, remote_web):
    tunnels = rented.services.tunnels
    status = tunnels.start(rented.host, TunnelSpec("web", remote_web.port, free_port()))
    rented.services.registry.save_host(replace(rented.host, state="released"))  # only enqueues
    wait_for(lambda: tunnels.statuses() == [], 10, "the released host's tunnels closed")
    assert not port_open(status.local_port)


def test_nothing_listening_on_the_remote_port_is_said(rented):
    tunnels = rented.services.tunnels
    status = tunnels.start(rented.host, TunnelSpec("idle", free_port(), free_port()))
    tunnel = tunnels.tunnel(rented.host.id, "idle")
    wait_for(lambda: tunnel.status().answers is False, 10, "the probe")
    assert "Nothing answers on gpu1:" in tunnel.status().message
    assert status.state == "up"


def test_the_jupyter_url_and_token_come_from_the_host(rented, standin):
    fake = standin.bin_dir / "jupyter"  # first on the sessions' PATH, as a real install is
    fake.write_text(
        "#!/bin/sh\n"
        'echo \'{"base_url": "/", "hostname": "localhost", "port": 8888, "token": "abc123", '
        '"url": "http://localhost:8888/"}\'\n'
    )
    fake.chmod(0o755)
    client = rented.services.sessions.connect(rented.host)
    try:
        assert jupyter_url(client, 8888, 8890) == "http://127.0.0.1:8890/?token=abc123"
        assert jupyter_url(client, 6006, 6006) is None
    finally:
        client.close()


def test_two_starts_at_once_make_one_tunnel_over_one_link(rented, remote_web):
    import threading

    tunnels = rented.services.tunnels
    spec = TunnelSpec("web", remote_web.port, free_port())
    results = []
    threads = [
        threading.Thread(target=lambda: results.append(tunnels.start(rented.host, spec)))
        for _ in range(3)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len({r.local_port for r in results}) == 1 and len(results) == 3
    assert len(tunnels.statuses()) == 1 and len(tunnels._links) == 1
    assert PAGE in fetch(results[0].local_port)


def test_a_tunnel_started_while_another_closes_keeps_its_link(rented, remote_web):
    """Closing the last tunnel of a host closes its link; a tunnel started on that host at the
    same moment (another page, the tray) must not be left on the closed link."""
    import threading

    tunnels = rented.services.tunnels
    for i in range(15):
        tunnels.start(rented.host, TunnelSpec(f"a{i}", remote_web.port, free_port()))
        go = threading.Barrier(2)
        started: list[object] = []

        def close(go: threading.Barrier = go, i: int = i) -> None:
            go.wait()
            tunnels.stop(rented.host.id, f"a{i}")

        def start(go: threading.Barrier = go, i: int = i, started: list = started) -> None:  # type: ignore[type-arg]
            go.wait()
            started.append(
                tunnels.start(rented.host, TunnelSpec(f"b{i}", remote_web.port, free_port()))
            )

        both = [threading.Thread(target=close), threading.Thread(target=start)]
        for t in both:
            t.start()
        for t in both:
            t.join(30)
        status = tunnels.tunnel(rented.host.id, f"b{i}").status()
        assert status.state == "up" and PAGE in fetch(status.local_port), (i, status)
        tunnels.stop(rented.host.id, f"b{i}")
