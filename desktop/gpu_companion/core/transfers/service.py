"""Builds the app's transfer queue over the app's own ssh setup.

The engine only needs an ssh command (`ssh -F <managed config>`) for rsync and a client factory
(the app's verified SessionFactory) for the SFTP engine and the remote folder picker.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from gpu_companion.core.hosts.registry import Host, HostRegistry
from gpu_companion.core.storage.store import Store
from gpu_companion.core.transfers.engine import ClientFactory, TransferEngine
from gpu_companion.core.transfers.job import TransferJob
from gpu_companion.core.transfers.queue import TransferQueue


def build_transfer_queue(
    store: Store,
    registry: HostRegistry,
    *,
    ssh_argv: Sequence[str],
    client_factory: ClientFactory,
    on_finished: Callable[[TransferJob], None] | None = None,
    before_connect: Callable[[Host], None] | None = None,
    auth_help: Callable[[Host], str] | None = None,
) -> TransferQueue:
    engine = TransferEngine(
        list(ssh_argv),
        client_factory,
        env=dict(os.environ),
        before_connect=before_connect,
        auth_help=auth_help,
    )
    return TransferQueue(store, engine, registry.host, on_finished=on_finished)
