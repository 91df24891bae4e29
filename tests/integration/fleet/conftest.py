"""Two rented hosts as the app ships them: services from build_services, a key generated into the
keyring, host keys trusted through the app's own trust path, the managed ssh config written."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import missing_component
from tests.harness.sshd import ComponentMissing, SshServer
from tests.harness.standin import NvidiaSmiStandIn


@dataclass
class Fleet:
    services: object  # gpu_companion.services.Services
    servers: list[SshServer]
    aliases: list[str]
    platform: str


@pytest.fixture
def second_sshd(tmp_path: Path, standin: NvidiaSmiStandIn) -> Iterator[SshServer]:
    server = SshServer(tmp_path / "sshd-b", path_prefix=[standin.bin_dir], env=standin.env)
    try:
        server.start()
    except ComponentMissing as exc:
        missing_component(str(exc))
    yield server
    server.stop()


@pytest.fixture
def fleet(app_paths, keyring_backend, ssh_agent, sshd, second_sshd) -> Iterator[Fleet]:  # type: ignore[no-untyped-def]
    from gpu_companion.core.hosts.registry import Host, Platform
    from gpu_companion.core.ssh.connection import ConnectionProblem
    from gpu_companion.services import build_services

    services = build_services(app_paths)
    platform = f"harness-{uuid.uuid4().hex[:6]}"  # the keyring outlives a test: a fresh name
    p = services.registry.save_platform(Platform(platform))
    key = services.vault.generate(platform)
    servers, aliases = [sshd, second_sshd], ["box-a", "box-b"]
    for alias, server in zip(aliases, servers, strict=True):
        server.authorize(key.public_line)
        host = services.registry.save_host(
            Host(alias, "127.0.0.1", server.port, server.user, p.id, "stand-in", 2)
        )
        with pytest.raises(ConnectionProblem) as first_contact:  # unknown host key: the dialog
            services.sessions.connect(host)
        services.sessions.trust_host_key(host, first_contact.value.key)  # the user said yes
        services.sessions.connect(host).close()
    services.managed_ssh.sync()
    services.vault.load_into_agent(platform, lifetime_s=600)  # "Load into ssh-agent"
    yield Fleet(services, servers, aliases, platform)
    services.close()
    services.vault.delete(platform)
