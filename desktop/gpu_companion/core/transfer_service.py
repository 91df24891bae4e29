"""Builds the app's transfer queue, and the interim ssh wiring until managed keys arrive.

The engine only needs an ssh command (`ssh -F <config>`) and a paramiko client factory; the app
passes the generated config and its session factory once those exist. Until then the user's own
ssh setup is used: `ssh` with ~/.ssh/config, and paramiko with known_hosts and the ssh agent.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpu_companion.core.hosts import Host, HostRegistry
from gpu_companion.core.lazy import lazy_import
from gpu_companion.core.store import Store
from gpu_companion.core.transfer_engine import ClientFactory, TransferEngine
from gpu_companion.core.transfer_job import TransferJob
from gpu_companion.core.transfer_queue import TransferQueue

if TYPE_CHECKING:
    import paramiko
else:
    paramiko = lazy_import("paramiko")


def system_client_factory(host: Host) -> Any:
    """A paramiko client over the user's ssh config, known_hosts (RejectPolicy) and agent."""
    config_path = Path.home() / ".ssh" / "config"
    hostname, port, user = host.hostname, host.port, host.user
    if config_path.exists():
        cfg = paramiko.SSHConfig.from_path(str(config_path)).lookup(host.alias)
        hostname = cfg.get("hostname", hostname)
        port = int(cfg.get("port", port))
        user = cfg.get("user", user)
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    client.load_system_host_keys()
    known = Path.home() / ".ssh" / "known_hosts"
    if known.exists():
        client.load_host_keys(str(known))
    client.connect(hostname, port=port, username=user or None, timeout=20, allow_agent=True)
    return client


def build_transfer_queue(
    store: Store,
    registry: HostRegistry,
    *,
    ssh_argv: Sequence[str] = ("ssh",),
    client_factory: ClientFactory = system_client_factory,
    on_finished: Callable[[TransferJob], None] | None = None,
) -> TransferQueue:
    engine = TransferEngine(list(ssh_argv), client_factory, env=dict(os.environ))
    return TransferQueue(store, engine, registry.host, on_finished=on_finished)
