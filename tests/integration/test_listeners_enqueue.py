"""Listeners only enqueue: editing, releasing or removing a host returns at once on the caller's
thread (the GUI's), while a collector and a tunnel are stuck connecting to a host that accepts
the TCP connection and never says a word. Stopping them joins their threads elsewhere."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import replace

import pytest

from gpu_companion.core.access.specs import TunnelSpec
from gpu_companion.core.monitor.collector import HostState
from tests.harness.util import free_port, wait_for

pytestmark = pytest.mark.sshd
LIMIT_S = 0.100


@pytest.fixture
def silent_host():  # type: ignore[no-untyped-def]
    yield from _silent()


@pytest.fixture
def other_silent_host():  # type: ignore[no-untyped-def]
    yield from _silent()


def _silent():  # type: ignore[no-untyped-def]
    """A listener on 127.0.0.1 that accepts and never sends the SSH banner."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join(5)
    for s in held:
        s.close()
    server.close()


def _timed(call) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def test_edit_release_and_remove_return_at_once_during_a_stuck_connect(  # type: ignore[no-untyped-def]
    fleet, silent_host, other_silent_host
):
    s = fleet.services
    box = s.registry.host("box-a")
    host = s.registry.save_host(replace(box, port=silent_host))
    rental = s.ledger.start_rental(host.platform_id, "1.00", host_id=host.id)
    s.start_watching()
    wait_for(lambda: "box-a" in s.monitor().aliases(), 10, "the collector connecting")
    wait_for(lambda: s.monitor().status("box-a").state is not HostState.LIVE, 10, "connecting")
    tunnel_done = threading.Event()

    def start_tunnel() -> None:
        try:
            s.tunnels.start(host, TunnelSpec("web", 8080, free_port()))
        except Exception:
            pass
        finally:
            tunnel_done.set()

    threading.Thread(target=start_tunnel, daemon=True).start()
    time.sleep(0.3)  # the collector and the tunnel's link both wait for a banner

    took = {
        "edit": _timed(lambda: s.registry.save_host(replace(host, notes="edited"))),
        "move": _timed(lambda: s.registry.save_host(replace(host, port=other_silent_host))),
    }
    wait_for(lambda: getattr(s.monitor().watched_host("box-a"), "port", 0) == other_silent_host,
             20, "the collector following the move")  # fmt: skip
    time.sleep(0.3)
    took["end rental"] = _timed(lambda: s.ledger.end_rental(rental.id))
    took["release"] = _timed(lambda: s.registry.save_host(replace(host, state="released")))
    took["remove"] = _timed(lambda: s.registry.delete_host(host.id))
    assert max(took.values()) < LIMIT_S, took
    # and the work was done all the same, off the caller's thread
    wait_for(lambda: "box-a" not in s.monitor().aliases(), 20, "the collector stopped")
