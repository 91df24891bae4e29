"""What the release page needs from the rest of the app, in one place: the app's verified
connections, the checkpoint sync as transfer-queue jobs, the spend ledger's meter, and the
managed ssh config that drops a released host's block.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from gpu_companion.core.hosts.registry import Host, HostRegistry
from gpu_companion.core.release.context import (
    CheckpointSync,
    ReleaseContext,
    RentalLedger,
    SshConfigBlocks,
    utcnow,
)
from gpu_companion.core.release.gate import ReleaseServices
from gpu_companion.core.release.queued_sync import QueuedCheckpointSync
from gpu_companion.core.release.record import ChecklistSettings, StoreReleaseLedger
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.storage.store import Store
from gpu_companion.core.transfers.queue import TransferQueue

if TYPE_CHECKING:
    import paramiko


@dataclass
class ReleaseWiring:
    registry: HostRegistry
    settings: ChecklistSettings
    ledger: RentalLedger
    backup_root: Path
    connect: Callable[[Host], paramiko.SSHClient]
    sync: CheckpointSync
    ssh_config: SshConfigBlocks
    clock: Callable[[], datetime] = utcnow  # the meter's: a release ends it on its own clock

    @classmethod
    def build(
        cls,
        store: Store,
        registry: HostRegistry,
        spend: SpendLedger,
        backup_root: Path,
        *,
        connect: Callable[[Host], paramiko.SSHClient],
        queue: TransferQueue,
        ssh_config: SshConfigBlocks,
    ) -> ReleaseWiring:
        return cls(
            registry,
            ChecklistSettings(store),
            StoreReleaseLedger(store, spend),
            backup_root,
            connect,
            QueuedCheckpointSync(queue, backup_root),
            ssh_config,
            spend.now,
        )

    def services(self) -> ReleaseServices:
        return ReleaseServices(self.ledger, self.registry, self.ssh_config, clock=self.clock)

    def context(self, host: Host) -> ReleaseContext:
        """What one checklist run on `host` uses (the page's runs and the unattended ones)."""
        return ReleaseContext(
            host=host,
            connect=self.connect,
            local_dir=self.local_dir(host),
            config=self.settings.config(host.alias),
            sync=self.sync,
            rental_started_at=self.ledger.rental_started_at(host),
        )

    def local_dir(self, host: Host) -> Path:
        return self.backup_root / host.alias
