"""The last two pages: the self-check of the new host, then the budget and planned runtime that
start the ledger's meter."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal, InvalidOperation

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from gpu_companion.core.hosts.registry import CURRENCIES
from gpu_companion.core.selfcheck.check import SelfCheckOptions
from gpu_companion.ui.common.selfcheck_view import SelfCheckView
from gpu_companion.ui.wizard.plan_pages import WizardPage
from gpu_companion.ui.wizard.services import NOT_YET, BudgetPlan, RentalPlan


class SelfCheckPage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle("Self-check")
        self.setSubTitle(
            "Before you upload anything: is the GPU there and free, does PyTorch see "
            "it, and is the data disk big and fast enough?"
        )
        lay = QVBoxLayout(self)
        self.notice = self.note(name="selfcheckNotice")
        self.view = SelfCheckView()
        self.again = QPushButton("Run again")
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
            self.notice.setText(NOT_YET["sessions"])
            return
        card = wiz.state.card.id if wiz.state.card else None
        key = (host.hostname, host.port, host.user, host.gpu_count, card)
        if key == self.checked_host and self.view.complete:
            return  # back and forth keeps a finished result; "Run again" repeats it
        self.checked_host = key
        self.notice.setText("A failure here costs nothing yet: fix it before the paid hours run.")
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
        return "the self-check is still running (Cancel stops it)."

    def cleanupPage(self) -> None:  # noqa: N802
        """Back: a running check stops; its partial result is not kept as a result."""
        self.view.cancel()


class BudgetPage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle("Budget and planned runtime")
        self.setSubTitle(
            "The ledger meters the rental from now on and warns at 50%, 80% and 100% "
            "of the budget, when the GPU sits idle, and before the planned end."
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
        self.hours.setSuffix(" h")
        self.idle = QSpinBox()
        self.idle.setObjectName("idleMinutes")
        self.idle.setRange(5, 24 * 60)
        self.idle.setValue(30)
        self.idle.setSuffix(" min")
        form.addRow("Monthly budget for this platform", self.budget)
        form.addRow("Currency", self.currency)
        form.addRow("Planned runtime", self.hours)
        form.addRow("Alert when the GPU is idle for", self.idle)
        self.summary = self.note(name="budgetSummary")
        self.notice = self.note(name="ledgerNotice")
        lay.addLayout(form)
        lay.addWidget(self.summary)
        lay.addWidget(self.notice)
        lay.addStretch(1)
        for signal in (self.budget.textChanged, self.hours.valueChanged):
            signal.connect(self.update_summary)

    def initializePage(self) -> None:  # noqa: N802
        prices = self.wiz().state.prices
        if prices is not None:
            self.currency.setCurrentText(prices.currency)
        if self.wiz().services.ledger is None:
            self.notice.setText(NOT_YET["ledger"])
        self.update_summary()

    def rate(self) -> Decimal | None:
        prices = self.wiz().state.prices
        return prices.on_demand_per_hour if prices else None

    def amount(self) -> Decimal | None:
        try:
            value = Decimal(self.budget.text().strip().replace(",", ""))
        except InvalidOperation:
            return None
        return value if value.is_finite() and value > 0 else None

    def update_summary(self) -> None:
        amount, rate = self.amount(), self.rate()
        if amount is None:
            self.summary.setText("Enter the budget as a number above 0, e.g. 50.")
        elif rate is not None:
            cost = (rate * self.hours.value()).quantize(Decimal("0.01"))
            share = cost / amount
            self.summary.setText(
                f"{self.hours.value()} h on demand at {rate:.2f}/h ≈ {cost} "
                f"{self.currency.currentText()}, {share:.0%} of this budget."
            )
        self.completeChanged.emit()

    def isComplete(self) -> bool:  # noqa: N802
        return self.amount() is not None

    def blocked_reason(self) -> str:
        return "enter the budget as a number above 0, e.g. 50."

    def plans(self) -> tuple[RentalPlan, BudgetPlan] | None:
        """What the ledger gets at Finish; None when no host was saved."""
        state, amount = self.wiz().state, self.amount()
        host = state.host
        if host is None or host.id is None or amount is None:
            return None
        rental = RentalPlan(
            host_id=host.id,
            platform_id=host.platform_id,
            gpu_model=host.gpu_model,
            gpu_count=host.gpu_count,
            billing_mode="on-demand",
            rate=self.rate() or Decimal(0),
            currency=self.currency.currentText(),
            granularity=state.platform.billing_granularity if state.platform else "second",
            planned_hours=Decimal(self.hours.value()),
            idle_alert_minutes=self.idle.value(),
        )
        budget = BudgetPlan(host.platform_id, amount, self.currency.currentText())
        return rental, budget
