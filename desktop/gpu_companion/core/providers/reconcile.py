"""The providers' lists against the app's: every account's instances are read and compared with
the hosts. A known host follows its instance (address, port, GPUs, price; stopped: its disk is
metered at the storage rate; gone: its meter ends and it is marked gone). An instance that runs at
the provider but that the app does not know, or believes released, is an orphan: alerted with
its price, imported on request (the user's sync, or one click)."""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.money import format_rate, to_minor
from gpu_companion.core.common.notifier import Notifier
from gpu_companion.core.hosts.registry import Host, HostRegistry
from gpu_companion.core.providers.accounts import Account, ProviderAccounts
from gpu_companion.core.providers.model import Instance, ProviderError, state_words
from gpu_companion.core.spend.ledger import SpendLedger

log = logging.getLogger(__name__)

SYNC_EVERY_S = 300.0
LIVE = ("running", "starting")


@dataclass(frozen=True)
class Orphan:
    """An instance billing at the provider that the app does not meter."""

    account: Account
    instance: Instance
    released_alias: str = ""  # the app believes this host released

    @property
    def price(self) -> str:
        i = self.instance
        rate = i.hourly if i.state in LIVE else i.storage_hourly
        if rate is None:
            return _("an unknown price")
        return format_rate(to_minor(rate, i.currency), i.currency)

    def text(self) -> str:
        i = self.instance
        what = _("{provider} instance {id}").format(provider=self.account.provider_name, id=i.id)
        if i.label:
            what += f" ({i.label})"
        gpus = f"{i.gpu_count}× {i.gpu_model}, " if i.gpu_model else ""
        if i.state in LIVE:
            state = _("is running")
        else:
            state = _("is {state}").format(state=i.provider_state or state_words(i.state))
        known = (
            _("GPU Companion believes {host} released").format(host=self.released_alias)
            if self.released_alias
            else _("GPU Companion does not know it")
        )
        return _(
            "{instance} {state} ({gpus}{price}) but {known}: import it to meter it, or release it."
        ).format(instance=what, state=state, gpus=gpus, price=self.price, known=known)


@dataclass
class SyncReport:
    imported: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    orphans: list[Orphan] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


_SLUG = re.compile(r"[^a-z0-9-]+")


def _alias_for(account: Account, instance: Instance, taken: set[str]) -> str:
    prefix = "vast" if account.kind == "vast.ai" else "runpod"
    base = _SLUG.sub("-", instance.label.lower()).strip("-")[:40] if instance.label else ""
    base = base if base and base[0].isalpha() else f"{prefix}-{instance.id}"
    alias, n = base, 2
    while alias.lower() in taken:
        alias, n = f"{base}-{n}", n + 1
    return alias


