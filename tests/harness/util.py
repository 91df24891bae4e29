"""Small helpers shared by the harness pieces."""

from __future__ import annotations

import random
import shutil
import socket
import struct
import time
from collections.abc import Callable
from pathlib import Path

_PORTS = random.Random()  # its own generator: a test that seeds `random` does not pick ports


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _ports_in_use() -> set[int]:
    """Every local and remote port of a TCP socket the kernel still holds, TIME_WAIT and
    FIN_WAIT2 leftovers of servers stopped earlier in the run included."""
    used: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            for address in fields[1:3]:
                used.add(int(address.rsplit(":", 1)[1], 16))
    return used


def free_port() -> int:
    """A free port below the kernel's ephemeral range that no socket state mentions.

    Servers of the harness restart on the same port and are stopped with connections open;
    the leftovers of such connections, or a port the kernel also hands out as a source port,
    can answer a later connect with a reset ('connection refused' while the server listens).
    Ports out of the ephemeral range and not in the kernel's tables keep those apart."""
    below = range(10000, max(_ephemeral_low(), 10000))
    used = _ports_in_use()
    for port in _PORTS.sample(below, min(400, len(below))):
        if port in used:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:  # everything below is taken
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(check: Callable[[], bool], timeout: float, what: str, interval: float = 0.05) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts on the port; the probe ends with a reset, so it leaves no
    FIN_WAIT2/TIME_WAIT entry behind for the server's port."""
    try:
        with socket.create_connection((host, port), timeout=0.2) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return True
    except OSError:
        return False


def which(name: str, *extra_dirs: str) -> str | None:
    """shutil.which that also looks in sbin dirs a non-root PATH often lacks."""
    found = shutil.which(name)
    if found:
        return found
    for d in (*extra_dirs, "/usr/sbin", "/usr/local/sbin", "/sbin"):
        candidate = shutil.which(name, path=d)
        if candidate:
            return candidate
    return None
