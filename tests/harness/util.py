"""Small helpers shared by the harness pieces."""

from __future__ import annotations

import shutil
import socket
import time
from collections.abc import Callable


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
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
    try:
        with socket.create_connection((host, port), timeout=0.2):
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
