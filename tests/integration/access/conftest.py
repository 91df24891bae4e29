"""A rented host as the app reaches it: the app's own Services (keyring key, the app's known_hosts
with the harness host key trusted at first contact), and a real HTTP server on the host."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.core.ssh.connection import ConnectionProblem
from tests.harness.util import free_port, port_open, wait_for


@dataclass
class Rented:
    services: object  # gpu_companion.services.Services
    host: Host


def make_rented(app_paths, keyring_backend, sshd, service: str | None) -> Rented:
    """build_services() as the app does, one host on the harness sshd whose key the user
    trusted after comparing the fingerprint; the key lives under keyring `service`."""
    from gpu_companion.services import build_services

    services = build_services(app_paths)
    services.vault.backend = keyring_backend
    if service is not None:  # None: the app's own name, `gpu-companion/<this data dir's id>`
        services.vault.service = service
    p = services.registry.save_platform(Platform("vast.ai"))
    host = services.registry.save_host(
        Host("gpu1", "127.0.0.1", sshd.port, sshd.user, platform_id=p.id)
    )
    sshd.authorize(services.vault.generate("vast.ai").public_line)
    with pytest.raises(ConnectionProblem) as first:
        services.sessions.connect(host)
    assert first.value.kind == "host_key_unknown"
    services.sessions.trust_host_key(host, first.value.key)
    return Rented(services, host)


def forget(rented: Rented) -> None:
    rented.services.close()
    for k in rented.services.vault.keys():
        rented.services.vault.delete(k.platform)


@pytest.fixture
def rented(app_paths, keyring_backend, sshd) -> Iterator[Rented]:
    service = f"gpu-companion-access-{uuid.uuid4().hex[:8]}"
    r = make_rented(app_paths, keyring_backend, sshd, service)
    yield r
    forget(r)


@dataclass
class WebServer:
    port: int
    root: Path


@pytest.fixture
def remote_web(tmp_path: Path) -> Iterator[WebServer]:
    """`python -m http.server` on the host (the harness host is 127.0.0.1), on a free port."""
    root = tmp_path / "served"
    root.mkdir()
    (root / "index.html").write_text("<h1>served from the rented host</h1>\n")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: port_open(port), 15, "http.server")
        yield WebServer(port, root)
    finally:
        proc.terminate()
        proc.wait(10)
