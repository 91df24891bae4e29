"""What the release page needs from the rest of the app, in one place the lead re-wires.

Stand-ins until the real parts land: `connect_with_user_ssh` (issue 3's SessionFactory.connect
replaces it), `RsyncCheckpointSync` over plain `ssh` (issue 5's "sync checkpoints" preset),
`SshConfigNotWired` (issue 3's writer). `StoreReleaseLedger` ends the spend ledger's meter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gpu_companion.core.hosts import Host, HostRegistry
from gpu_companion.core.lazy import lazy_import
from gpu_companion.core.ledger import SpendLedger
from gpu_companion.core.release.context import CheckpointSync, RentalLedger, SshConfigBlocks
from gpu_companion.core.release.gate import ReleaseServices, SshConfigNotWired
from gpu_companion.core.release.record import ChecklistSettings, StoreReleaseLedger
from gpu_companion.core.release.rsync_sync import RsyncCheckpointSync
from gpu_companion.core.store import Store

if TYPE_CHECKING:
    import paramiko
else:
    paramiko = lazy_import("paramiko")


def connect_with_user_ssh(host: Host) -> paramiko.SSHClient:
    """The user's own known_hosts (RejectPolicy: unknown keys are refused) and agent/keys."""
    client = paramiko.SSHClient()
    client.load_system_host_keys()
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    client.connect(host.hostname, port=host.port, username=host.user, timeout=15)
    return client


@dataclass
class ReleaseWiring:
    registry: HostRegistry
    settings: ChecklistSettings
    ledger: RentalLedger
    backup_root: Path
    connect: Callable[[Host], paramiko.SSHClient] = connect_with_user_ssh
    sync: CheckpointSync | None = None
    ssh_config: SshConfigBlocks = field(default_factory=SshConfigNotWired)

    @classmethod
    def from_store(
        cls, store: Store, registry: HostRegistry, spend: SpendLedger, backup_root: Path
    ) -> ReleaseWiring:
        ledger = StoreReleaseLedger(store, spend)
        wiring = cls(registry, ChecklistSettings(store), ledger, backup_root)
        wiring.sync = RsyncCheckpointSync(["ssh"], backup_root)
        return wiring

    def services(self) -> ReleaseServices:
        return ReleaseServices(self.ledger, self.registry, self.ssh_config)

    def local_dir(self, host: Host) -> Path:
        return self.backup_root / host.alias
