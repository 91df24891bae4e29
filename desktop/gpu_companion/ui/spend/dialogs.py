"""The Spend page's dialogs: start a rental, set a budget, tag an experiment, preview an import."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.money import (
    CURRENCIES,
    format_amount,
    format_money,
    instance_rate,
    rate_derivation,
    sentence,
)
from gpu_companion.core.spend.alerts import (
    DEFAULT_QUIET_HOUR,
    QUIET_HOUR_SETTING,
    RENTAL_ALERTS,
    rental_name,
)
from gpu_companion.core.spend.budgets import Budget
from gpu_companion.core.spend.ledger_csv import ImportPreview, ImportResult, ImportRow, apply_import
from gpu_companion.core.spend.ledger_csv import parse_csv as parse_ledger_csv
from gpu_companion.core.spend.metering import BILLING_MODES, BUCKETS, OUTCOMES, Rental, rate_unit
from gpu_companion.ui.common.models import RowTableModel
from gpu_companion.ui.common.money_input import parse_user_amount
from gpu_companion.ui.common.worker import run_in_thread
from gpu_companion.ui.hosts.page import _FormDialog

if TYPE_CHECKING:
    from gpu_companion.services import Services


class StartRentalDialog(_FormDialog):
    """Start a meter by hand (without the wizard): platform, host, GPU, billing mode, rate."""

    def __init__(self, ctx: Services, parent: QWidget | None = None) -> None:
        super().__init__("Start a rental", parent)
        self.ctx = ctx
        self.platform = QComboBox()
        for p in ctx.registry.platforms():
            self.platform.addItem(p.name, p)
        self.add("platform", "Platform", self.platform)
        self.host = QComboBox()
        self.add("host", "Host", self.host)
        self.gpu_model = self.add("gpu_model", "GPU model", QLineEdit())
        self.gpu_count = QSpinBox()
        self.gpu_count.setRange(0, 64)
        self.gpu_count.setValue(1)
        self.add("gpu_count", "GPU count", self.gpu_count)
        self.billing_mode = QComboBox()
        self.billing_mode.addItems(list(BILLING_MODES))
        self.add("billing_mode", "Billing mode", self.billing_mode)
        self.rate = self.add("rate", "Rate", QLineEdit())
        self.rate.setPlaceholderText("per hour (per week or month for those plans), e.g. 0.39")
        self.rate_basis = QComboBox()
        self.rate_basis.addItem("the whole instance", "instance")
        self.rate_basis.addItem("each GPU", "gpu")
        self.add("rate_basis", "The rate is for", self.rate_basis)
        self.derivation = QLabel()
        self.derivation.setObjectName("rateDerivation")
        self.form.addRow("", self.derivation)
        self.currency = QComboBox()
        self.currency.addItems(list(CURRENCIES))
        self.add("currency", "Currency", self.currency)
        self.runtime = QDoubleSpinBox()
        self.runtime.setRange(0, 24 * 90)
        self.runtime.setDecimals(1)
        self.runtime.setSuffix(" h")
        self.runtime.setSpecialValueText("no plan")
        self.add("planned_end", "Planned runtime", self.runtime)
        self.tag = self.add("tag", "Experiment tag", QLineEdit())
        self.platform.currentIndexChanged.connect(self._platform_changed)
        self.host.currentIndexChanged.connect(self._host_changed)
        self._platform_changed()
        for signal in (
            self.rate.textChanged,
            self.rate_basis.currentIndexChanged,
            self.gpu_count.valueChanged,
            self.billing_mode.currentIndexChanged,
            self.currency.currentIndexChanged,
        ):
            signal.connect(self._show_rate)

    def typed_rate(self) -> Decimal:
        try:
            return parse_user_amount(self.rate.text(), "the rate")
        except ValueError as exc:
            raise ValidationError("rate", sentence(exc)) from None

    def instance_rate(self) -> Decimal:
        """The rate the ledger meters: per instance, multiplied out from a per-GPU price."""
        typed = self.typed_rate()
        if self.rate_basis.currentData() != "gpu":
            return typed
        try:
            return instance_rate(typed, self.gpu_count.value())
        except ValueError as exc:
            raise ValidationError("gpu_count", sentence(exc)) from None

    def _show_rate(self) -> None:
        """'8 × $2.65 = $21.20/h' under the rate, or why the rate cannot be read."""
        unit = rate_unit(self.billing_mode.currentText()).replace("hour", "h")
        cur, count = self.currency.currentText(), self.gpu_count.value()
        try:
            rate = self.instance_rate()
        except ValidationError as exc:
            self.derivation.setText(exc.message if self.rate.text().strip() else "")
            return
        if self.rate_basis.currentData() == "gpu":
            shown = rate_derivation(self.typed_rate(), count, cur, unit)
        else:
            shown = f"{format_amount(rate, cur)}/{unit}"
        self.derivation.setText(f"Metered at {shown} for the instance.")

    def _platform_changed(self) -> None:
        p = self.platform.currentData()
        self.host.clear()
        self.host.addItem("(no host)", None)
        if p is None:
            return
        self.currency.setCurrentText(p.currency)
        for h in self.ctx.registry.hosts(include_released=False):
            if h.platform_id == p.id:
                self.host.addItem(h.alias, h)
        if self.host.count() > 1:
            self.host.setCurrentIndex(1)

    def _host_changed(self) -> None:
        h = self.host.currentData()
        if h is not None:
            self.gpu_model.setText(h.gpu_model)
            self.gpu_count.setValue(max(h.gpu_count, 1))

    def save(self) -> Rental:
        p = self.platform.currentData()
        host = self.host.currentData()
        hours = self.runtime.value()
        return self.ctx.ledger.start_rental(
            p.id if p else -1,
            self.instance_rate(),
            host_id=host.id if host else None,
            gpu_model=self.gpu_model.text(),
            gpu_count=self.gpu_count.value(),
            billing_mode=self.billing_mode.currentText(),
            currency=self.currency.currentText(),
            max_runtime=timedelta(hours=hours) if hours else None,
            tag=self.tag.text(),
        )


class BudgetDialog(_FormDialog):
    def __init__(self, ctx: Services, parent: QWidget | None = None) -> None:
        super().__init__("Set a budget", parent)
        self.ctx = ctx
        self.period = QComboBox()
        for b in BUCKETS:
            self.period.addItem({"day": "Daily", "week": "Weekly", "month": "Monthly"}[b], b)
        self.period.setCurrentIndex(2)
        self.add("period", "Period", self.period)
        self.scope = QComboBox()
        self.scope.addItem("All platforms", None)
        for p in ctx.registry.platforms():
            self.scope.addItem(p.name, p.id)
        self.add("platform", "Applies to", self.scope)
        self.amount = self.add("amount", "Amount", QLineEdit())
        self.currency = QComboBox()
        self.currency.addItems(list(CURRENCIES))
        platforms = ctx.registry.platforms()
        if platforms:
            self.currency.setCurrentText(platforms[0].currency)
        self.add("currency", "Currency", self.currency)
        self.thresholds = self.add("thresholds", "Alert at (%)", QLineEdit("50, 80, 100"))

    def save(self) -> Budget:
        try:
            amount = parse_user_amount(self.amount.text(), "the budget")
        except ValueError as exc:
            raise ValidationError("amount", sentence(exc)) from None
        return self.ctx.budgets.set_budget(
            self.period.currentData(),
            amount,
            self.currency.currentText(),
            platform_id=self.scope.currentData(),
            thresholds=self.thresholds.text(),
        )


class OutcomeDialog(_FormDialog):
    """The experiment tag and outcome of one rental (for cost per successful experiment)."""

    def __init__(self, ctx: Services, rental: Rental, parent: QWidget | None = None) -> None:
        super().__init__("Experiment", parent)
        self.ctx = ctx
        self.rental = rental
        self.tag = self.add("tag", "Experiment tag", QLineEdit(rental.tag))
        self.outcome = QComboBox()
        for o in OUTCOMES:
            self.outcome.addItem(o or "(not decided)", o)
        self.outcome.setCurrentIndex(OUTCOMES.index(rental.outcome))
        self.add("outcome", "Outcome", self.outcome)
        self.notes = self.add("notes", "Notes", QLineEdit(rental.notes))

    def save(self) -> Rental:
        assert self.rental.id is not None
        return self.ctx.ledger.update_rental(
            self.rental.id,
            tag=self.tag.text(),
            outcome=self.outcome.currentData(),
            notes=self.notes.text(),
        )


class AlertsDialog(_FormDialog):
    """The quiet hour for the left-on-overnight alert, and snooze or mute for one rental."""

    def __init__(self, ctx: Services, rental: Rental | None, parent: QWidget | None = None):
        super().__init__("Spend alerts", parent)
        self.ctx = ctx
        self.rental = rental
        text = ctx.store.get_setting(QUIET_HOUR_SETTING, DEFAULT_QUIET_HOUR) or ""
        self.quiet = self.add("quiet_hour", "Left on overnight at", QLineEdit(text))
        self.quiet.setPlaceholderText("HH:MM, empty for no overnight alert")
        self.snooze = QCheckBox("Snooze its alerts for 1 hour")
        self.mute = QCheckBox("Mute its alerts")
        if rental is not None and rental.id is not None:
            self.mute.setChecked(all(ctx.alerts.muted(rental.id, k) for k in RENTAL_ALERTS))
            self.add("snooze", rental_name(rental), self.snooze)
            self.add("mute", "", self.mute)

    def save(self) -> None:
        try:
            self.ctx.alerts.set_quiet_hour(self.quiet.text())
        except ValueError as exc:
            raise ValidationError("quiet_hour", f"{str(exc).capitalize()}.") from None
        r = self.rental
        if r is not None and r.id is not None:
            for kind in RENTAL_ALERTS:
                self.ctx.alerts.mute(r.id, kind, self.mute.isChecked())
                if self.snooze.isChecked():
                    self.ctx.alerts.snooze(r.id, kind, timedelta(hours=1))


def _rate(row: ImportRow) -> str:
    """The row's rate as the bill gives it (never rounded: '$0.3945/h')."""
    r = row.rental
    if r is None:
        return ""
    return f"{format_amount(r.rate, r.currency)}/{rate_unit(r.billing_mode).replace('hour', 'h')}"


