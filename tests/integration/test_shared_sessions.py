"""One SSH connection per host for the app's own work, counted where it matters: the handshakes
the harness sshd accepts. The monitor's stream, a tunnel and three auto-release tmux probes on
one host used to make one connection each (5); they share one now. A host edit makes a new
connection and the old one closes when its holders leave; close_all() leaves no thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import paramiko
import pytest

from gpu_companion.core.access.specs import TunnelSpec
from gpu_companion.core.autorelease.policy import Policy
from gpu_companion.core.autorelease.service import save_policy
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.monitor.collector import HostState, SamplesEvent
from gpu_companion.core.ssh.connection import ConnectionProblem
from gpu_companion.core.ssh.shared import REAPER_NAME, SessionLease, SharedSessions, target_of
from tests.harness.sshd import SshServer
from tests.harness.util import wait_for
from tests.integration.recorder import Recorder


def accepted(server: SshServer) -> int:
    """Handshakes the server authenticated so far (LogLevel VERBOSE logs each one)."""
    return server.log_path.read_text(errors="replace").count("Accepted publickey")


def settled(server: SshServer, expected: int, quiet_s: float = 0.5) -> int:
    """The count once it reached `expected` (sshd may log a moment after the client is in)
    and then stayed put for `quiet_s`: a late extra connection shows up."""
    wait_for(lambda: accepted(server) >= expected, 10, f"{expected} handshakes")
    time.sleep(quiet_s)
    return accepted(server)


def real(lease: SessionLease) -> paramiko.Transport:
    transport = lease.get_transport()
    assert transport is not None
    return transport._transport  # the shared paramiko Transport under the lease's view


def reaper_alive() -> bool:
    return any(t.name == REAPER_NAME and t.is_alive() for t in threading.enumerate())


@pytest.fixture
def listening() -> Iterator[int]:
    """Something listening on the host (the harness host is this machine) for a tunnel."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        yield server.getsockname()[1]


def test_the_monitor_a_tunnel_and_the_probe_make_one_handshake(fleet, listening):
    s, sshd = fleet.services, fleet.servers[0]
    host = s.registry.host("box-a")
    save_policy(s.store, host.id, Policy(idle_minutes=0, stall_minutes=0,
                                         finished_session="no-such-session"))  # fmt: skip
    s.ledger.start_rental(host.platform_id, "2.40", host_id=host.id)
    before = accepted(sshd)

    rec = Recorder()
    s.monitor().subscribe(rec)
    s.monitor().watch(host)
    rec.wait(lambda: any(e.alias == "box-a" for e in rec.of(SamplesEvent)), 30, "samples")
    status = s.tunnels.start(host, TunnelSpec("web", listening))
    assert status.state == "up", status
    service = s.autorelease  # as the app builds it: fed by the monitor, the release's context
    for _ in range(3):
        service.tick()  # runs `tmux has-session` on the host
    assert "box-a" not in service._sessions_seen  # the probe ran and found no such session

    assert settled(sshd, before + 1) - before == 1  # was 1 + 1 + 3 = 5
    assert s.shared_sessions.handshakes == 1 and s.shared_sessions.connections() == 1
    assert s.monitor().status("box-a").state == HostState.LIVE
    assert s.tunnels.tunnel(host.id, "web").link.state == "up"


def test_the_probe_alone_reuses_the_lingering_connection(fleet):
    """No monitor, no tunnel: the 30 s probe finds the connection its last run left."""
    s, sshd = fleet.services, fleet.servers[0]
    pool = SharedSessions(lambda h, t: s.sessions.connect(h, t))
    assert pool.linger_s > 30 + 5  # the loop waits 30 s after each round: the next one finds it
    host = s.registry.host("box-a")
    before = accepted(sshd)
    try:
        for _ in range(3):
            with pool.connect(host) as lease:
                _in, out, _err = lease.exec_command("echo ok", timeout=10)
                assert out.read().strip() == b"ok"
            assert pool.connections() == 1 and reaper_alive()  # lingering, not closed
        assert settled(sshd, before + 1) - before == 1
    finally:
        pool.close_all()
    assert pool.connections() == 0 and not reaper_alive()


def test_the_linger_ends_and_its_thread_with_it(fleet):
    s = fleet.services
    pool = SharedSessions(lambda h, t: s.sessions.connect(h, t), linger_s=2)
    try:
        lease = pool.connect(s.registry.host("box-a"))
        transport = real(lease)
        lease.close()
        assert lease.get_transport() is None and transport.is_active()
        wait_for(lambda: pool.connections() == 0, 10, "the linger to end")
        wait_for(lambda: not transport.is_active() and not reaper_alive(), 10, "closed")
    finally:
        pool.close_all()


def test_a_host_edit_makes_a_new_connection_and_the_old_one_closes_when_left(fleet):
    s, (sshd_a, sshd_b) = fleet.services, fleet.servers
    pool = s.shared_sessions
    host = s.registry.host("box-a")
    a_before, b_before = accepted(sshd_a), accepted(sshd_b)
    old = pool.connect(host)
    old_transport = real(old)
    # the instance moved: box-a's address is now the second server (its key trusted there)
    moved = s.registry.save_host(replace(host, port=sshd_b.port))
    new = pool.connect(moved)
    assert real(new) is not old_transport
    assert settled(sshd_b, b_before + 1) - b_before == 1
    assert old_transport.is_active() and pool.connections() == 2  # still held
    again = pool.connect(moved)  # the new target is shared
    assert real(again) is real(new)
    old.close()  # its last holder left: closed now, no linger for a target no longer used
    wait_for(lambda: not old_transport.is_active(), 10, "the old connection closed")
    assert pool.connections() == 1
    new.close()
    again.close()
    assert settled(sshd_a, a_before + 1) - a_before == 1


