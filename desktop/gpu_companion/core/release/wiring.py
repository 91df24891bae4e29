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

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import Host, HostRegistry
from gpu_companion.core.providers.accounts import ProviderAccounts
from gpu_companion.core.providers.custom import CustomProvider, target_of
from gpu_companion.core.providers.model import Action, action_words
from gpu_companion.core.release.context import (
    CheckpointSync,
    ReleaseContext,
    RentalLedger,
    SshConfigBlocks,
    utcnow,
)
from gpu_companion.core.release.gate import InstanceAction, ReleaseServices
from gpu_companion.core.release.journal import ReleaseJournal
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
    accounts: ProviderAccounts
    journal: ReleaseJournal
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
        accounts: ProviderAccounts,
    ) -> ReleaseWiring:
        return cls(
            registry,
            ChecklistSettings(store),
            StoreReleaseLedger(store, spend),
            backup_root,
            connect,
            QueuedCheckpointSync(queue, backup_root),
            ssh_config,
            accounts,
            ReleaseJournal(store),
            spend.now,
        )

    def services(self) -> ReleaseServices:
        return ReleaseServices(
            self.ledger, self.registry, self.ssh_config, self.journal, clock=self.clock
        )

    def instance_action(self, host: Host, action: Action = "destroy") -> InstanceAction | None:
        """How the host's instance is destroyed (or stopped) and read back: its platform's
        provider account, else the platform's own commands; None when neither is set (the user
        releases the instance in the provider's console)."""
        account = self.accounts.for_platform(host.platform_id)
        commands = self.settings.commands(host.platform_id)
        if account is None and not commands.release:
            if action == "stop":
                raise UserError(
                    _(
                        "{host}'s platform has no provider account, so it cannot be stopped "
                        "from here."
                    ).format(host=host.alias),
                    hint=_("Add one (gpu-companion providers add vast.ai|runpod), or release."),
                )
            return None
        if not host.instance_id.strip():
            raise UserError(
                _(
                    "{host} has no instance id, so the provider cannot be asked to {action} it."
                ).format(host=host.alias, action=action_words(action)),
                hint=_(
                    "Edit the host and paste the instance id from the provider's console, or "
                    "sync the provider account."
                ),
            )
        if account is not None:
            provider = self.accounts.provider(account)
        else:
            platform = self.registry.platform(host.platform_id) if host.platform_id else None
            name = platform.name if platform else _("the platform")
            provider = CustomProvider(name, commands.validated(), target_of(host))
        return InstanceAction(provider, host.instance_id.strip(), action)

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