def _amount(row: ImportRow) -> str:
    """What the row costs: a charge's amount, a rental's billed or metered cost ('' while one
    still runs)."""
    if row.charge is not None:
        return format_money(row.charge.amount_minor, row.charge.currency)
    r = row.rental
    if r is None:
        return ""
    if r.cost_minor is not None:
        return format_money(r.cost_minor, r.currency)
    if r.ended_at is not None:
        return format_money(r.cost_at(r.ended_at), r.currency)
    return "running"


def _status(row: ImportRow) -> str:
    if row.errors:
        return "refused: " + "; ".join(row.errors)
    return "already in the ledger" if row.duplicate else "will be imported"


class CsvImportDialog(QDialog):
    """Reads and checks the file off the GUI thread, shows each row's fate, imports on OK."""

    def __init__(self, ctx: Services, path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.path = path
        self.preview: ImportPreview | None = None
        self.result_value: ImportResult | None = None
        self.setWindowTitle(f"Import {path.name}")
        self.resize(760, 420)
        lay = QVBoxLayout(self)
        self.summary = QLabel(f"Reading {path}…")
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)
        self.understood = QLabel()
        self.understood.setObjectName("importUnderstood")
        self.understood.setWordWrap(True)
        lay.addWidget(self.understood)
        defaults = QFormLayout()
        self.default_platform = QComboBox()
        self.default_platform.setObjectName("importPlatform")
        self.default_platform.setEditable(True)
        self.default_platform.addItems(["", *(p.name for p in ctx.registry.platforms())])
        self.default_currency = QComboBox()
        self.default_currency.setObjectName("importCurrency")
        self.default_currency.addItems(["", *CURRENCIES])
        defaults.addRow("Platform of rows that name none", self.default_platform)
        defaults.addRow("Currency of rows that name none", self.default_currency)
        lay.addLayout(defaults)
        self.default_platform.currentIndexChanged.connect(self._reread)
        typed = self.default_platform.lineEdit()  # editable: it has one
        if typed is not None:
            typed.editingFinished.connect(self._reread)
        self.default_currency.currentIndexChanged.connect(self._reread)
        self._reads = 0
        self.model: RowTableModel[ImportRow] = RowTableModel(
            [
                ("Line", lambda r: r.line),
                ("Type", lambda r: r.kind),
                ("Platform", lambda r: r.platform),
                ("What", lambda r: r.summary),
                ("Rate", _rate),
                ("Amount", _amount),
                ("Result", _status),
            ]
        )
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.horizontalHeader().setStretchLastSection(True)
        lay.addWidget(self.table, 1)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setText("Import")
        self.ok.setEnabled(False)
        self.buttons.accepted.connect(self._import)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self._reread()

    def defaults(self) -> dict[str, str]:
        """What fills the platform and currency a provider's bill does not name."""
        return {
            "platform": self.default_platform.currentText().strip(),
            "currency": self.default_currency.currentText(),
        }

    def _reread(self) -> None:
        """Read the file again with the defaults chosen; only the latest read is shown."""
        self._reads += 1
        self.ok.setEnabled(False)
        self.worker = run_in_thread(
            self._read, self._reads, self.defaults(), on_result=self._show, on_error=self._failed
        )

    def _read(self, read: int, defaults: dict[str, str]) -> tuple[int, ImportPreview]:
        return read, parse_ledger_csv(self.ctx.ledger, self.path.read_bytes(), defaults)

    def _failed(self, exc: Exception) -> None:
        text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        self.summary.setText(f"Could not read {self.path}: {text}")

    def _show(self, result: tuple[int, ImportPreview]) -> None:
        read, preview = result
        if read != self._reads:
            return  # the defaults changed while this read ran
        self.preview = preview
        self.understood.setText(preview.understood)
        self.model.set_rows(preview.rows)
        if preview.file_errors:
            self.summary.setText(" ".join(preview.file_errors))
            return
        good, bad = len(preview.good), len(preview.bad)
        dupes = sum(r.duplicate for r in preview.rows)
        text = f"{good} rows will be imported, {bad} refused (they are not imported)"
        if dupes:
            text += f", {dupes} already in the ledger"
        if preview.new_platforms:
            text += f". New platforms: {', '.join(preview.new_platforms)}"
        self.summary.setText(text + ".")
        self.ok.setEnabled(good > 0)

    def _import(self) -> None:
        assert self.preview is not None
        self.ok.setEnabled(False)
        self.worker = run_in_thread(
            apply_import, self.ctx.ledger, self.preview, on_result=self._done, on_error=self._failed
        )

    def _done(self, result: ImportResult) -> None:
        self.result_value = result
        self.accept()