def test_close_all_closes_held_and_lingering_connections_and_leaves_no_thread(fleet):
    s = fleet.services
    pool = s.shared_sessions
    lingering = pool.connect(s.registry.host("box-a"))
    held = pool.connect(s.registry.host("box-b"))
    transports = [real(lingering), real(held)]
    lingering.close()
    assert reaper_alive() and pool.connections() == 2
    pool.close_all()
    assert pool.connections() == 0 and not reaper_alive()
    assert not any(t.is_active() or t.is_alive() for t in transports)  # their threads joined
    held.close()  # a holder leaving afterwards is harmless
    # after close_all a connect still works, and nothing lingers after it
    with pool.connect(s.registry.host("box-a")) as late:
        late_transport = real(late)
    assert not late_transport.is_active() and not reaper_alive()


def test_concurrent_first_connects_make_one_handshake_and_other_hosts_do_not_wait(fleet):
    s, (sshd_a, _sshd_b) = fleet.services, fleet.servers
    gate, in_handshake = threading.Event(), threading.Event()

    def slow_for_box_a(host: Host, timeout: float) -> paramiko.SSHClient:
        if host.alias == "box-a":
            in_handshake.set()
            assert gate.wait(20)
        return s.sessions.connect(host, timeout)

    pool = SharedSessions(slow_for_box_a)
    leases: list[SessionLease] = []
    errors: list[BaseException] = []

    def connect() -> None:
        try:
            leases.append(pool.connect(s.registry.host("box-a")))
        except BaseException as exc:
            errors.append(exc)

    before = accepted(sshd_a)
    threads = [threading.Thread(target=connect) for _ in range(6)]
    try:
        for t in threads:
            t.start()
        assert in_handshake.wait(10)
        with pool.connect(s.registry.host("box-b")) as other:  # box-a's handshake hangs
            assert other.get_transport().is_active()
        gate.set()
        for t in threads:
            t.join(30)
        assert not errors and len(leases) == 6
        assert len({id(real(lease)) for lease in leases}) == 1
        assert pool.handshakes == 2  # box-a once, box-b once
        assert settled(sshd_a, before + 1) - before == 1
    finally:
        gate.set()
        for lease in leases:
            lease.close()
        pool.close_all()


def test_waiters_share_a_failed_handshake(fleet):
    s = fleet.services
    gate, started, calls = threading.Event(), threading.Event(), []

    def failing(host: Host, timeout: float) -> paramiko.SSHClient:
        calls.append(host.alias)
        started.set()
        assert gate.wait(20)
        raise ConnectionProblem("refused", "refused for the test")

    pool = SharedSessions(failing)
    errors: list[BaseException] = []

    def connect() -> None:
        try:
            pool.connect(s.registry.host("box-a"))
        except BaseException as exc:
            errors.append(exc)

    first = threading.Thread(target=connect)
    first.start()
    assert started.wait(10)
    waiters = [threading.Thread(target=connect) for _ in range(3)]
    for t in waiters:
        t.start()
    slot = pool._slots[target_of(s.registry.host("box-a"))]
    wait_for(lambda: slot.users == 4, 10, "the waiters queued behind the handshake")
    gate.set()
    for t in [first, *waiters]:
        t.join(20)
    assert len(errors) == 4 and all(getattr(e, "kind", "") == "refused" for e in errors)
    assert calls == ["box-a"]
    with pytest.raises(ConnectionProblem):  # a later connect tries again
        pool.connect(s.registry.host("box-a"))
    assert calls == ["box-a", "box-a"]
    pool.close_all()


def test_a_dead_connection_is_replaced_and_its_holders_see_it_dead(fleet):
    s, sshd = fleet.services, fleet.servers[0]
    pool = SharedSessions(lambda h, t: s.sessions.connect(h, t))
    host = s.registry.host("box-a")
    try:
        before = accepted(sshd)
        holder = pool.connect(host)
        dead = real(holder)
        sshd.kill_sessions()  # the instance dropped every connection
        wait_for(lambda: not dead.is_active(), 10, "the transport to notice")
        with pytest.raises((paramiko.SSHException, EOFError, OSError)):
            holder.exec_command("echo ok", timeout=5)
        with pool.connect(host) as fresh:
            assert real(fresh) is not dead
            _in, out, _err = fresh.exec_command("echo ok", timeout=10)
            assert out.read().strip() == b"ok"
        holder.close()
        assert settled(sshd, before + 2) - before == 2
    finally:
        pool.close_all()


def test_closing_a_lease_closes_its_channels_only(fleet):
    s = fleet.services
    pool = SharedSessions(lambda h, t: s.sessions.connect(h, t))
    host = s.registry.host("box-a")
    try:
        first, second = pool.connect(host), pool.connect(host)
        _in, out, _err = first.exec_command("cat", timeout=30)  # until its channel closes
        reader_done = threading.Event()

        def read() -> None:
            out.read()  # blocks until the channel closes
            reader_done.set()

        threading.Thread(target=read, daemon=True).start()
        first.close()
        assert reader_done.wait(5)  # the blocked reader woke, as when a client closes
        assert first.get_transport() is None
        with pytest.raises(paramiko.SSHException):
            first.exec_command("echo ok")
        _in, out, _err = second.exec_command("echo ok", timeout=10)
        assert out.read().strip() == b"ok"
        second.close()
    finally:
        pool.close_all()
