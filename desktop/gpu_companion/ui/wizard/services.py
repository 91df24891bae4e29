"""What the wizard needs from the key vault, the connection factory and the spend ledger, as small
Protocols: the wizard calls only these, so wiring the real services is a few lines here.

Each service is read from the Services (`ctx.vault`, `ctx.sessions`, `ctx.ledger`); a missing one
is None and the page that needs it says the feature is not available yet — never a fake success.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.spend.alerts import save_idle_minutes
from gpu_companion.core.spend.budgets import Budget, Budgets
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.metering import Rental
from gpu_companion.core.ssh.vault import KeyVault

if TYPE_CHECKING:
    from gpu_companion.services import Services


class StoredKeyLike(Protocol):
    """A generated key as the wizard shows it: the public line and its SHA256 fingerprint."""

    @property
    def public_key(self) -> str: ...

    @property
    def fingerprint(self) -> str: ...


class KeyService(Protocol):
    """core/keyvault.KeyVault (issue 3)."""

    def generate(self, platform_name: str, kind: str = "ed25519") -> StoredKeyLike: ...


class SessionService(Protocol):
    """core/connection.SessionFactory (issue 3). `connect` raises an exception with `.kind ==
    "host_key_unknown"`, `.fingerprint` and `.key` on first contact; `trust_host_key` stores it."""

    def connect(self, host: Host) -> Any: ...

    def trust_host_key(self, host: Host, key: Any) -> None: ...


@dataclass(frozen=True)
class RentalPlan:
    """What the ledger meters from the moment the wizard finishes."""

    host_id: int
    platform_id: int | None
    gpu_model: str
    gpu_count: int
    billing_mode: str  # "on-demand", "spot", "monthly"
    rate: Decimal  # per instance-hour, all GPUs (per month for "monthly")
    currency: str
    granularity: str  # the platform's: "second", "minute", "hour"
    planned_hours: Decimal
    idle_alert_minutes: int
    auto_release: bool = False  # a policy with these idle minutes, saved at Finish


@dataclass(frozen=True)
class BudgetPlan:
    """A monthly budget for the platform, with the ledger's default thresholds."""

    platform_id: int | None
    amount: Decimal
    currency: str
    period: str = "monthly"


class LedgerService(Protocol):
    """The spend ledger (issue 6): meters the rental and watches the budget."""

    def start_rental(self, plan: RentalPlan) -> Any: ...

    def set_budget(self, plan: BudgetPlan) -> Any: ...

    def existing_budget(self, plan: BudgetPlan) -> Budget | None: ...


@dataclass(frozen=True)
class GeneratedKey:
    public_key: str
    fingerprint: str


class VaultKeyService:
    """`KeyService` over the key vault: a platform that already has a key keeps it (the wizard
    never replaces a key that running instances may use; rotation is on the Keys page)."""

    def __init__(self, vault: KeyVault) -> None:
        self.vault = vault

    def generate(self, platform_name: str, kind: str = "ed25519") -> GeneratedKey:
        stored = self.vault.key(platform_name) or self.vault.generate(platform_name, kind)
        return GeneratedKey(stored.public_line, stored.fingerprint)


class SpendLedgerService:
    """`LedgerService` over the spend ledger: the rental is metered from now, its planned hours
    become the max runtime (alerts 15 minutes before and when passed), its idle minutes the
    host's idle-alert threshold, the budget is monthly."""

    PERIODS = {"monthly": "month", "weekly": "week", "daily": "day"}

    def __init__(self, ledger: SpendLedger, budgets: Budgets) -> None:
        self.ledger = ledger
        self.budgets = budgets

    def start_rental(self, plan: RentalPlan) -> Rental:
        if plan.platform_id is None:
            raise ValidationError(
                "platform",
                QCoreApplication.translate(
                    "WizardServices", "Choose the platform this instance is rented on."
                ),
            )
        rental = self.ledger.start_rental(
            plan.platform_id,
            plan.rate,
            host_id=plan.host_id,
            gpu_model=plan.gpu_model,
            gpu_count=plan.gpu_count,
            billing_mode=plan.billing_mode,
            currency=plan.currency,
            granularity=plan.granularity,
            max_runtime=timedelta(hours=float(plan.planned_hours)) if plan.planned_hours else None,
        )
        # only once the meter runs: a refused Finish leaves the host's idle alert as it was
        save_idle_minutes(self.ledger.store, plan.host_id, plan.idle_alert_minutes)
        return rental

    def existing_budget(self, plan: BudgetPlan) -> Budget | None:
        """The budget `set_budget(plan)` would replace (the wizard asks first)."""
        period = self.PERIODS.get(plan.period, plan.period)
        return self.budgets.find(period, plan.currency, plan.platform_id)

    def set_budget(self, plan: BudgetPlan) -> Budget:
        return self.budgets.set_budget(
            period=self.PERIODS.get(plan.period, plan.period),
            amount=plan.amount,
            currency=plan.currency,
            platform_id=plan.platform_id,
        )


@dataclass
class WizardServices:
    """The three services, each None until its feature exists in this build."""

    keys: KeyService | None = None
    sessions: SessionService | None = None
    ledger: LedgerService | None = None

    @classmethod
    def from_context(cls, ctx: Services) -> WizardServices:
        ledger, budgets = getattr(ctx, "ledger", None), getattr(ctx, "budgets", None)
        vault = getattr(ctx, "vault", None)
        return cls(
            keys=VaultKeyService(vault) if vault is not None else None,
            sessions=getattr(ctx, "sessions", None),
            ledger=SpendLedgerService(ledger, budgets) if ledger and budgets else None,
        )


# In English, as marked for translation; the pages show them through not_yet().
NOT_YET = {
    "keys": str(
        QT_TRANSLATE_NOOP(
            "WizardServices",
            "Generating this platform's SSH key here comes with the Keys feature, which is not in "
            "this version yet. Until then, add your own public key in the provider's console.",
        )
    ),
    "sessions": str(
        QT_TRANSLATE_NOOP(
            "WizardServices",
            "The app's own SSH connection (host-key check, self-check) is not in this version "
            "yet. Until then, connect once with `ssh -p PORT user@host` in a terminal and compare "
            "the host-key fingerprint with the provider's console.",
        )
    ),
    "ledger": str(
        QT_TRANSLATE_NOOP(
            "WizardServices",
            "The spend ledger is not in this version yet: nothing is metered and no budget "
            "alert will fire. Note the planned end time yourself and release the instance then.",
        )
    ),
}


def not_yet(feature: str) -> str:
    """Why a feature's part of the wizard is missing, in the user's language."""
    return QCoreApplication.translate("WizardServices", NOT_YET[feature])