class ProviderSync:
    def __init__(
        self,
        accounts: ProviderAccounts,
        registry: HostRegistry,
        ledger: SpendLedger,
        notifier: Notifier,
        *,
        every_s: float = SYNC_EVERY_S,
        mono: Callable[[], float] = time.monotonic,
    ) -> None:
        self.accounts, self.registry, self.ledger = accounts, registry, ledger
        self.notifier, self.every_s, self.mono = notifier, every_s, mono
        self._lock = threading.Lock()  # one sync at a time (the loop, a button, the CLI)
        self._last: float | None = None
        self.orphans: list[Orphan] = []  # the last sync's, for the tray and the Hosts page

    def tick(self) -> None:
        """The always-on loop's step: a quiet sync at start and every `every_s`."""
        if not self.accounts.accounts():
            return
        if self._last is not None and self.mono() - self._last < self.every_s:
            return
        self.sync()

    def sync(self, import_all: bool = False) -> SyncReport:
        """Read every account once. `import_all`: every orphan becomes a metered host."""
        with self._lock:
            self._last = self.mono()
            report = SyncReport()
            for account in self.accounts.accounts():
                try:
                    instances = self.accounts.provider(account).instances()
                except (ProviderError, UserError) as exc:
                    report.errors.append(f"{account.platform_name}: {exc}")  # the key's prefix
                    continue
                self._account(account, instances, report, import_all)
            self.orphans = report.orphans
            for orphan in report.orphans:
                self.notifier.warning(
                    orphan.text(),
                    source="providers",
                    key=f"orphan:{orphan.account.id}:{orphan.instance.id}",
                )
            for text in report.errors:
                self.notifier.warning(
                    _("The provider account could not be read: {error}").format(error=text),
                    source="providers",
                    key=f"provider-error:{text.split(':', 1)[0]}",
                )
            return report

    def import_instance(self, account: Account, instance_id: str) -> str:
        """One orphan imported (the one-click answer to its alert); the new host's alias."""
        with self._lock:
            provider = self.accounts.provider(account)
            reading = provider.read(provider.check_id(instance_id))
            if reading.instance is None or reading.state == "gone":
                raise UserError(
                    _("{provider} no longer has instance {id}.").format(
                        provider=account.provider_name, id=instance_id
                    )
                )
            report = SyncReport()
            self._account(account, [reading.instance], report, True, only_listed=True)
            self.orphans = [o for o in self.orphans if o.instance.id != instance_id]
            return (report.imported or report.updated or [""])[0]

    # --- one account ------------------------------------------------------------------------

    def _account(
        self,
        account: Account,
        instances: list[Instance],
        report: SyncReport,
        import_all: bool,
        only_listed: bool = False,
    ) -> None:
        hosts = [h for h in self.registry.hosts() if h.platform_id == account.platform_id]
        by_id: dict[str, Host] = {}
        for h in hosts:  # the live host wins over a released one with the same id
            if h.instance_id and (h.instance_id not in by_id or h.state != "released"):
                by_id[h.instance_id] = h
        listed = set()
        for inst in instances:
            listed.add(inst.id)
            host = by_id.get(inst.id)
            try:
                self._instance(account, inst, host, report, import_all)
            except UserError as exc:
                report.errors.append(
                    _("{platform} instance {id}: {error}").format(
                        platform=account.platform_name, id=inst.id, error=exc
                    )
                )
        if only_listed:
            return
        for host in hosts:
            if host.instance_id and host.state in ("active", "stopped") and (
                host.instance_id not in listed
                or any(i.id == host.instance_id and i.state == "gone" for i in instances)
            ):
                self._gone(account, host, report)

    def _instance(
        self,
        account: Account,
        inst: Instance,
        host: Host | None,
        report: SyncReport,
        import_all: bool,
    ) -> None:
        if inst.state == "gone":
            return
        if host is None or host.state in ("released", "gone"):
            if not import_all:
                released = host.alias if host is not None else ""
                report.orphans.append(Orphan(account, inst, released))
                return
            host = self._save_host(account, inst, host)
            report.imported.append(host.alias)
        else:
            host = self._save_host(account, inst, host)
            report.updated.append(host.alias)
        self._meter(host, inst, report)

    def _save_host(self, account: Account, inst: Instance, host: Host | None) -> Host:
        state = "stopped" if inst.state == "stopped" else "active"
        if host is None:
            taken = {h.alias.lower() for h in self.registry.hosts()}
            host = Host(
                alias=_alias_for(account, inst, taken),
                hostname=inst.ssh_host or "ssh-not-ready.invalid",  # never resolves
                platform_id=account.platform_id,
                notes=f"imported from {account.provider_name}",
            )
        wanted = replace(
            host,
            hostname=inst.ssh_host or host.hostname,
            port=inst.ssh_port or host.port,
            user=inst.ssh_user or host.user,
            instance_id=inst.id,
            gpu_model=inst.gpu_model or host.gpu_model,
            gpu_count=inst.gpu_count or host.gpu_count,
            state=state,
        )
        return wanted if wanted == host else self.registry.save_host(wanted)

    def _meter(self, host: Host, inst: Instance, report: SyncReport) -> None:
        """The host's meter at the provider's price: compute while it runs, storage while
        stopped; a price change starts a new rental from now."""
        assert host.id is not None
        stopped = inst.state == "stopped"
        mode = "stopped" if stopped else inst.billing_mode
        rate = inst.storage_hourly if stopped else inst.hourly
        running = self.ledger.running_for_host(host.id)
        if running is not None:
            same_mode = (running.billing_mode == "stopped") == stopped
            if same_mode and (rate is None or running.hourly_rate() == rate):
                return
            if running.id is not None:
                reason = "stopped" if stopped and not same_mode else "price change"
                if not stopped and not same_mode:
                    reason = "restarted"
                self.ledger.end_rental(running.id, reason=reason)
        if stopped:
            report.stopped.append(host.alias)
        assert host.platform_id is not None
        self.ledger.start_rental(
            host.platform_id,
            rate if rate is not None else Decimal(0),
            host_id=host.id,
            gpu_model=inst.gpu_model,
            gpu_count=max(inst.gpu_count, 1),
            billing_mode=mode,
            currency=inst.currency,
            notes=f"{inst.provider_state or inst.state} at the provider"
            + ("" if rate is not None else "; the provider gave no price"),
        )

    def _gone(self, account: Account, host: Host, report: SyncReport) -> None:
        assert host.id is not None
        running = self.ledger.running_for_host(host.id)
        if running is not None and running.id is not None:
            self.ledger.end_rental(running.id, reason="gone")
        self.registry.save_host(replace(host, state="gone"))
        report.gone.append(host.alias)
        self.notifier.warning(
            _(
                "{provider} no longer has instance {id} ({host}): it is marked gone and its "
                "meter ended now. If its data mattered, check the provider's console."
            ).format(provider=account.provider_name, id=host.instance_id, host=host.alias),
            source="providers",
            key=f"gone:{host.id}",
        )
