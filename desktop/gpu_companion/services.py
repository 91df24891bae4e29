"""Every long-lived service, built once and shared: the window, the tray and every CLI command use
the same `Services` (no Qt here, so headless commands and tests build exactly what the app runs)."""

from __future__ import annotations

from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from gpu_companion.core.common.notifier import Notifier
from gpu_companion.core.common.paths import AppPaths
from gpu_companion.core.hosts.registry import HostRegistry
from gpu_companion.core.spend.alerts import SpendAlerts
from gpu_companion.core.spend.budgets import Budgets
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.money import format_money, to_minor
from gpu_companion.core.storage.store import Store

if TYPE_CHECKING:  # imported where first used: the first window paints without them
    from gpu_companion.core.monitor.live import Monitor
    from gpu_companion.core.release.wiring import ReleaseWiring
    from gpu_companion.core.ssh.config_writer import SshConfigWriter
    from gpu_companion.core.ssh.connection import SessionFactory
    from gpu_companion.core.ssh.managed import ManagedConfig
    from gpu_companion.core.ssh.vault import KeyVault
    from gpu_companion.core.transfers.queue import TransferQueue


class Services:
    """Paths, store, registries, keys, connections, transfers, ledger, alerts, release, monitor.

    Each service is made on first use, so a CLI command builds only what it touches (a
    `ledger report` never opens the transfer queue, whose start-up pauses interrupted jobs)."""

    def __init__(self, paths: AppPaths) -> None:
        self.paths = paths.ensure()
        self.store = Store(paths.database)
        self.key_passphrases: dict[str, str] = {}  # typed this session, memory only
        self._monitor: Monitor | None = None

    @cached_property
    def notifier(self) -> Notifier:
        return Notifier()

    @cached_property
    def registry(self) -> HostRegistry:
        registry = HostRegistry(self.store)
        # the app's own ssh -F / rsync read the managed file: keep it in step with the hosts
        registry.on_hosts_changed.subscribe(lambda _: self.managed_ssh.sync_quietly())
        return registry

    @cached_property
    def vault(self) -> KeyVault:
        from gpu_companion.core.ssh.vault import KeyVault

        return KeyVault(self.store, self.paths.data_dir / "keys")  # keyring touched on first use

    @cached_property
    def ssh_config(self) -> SshConfigWriter:
        from gpu_companion.core.ssh.config_writer import SshConfigWriter

        return SshConfigWriter(Path.home())

    @cached_property
    def sessions(self) -> SessionFactory:
        from gpu_companion.core.ssh.connection import SessionFactory

        return SessionFactory(self.vault, self.ssh_config.known_hosts, self.key_passphrases.get)

    @cached_property
    def managed_ssh(self) -> ManagedConfig:
        from gpu_companion.core.ssh.managed import ManagedConfig

        return ManagedConfig(self.ssh_config, self.registry, self.vault)

    @cached_property
    def transfers(self) -> TransferQueue:
        from gpu_companion.core.transfers.service import build_transfer_queue

        return build_transfer_queue(
            self.store,
            self.registry,
            ssh_argv=self.managed_ssh.ssh_argv,
            client_factory=self.sessions.connect,
        )

    @cached_property
    def ledger(self) -> SpendLedger:
        return SpendLedger(self.store)

    @cached_property
    def budgets(self) -> Budgets:
        return Budgets(self.ledger)

    @cached_property
    def alerts(self) -> SpendAlerts:
        alerts = SpendAlerts(self.ledger, self.notifier, self.budgets)
        alerts.last_sync = self._last_checkpoint_sync  # spot rentals: last verified backup
        return alerts

    def has_running_rentals(self) -> bool:
        return self.ledger.has_running()

    @cached_property
    def release(self) -> ReleaseWiring:
        from gpu_companion.core.release.wiring import ReleaseWiring

        return ReleaseWiring.build(
            self.store,
            self.registry,
            self.ledger,
            self.paths.data_dir / "backups",
            connect=self.sessions.connect,
            ssh_argv=self.managed_ssh.ssh_argv,
            ssh_config=self.managed_ssh,
        )

    def _billed(self, alias: str) -> bool:
        rental = self.ledger.running_for_alias(alias)
        return rental is not None and rental.billed

    def cost_per_hour(self, alias: str) -> str:
        """The running rental's hourly rate as text, "" when nothing is metered for `alias`."""
        rental = self.ledger.running_for_alias(alias)
        if rental is None:
            return ""
        return f"{format_money(to_minor(rental.hourly_rate(), rental.currency), rental.currency)}/h"

    def _on_monitor_event(self, event: object) -> None:
        """Idle GPUs on a billed rental: the ledger says what the idle stretch cost so far."""
        from gpu_companion.core.monitor.live import HintEvent

        if isinstance(event, HintEvent) and event.hint.kind == "idle":
            since = datetime.fromtimestamp(event.hint.since, timezone.utc)
            self.alerts.on_idle(event.hint.alias, since)

    def _last_checkpoint_sync(self, host_id: int) -> datetime | None:
        host = next((h for h in self.registry.hosts() if h.id == host_id), None)
        return self.transfers.last_verified_download(host.alias) if host else None

    def monitor(self) -> Monitor:
        """The live GPU monitor, made on first use: it connects like every other feature, bills
        by the spend ledger and turns idle hints into cost."""
        if self._monitor is None:
            from gpu_companion.core.monitor.live import Monitor

            self._monitor = Monitor(
                self.sessions.connect,
                store=self.store,
                notifier=self.notifier,
                is_billed=self._billed,
            )
            self._monitor.subscribe(self._on_monitor_event)
        return self._monitor

    def close(self) -> None:
        if "transfers" in self.__dict__:
            self.transfers.shutdown()  # running transfers pause and keep their partial data
        if self._monitor is not None:
            self._monitor.stop()
        self.store.close()


def build_services(paths: AppPaths | None = None) -> Services:
    """The one way to build the app's services: the window, the tray and the CLI all call this."""
    return Services(paths or AppPaths.default())
