"""A plain SSH client factory for the monitor and `inspect` until the keyring-backed
SessionFactory (core.connection) is wired in: the user's agent and default key files,
~/.ssh/known_hosts plus the app's own known-hosts file, and RejectPolicy (never auto-accept)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpu_companion.core.collector import ClientFactory
from gpu_companion.core.hosts import Host


def basic_client_factory(app_known_hosts: Path | None = None, timeout: float = 10) -> ClientFactory:
    def connect(host: Host) -> Any:
        import paramiko  # 0.1 s: only when a connection is made

        client = paramiko.SSHClient()
        try:
            client.load_system_host_keys()
            if app_known_hosts is not None and app_known_hosts.exists():
                client.load_host_keys(str(app_known_hosts))
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
            client.connect(
                host.hostname,
                port=host.port,
                username=host.user,
                timeout=timeout,
                banner_timeout=timeout,
                auth_timeout=timeout,
                allow_agent=True,
                look_for_keys=True,
            )
        except BaseException:
            client.close()
            raise
        return client

    return connect
