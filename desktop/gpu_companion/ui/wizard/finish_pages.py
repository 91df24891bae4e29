"""The last two pages: the self-check of the new host, then the budget and planned runtime that
start the ledger's meter."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from gpu_companion.core.common.money import (
    CURRENCIES,
    format_amount,
    format_money,
    instance_rate,
    per_hour,
    rate_derivation,
    sentence,
    to_minor,
)
from gpu_companion.core.selfcheck.check import SelfCheckOptions
from gpu_companion.core.spend.budgets import Budget
from gpu_companion.core.spend.metering import planned_cost
from gpu_companion.ui.common.money_input import parse_user_amount
from gpu_companion.ui.common.selfcheck_view import SelfCheckView
from gpu_companion.ui.wizard.plan_pages import WizardPage
from gpu_companion.ui.wizard.services import BudgetPlan, RentalPlan, not_yet


class SelfCheckPage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle(self.tr("Self-check"))
        self.setSubTitle(
            self.tr(
                "Before you upload anything: is the GPU there and free, does PyTorch see "
                "it, and is the data disk big and fast enough?"
            )
        )
        lay = QVBoxLayout(self)
        self.notice = self.note(name="selfcheckNotice")
        self.view = SelfCheckView()
        self.again = QPushButton(self.tr("Run again"))
        self.again.setObjectName("runSelfcheckAgain")
        self.again.setEnabled(False)
        self.again.clicked.connect(self.run)
        lay.addWidget(self.notice)
        lay.addWidget(self.view)
        lay.addWidget(self.again, 0, Qt.AlignmentFlag.AlignRight)
        self.view.finished.connect(self._finished)
        self.checked_host: tuple[object, ...] | None = None

    def _finished(self) -> None:
        self.again.setEnabled(True)
        self.completeChanged.emit()

    def initializePage(self) -> None:  # noqa: N802
        wiz = self.wiz()
        sessions, host = wiz.services.sessions, wiz.state.host
        if sessions is None or host is None:
            self.notice.setText(not_yet("sessions"))
            return
        card = wiz.state.card.id if wiz.state.card else None
        key = (host.hostname, host.port, host.user, host.gpu_count, card)
        if key == self.checked_host and self.view.complete:
            return  # back and forth keeps a finished result; "Run again" repeats it
        self.checked_host = key
        self.notice.setText(
            self.tr("A failure here costs nothing yet: fix it before the paid hours run.")
        )
        self.run()

    def run(self) -> None:
        """Check the saved host against the card chosen and the GPU count rented."""
        wiz = self.wiz()
        sessions, host = wiz.services.sessions, wiz.state.host
        if sessions is None or host is None:
            return
        options = replace(
            wiz.selfcheck_options or SelfCheckOptions(),
            expected_gpus=host.gpu_count,
            gpu=wiz.state.card,
        )
        self.again.setEnabled(False)
        self.view.start(host, sessions.connect, options)
        self.completeChanged.emit()

    def isComplete(self) -> bool:  # noqa: N802
        return not self.view.running

    def blocked_reason(self) -> str:
        return self.tr("the self-check is still running (Cancel stops it).")

    def cleanupPage(self) -> None:  # noqa: N802
        """Back: a running check stops; its partial result is not kept as a result."""
        self.view.cancel()


# One whole sentence per billing mode, shown through QCoreApplication.translate("BudgetPage", …)
METERED = {
    "on-demand": str(QT_TRANSLATE_NOOP("BudgetPage", "Metered on demand at {rate}.")),
    "spot": str(QT_TRANSLATE_NOOP("BudgetPage", "Metered on spot at {rate}.")),
    "monthly": str(QT_TRANSLATE_NOOP("BudgetPage", "Metered on a monthly plan at {rate}.")),
}
PLANNED = {
    "on-demand": str(QT_TRANSLATE_NOOP("BudgetPage", "{hours} h on demand ≈ {cost}.")),
    "spot": str(QT_TRANSLATE_NOOP("BudgetPage", "{hours} h on spot ≈ {cost}.")),
    "monthly": str(QT_TRANSLATE_NOOP("BudgetPage", "{hours} h on a monthly plan ≈ {cost}.")),
}
PLANNED_OF_BUDGET = {
    "on-demand": str(
        QT_TRANSLATE_NOOP("BudgetPage", "{hours} h on demand ≈ {cost}, {share} of this budget.")
    ),
    "spot": str(
        QT_TRANSLATE_NOOP("BudgetPage", "{hours} h on spot ≈ {cost}, {share} of this budget.")
    ),
    "monthly": str(
        QT_TRANSLATE_NOOP(
            "BudgetPage", "{hours} h on a monthly plan ≈ {cost}, {share} of this budget."
        )
    ),
}


class BudgetPage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle(self.tr("Budget and planned runtime"))
        self.setSubTitle(
            self.tr(
                "The ledger meters the rental from now on and warns at 50%, 80% and 100% "
                "of the budget, when the GPU sits idle, and before the planned end."
            )
        )
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.budget = QLineEdit("50")
        self.budget.setObjectName("budget")
        self.currency = QComboBox()
        self.currency.setObjectName("budgetCurrency")
        self.currency.addItems(list(CURRENCIES))
        self.hours = QSpinBox()
        self.hours.setObjectName("plannedHours")
        self.hours.setRange(1, 24 * 90)
        self.hours.setValue(6)
        self.hours.setSuffix(self.tr(" h"))
        self.idle = QSpinBox()
        self.idle.setObjectName("idleMinutes")
        self.idle.setRange(5, 24 * 60)
        self.idle.setValue(30)
        self.idle.setSuffix(self.tr(" min"))
        form.addRow(self.tr("Monthly budget for this platform"), self.budget)
        form.addRow(self.tr("Currency"), self.currency)
        form.addRow(self.tr("Planned runtime"), self.hours)
        form.addRow(self.tr("Alert when the GPU is idle for"), self.idle)
        self.auto_release = QCheckBox(self.tr("Release it for me when idle that long"))
        self.auto_release.setObjectName("autoRelease")
        self.auto_release.setToolTip(
            self.tr(
                "After a 10 min countdown you can stop, and only once its backup checklist "
                "passes; change it on the Release page (Auto-release…)."
            )
        )
        form.addRow("", self.auto_release)
        self.replace_budget = QCheckBox()
        self.replace_budget.setObjectName("replaceBudget")
        self.replace_budget.hide()
        self.rate_note = self.note(name="rentalRate")
        self.summary = self.note(name="budgetSummary")
        self.notice = self.note(name="ledgerNotice")
        self.existing: Budget | None = None  # the budget Finish would replace
        lay.addLayout(form)
        lay.addWidget(self.replace_budget)
        lay.addWidget(self.rate_note)
        lay.addWidget(self.summary)
        lay.addWidget(self.notice)
        lay.addStretch(1)
        for signal in (self.budget.textChanged, self.hours.valueChanged):
            signal.connect(self.update_summary)
        self.currency.currentIndexChanged.connect(self._check_existing)

    def initializePage(self) -> None:  # noqa: N802
        prices = self.wiz().state.prices
        if prices is not None:
            self.currency.setCurrentText(prices.currency)
        if self.wiz().services.ledger is None:
            self.notice.setText(not_yet("ledger"))
        self._check_existing()

    def _check_existing(self) -> None:
        """Ask before Finish replaces a monthly budget the user already set for the platform."""
        ledger, host = self.wiz().services.ledger, self.wiz().state.host
        plan = BudgetPlan(host.platform_id if host else None, Decimal(0), self.currency_code())
        self.existing = ledger.existing_budget(plan) if ledger and host else None
        if self.existing is not None:
            old = format_money(self.existing.amount_minor, self.existing.currency)
            self.replace_budget.setText(
                self.tr(
                    "Replace the monthly budget of {amount} already set for {scope} "
                    "with this one (unticked, that budget stays as it is)"
                ).format(amount=old, scope=self.existing.scope)
            )
            self.replace_budget.setChecked(False)
        self.replace_budget.setVisible(self.existing is not None)
        self.update_summary()

    def currency_code(self) -> str:
        return self.currency.currentText()

    def gpu_count(self) -> int:
        host = self.wiz().state.host
        return host.gpu_count if host is not None and host.gpu_count > 0 else 1

    def per_gpu_rate(self) -> Decimal | None:
        """The price per GPU of the billing mode chosen on the billing page."""
        state = self.wiz().state
        prices = state.prices
        if prices is None:
            return None
        if state.billing_mode == "spot":
            return prices.spot_per_hour
        if state.billing_mode == "monthly":
            return prices.monthly_price
        return prices.on_demand_per_hour

    def rate(self) -> Decimal | None:
        """The instance's rate: the per-GPU price times the GPUs rented."""
        per_gpu = self.per_gpu_rate()
        return None if per_gpu is None else instance_rate(per_gpu, self.gpu_count())

    def rate_currency(self) -> str:
        prices = self.wiz().state.prices
        return prices.currency if prices is not None else self.currency_code()

    def amount(self) -> Decimal | None:
        value, _ = self._amount()
        return value

    def _amount(self) -> tuple[Decimal | None, str]:
        try:
            value = parse_user_amount(self.budget.text(), self.tr("the budget"))
        except ValueError as exc:
            return None, sentence(exc)
        if value <= 0:
            return None, self.tr("Enter the budget as a number above 0, e.g. 50.")
        return value, ""

    def update_summary(self) -> None:
        state = self.wiz().state
        (amount, error), per_gpu, rate = self._amount(), self.per_gpu_rate(), self.rate()
        mode, cur = state.billing_mode, self.rate_currency()
        if per_gpu is not None and rate is not None:
            count = self.gpu_count()
            if mode == "monthly":
                unit = self.tr("month")  # as in "$4,800.00/month"
                shown = (
                    rate_derivation(per_gpu, count, cur, unit)
                    if count > 1
                    else self.tr("{amount}/month").format(amount=format_amount(rate, cur))
                )
            else:
                shown = (
                    rate_derivation(per_gpu, count, cur)
                    if count > 1
                    else per_hour(format_amount(rate, cur))
                )
            metered = METERED.get(mode, METERED["on-demand"])
            self.rate_note.setText(
                QCoreApplication.translate("BudgetPage", metered).format(rate=shown)
            )
        if amount is None:
            self.summary.setText(error)
        elif rate is not None:
            granularity = state.platform.billing_granularity if state.platform else "second"
            hours = self.hours.value()
            cost = planned_cost(rate, cur, mode, granularity, hours)
            money = format_money(cost, cur)
            if cur == self.currency_code():
                share = f"{Decimal(cost) / to_minor(amount, cur):.0%}"
                text = PLANNED_OF_BUDGET.get(mode, PLANNED_OF_BUDGET["on-demand"])
                self.summary.setText(
                    QCoreApplication.translate("BudgetPage", text).format(
                        hours=hours, cost=money, share=share
                    )
                )
            else:
                text = PLANNED.get(mode, PLANNED["on-demand"])
                self.summary.setText(
                    QCoreApplication.translate("BudgetPage", text).format(hours=hours, cost=money)
                )
        self.completeChanged.emit()

    def isComplete(self) -> bool:  # noqa: N802
        return self.amount() is not None

    def blocked_reason(self) -> str:
        return self.tr("enter the budget as a number above 0, e.g. 50.")

    def plans(self) -> tuple[RentalPlan, BudgetPlan | None] | None:
        """What the ledger gets at Finish (no budget when the existing one is kept); None when
        no host was saved."""
        state, amount = self.wiz().state, self.amount()
        host = state.host
        if host is None or host.id is None or amount is None:
            return None
        rental = RentalPlan(
            host_id=host.id,
            platform_id=host.platform_id,
            gpu_model=host.gpu_model,
            gpu_count=host.gpu_count,
            billing_mode=state.billing_mode,
            rate=self.rate() or Decimal(0),
            currency=self.rate_currency(),
            granularity=state.platform.billing_granularity if state.platform else "second",
            planned_hours=Decimal(self.hours.value()),
            idle_alert_minutes=self.idle.value(),
            auto_release=self.auto_release.isChecked(),
        )
        keep = self.existing is not None and not self.replace_budget.isChecked()
        budget = None if keep else BudgetPlan(host.platform_id, amount, self.currency_code())
        return rental, budget
