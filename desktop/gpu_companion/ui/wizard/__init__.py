"""The first-rental wizard: size the job, choose a card and a billing mode, create and connect the
instance, run the self-check, and set a budget — the method that works, as nine pages."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QFormLayout, QWidget, QWizard

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.core.planning.billing import BillingAdvice, RentalPrices
from gpu_companion.core.planning.catalogue import GpuSpec
from gpu_companion.core.planning.estimate import MemoryEstimate
from gpu_companion.core.selfcheck.check import SelfCheckOptions
from gpu_companion.ui.wizard.connect_pages import (
    ConnectionPage,
    CreateInstancePage,
    FirstConnectionPage,
)
from gpu_companion.ui.wizard.finish_pages import BudgetPage, SelfCheckPage
from gpu_companion.ui.wizard.plan_pages import (
    BillingPage,
    EstimatePage,
    GpuPage,
    TaskPage,
    WizardPage,
)
from gpu_companion.ui.wizard.services import RentalPlan, WizardServices

if TYPE_CHECKING:
    from gpu_companion.services import Services

log = logging.getLogger(__name__)


@dataclass
class WizardState:
    """What the pages decided so far; each page reads what earlier pages left here."""

    memory: MemoryEstimate | None = None
    card: GpuSpec | None = None
    priced_card: str | None = None
    advice: BillingAdvice | None = None
    prices: RentalPrices | None = None  # per GPU, as the billing page asks for them
    billing_mode: str = "on-demand"  # how the rental is metered: on-demand, spot or monthly
    platform: Platform | None = None
    key: Any = None
    host: Host | None = None
    connected: bool = False
    rental: Any = None
    budget: Any = None


class FirstRentalWizard(QWizard):
    """Nine pages; Back keeps every answer. Services missing from this build are named on the
    page that needs them, and Finish stores only what really exists."""

    def __init__(
        self,
        ctx: Services,
        services: WizardServices | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.services = services or WizardServices.from_context(ctx)
        self.state = WizardState()
        self.selfcheck_options: SelfCheckOptions | None = None  # None: the real-host defaults
        self.setObjectName("firstRentalWizard")
        self.setWindowTitle(self.tr("First rental"))
        self.setWizardStyle(QWizard.WizardStyle.ModernStyle)
        self.task_page = TaskPage()
        self.estimate_page = EstimatePage()
        self.gpu_page = GpuPage()
        self.billing_page = BillingPage()
        self.create_page = CreateInstancePage()
        self.connection_page = ConnectionPage()
        self.first_connection_page = FirstConnectionPage()
        self.selfcheck_page = SelfCheckPage()
        self.budget_page = BudgetPage()
        for page in (
            self.task_page,
            self.estimate_page,
            self.gpu_page,
            self.billing_page,
            self.create_page,
            self.connection_page,
            self.first_connection_page,
            self.selfcheck_page,
            self.budget_page,
        ):
            self.addPage(page)
            self._add_why(page)
        self.currentIdChanged.connect(lambda _id: self.explain_next())
        self.resize(900, 640)

    def _add_why(self, page: WizardPage) -> None:
        """Each page says why Next is disabled, under its own answers."""
        page.why = page.note(name="whyNext")
        page.why.setStyleSheet("color: #b7791f;")
        lay = page.layout()
        if isinstance(lay, QFormLayout):
            lay.addRow(page.why)
        elif lay is not None:
            lay.addWidget(page.why)
        page.completeChanged.connect(self.explain_next)

    def explain_next(self) -> None:
        page = self.currentPage()
        if not isinstance(page, WizardPage):
            return
        last = self.nextId() == -1
        button = self.button(
            QWizard.WizardButton.FinishButton if last else QWizard.WizardButton.NextButton
        )
        reason = "" if page.isComplete() else page.blocked_reason()
        if not reason:
            page.why.setText("")
        elif last:
            page.why.setText(self.tr("Finish is not available yet: {reason}").format(reason=reason))
        else:
            page.why.setText(self.tr("Next is not available yet: {reason}").format(reason=reason))
        button.setToolTip(page.why.text())

    def accept(self) -> None:
        """Finish: start the ledger's meter and budget when the ledger exists."""
        ledger, plans = self.services.ledger, self.budget_page.plans()
        if ledger is not None and plans is not None:
            rental, budget = plans
            try:  # a retry after a failure must not start a second meter
                if self.state.rental is None:
                    self.state.rental = ledger.start_rental(rental)
                self._save_policy(rental)
                if self.state.budget is None:  # None: keep the existing budget, as asked
                    self.state.budget = (
                        ledger.set_budget(budget) if budget else self.budget_page.existing
                    )
            except UserError as exc:
                self.budget_page.notice.setText(str(exc))
                return
        host = self.state.host
        self.ctx.notifier.info(
            self.tr("Host {alias} is set up.").format(alias=host.alias)
            if host
            else self.tr("Wizard finished."),
            source="wizard",
        )
        super().accept()

    def _save_policy(self, plan: RentalPlan) -> None:
        """The budget page's idle minutes become the host's auto-release policy when asked for
        (an untouched box leaves a policy set on the Release page as it is)."""
        if plan.auto_release:
            from gpu_companion.core.autorelease.policy import Policy
            from gpu_companion.core.autorelease.service import save_policy

            save_policy(self.ctx.store, plan.host_id, Policy(idle_minutes=plan.idle_alert_minutes))

    def done(self, result: int) -> None:
        self.selfcheck_page.view.cancel()
        super().done(result)
