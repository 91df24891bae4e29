"""The Spend page's dialogs: start a rental, set a budget, tag an experiment, preview an import."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QLocale, QObject, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
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
    sentence,
)
from gpu_companion.core.spend.alerts import (
    DEFAULT_QUIET_HOUR,
    QUIET_HOUR_SETTING,
    RENTAL_ALERTS,
    rental_name,
)
from gpu_companion.core.spend.budgets import Budget
from gpu_companion.core.spend.ledger_csv import ImportPreview, ImportResult, ImportRow
from gpu_companion.core.spend.ledger_import import (
    PREVIEW_ROWS,
    ImportCancelled,
    StreamedImport,
    import_csv,
    preview_csv,
)
from gpu_companion.core.spend.metering import BILLING_MODES, BUCKETS, OUTCOMES, Rental
from gpu_companion.ui.common.models import RowTableModel
from gpu_companion.ui.common.money_input import parse_user_amount
from gpu_companion.ui.common.worker import run_in_thread
from gpu_companion.ui.hosts.page import _FormDialog
from gpu_companion.ui.spend.labels import billing_mode_text, kind_text, outcome_text, rate_text

if TYPE_CHECKING:
    from gpu_companion.services import Services


class StartRentalDialog(_FormDialog):
    """Start a meter by hand (without the wizard): platform, host, GPU, billing mode, rate."""

    def __init__(self, ctx: Services, parent: QWidget | None = None) -> None:
        super().__init__(self.tr("Start a rental"), parent)
        self.ctx = ctx
        self.platform = QComboBox()
        for p in ctx.registry.platforms():
            self.platform.addItem(p.name, p)
        self.add("platform", self.tr("Platform"), self.platform)
        self.host = QComboBox()
        self.add("host", self.tr("Host"), self.host)
        self.gpu_model = self.add("gpu_model", self.tr("GPU model"), QLineEdit())
        self.gpu_count = QSpinBox()
        self.gpu_count.setRange(0, 64)
        self.gpu_count.setValue(1)
        self.add("gpu_count", self.tr("GPU count"), self.gpu_count)
        self.billing_mode = QComboBox()
        for mode in BILLING_MODES:  # shown translated, stored as the ledger's word
            self.billing_mode.addItem(billing_mode_text(mode), mode)
        self.add("billing_mode", self.tr("Billing mode"), self.billing_mode)
        self.rate = self.add("rate", self.tr("Rate"), QLineEdit())
        self.rate.setPlaceholderText(
            self.tr("per hour (per week or month for those plans), e.g. 0.39")
        )
        self.rate_basis = QComboBox()
        self.rate_basis.addItem(self.tr("the whole instance"), userData="instance")
        self.rate_basis.addItem(self.tr("each GPU"), userData="gpu")
        self.add("rate_basis", self.tr("The rate is for"), self.rate_basis)
        self.derivation = QLabel()
        self.derivation.setObjectName("rateDerivation")
        self.form.addRow("", self.derivation)
        self.currency = QComboBox()
        self.currency.addItems(list(CURRENCIES))
        self.add("currency", self.tr("Currency"), self.currency)
        self.runtime = QDoubleSpinBox()
        self.runtime.setRange(0, 24 * 90)
        self.runtime.setDecimals(1)
        self.runtime.setSuffix(self.tr(" h"))
        self.runtime.setSpecialValueText(self.tr("no plan"))
        self.add("planned_end", self.tr("Planned runtime"), self.runtime)
        self.tag = self.add("tag", self.tr("Experiment tag"), QLineEdit())
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
            return parse_user_amount(self.rate.text(), self.tr("the rate"))
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
        mode = self.billing_mode.currentData() or "on-demand"
        cur, count = self.currency.currentText(), self.gpu_count.value()
        try:
            rate = self.instance_rate()
        except ValidationError as exc:
            self.derivation.setText(exc.message if self.rate.text().strip() else "")
            return
        shown = rate_text(format_amount(rate, cur), mode)
        if self.rate_basis.currentData() == "gpu":  # '8 × $2.65 = $21.20/h'
            shown = f"{count} × {format_amount(self.typed_rate(), cur)} = {shown}"
        self.derivation.setText(self.tr("Metered at {rate} for the instance.").format(rate=shown))

    def _platform_changed(self) -> None:
        p = self.platform.currentData()
        self.host.clear()
        self.host.addItem(self.tr("(no host)"), None)
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
            billing_mode=self.billing_mode.currentData(),
            currency=self.currency.currentText(),
            max_runtime=timedelta(hours=hours) if hours else None,
            tag=self.tag.text(),
        )


class BudgetDialog(_FormDialog):
    def __init__(self, ctx: Services, parent: QWidget | None = None) -> None:
        super().__init__(self.tr("Set a budget"), parent)
        self.ctx = ctx
        self.period = QComboBox()
        names = {"day": self.tr("Daily"), "week": self.tr("Weekly"), "month": self.tr("Monthly")}
        for b in BUCKETS:
            self.period.addItem(names[b], b)
        self.period.setCurrentIndex(2)
        self.add("period", self.tr("Period"), self.period)
        self.scope = QComboBox()
        self.scope.addItem(self.tr("All platforms"), None)
        for p in ctx.registry.platforms():
            self.scope.addItem(p.name, p.id)
        self.add("platform", self.tr("Applies to"), self.scope)
        self.amount = self.add("amount", self.tr("Amount"), QLineEdit())
        self.currency = QComboBox()
        self.currency.addItems(list(CURRENCIES))
        platforms = ctx.registry.platforms()
        if platforms:
            self.currency.setCurrentText(platforms[0].currency)
        self.add("currency", self.tr("Currency"), self.currency)
        self.thresholds = self.add("thresholds", self.tr("Alert at (%)"), QLineEdit("50, 80, 100"))

    def save(self) -> Budget:
        try:
            amount = parse_user_amount(self.amount.text(), self.tr("the budget"))
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
        super().__init__(self.tr("Experiment"), parent)
        self.ctx = ctx
        self.rental = rental
        self.tag = self.add("tag", self.tr("Experiment tag"), QLineEdit(rental.tag))
        self.outcome = QComboBox()
        for o in OUTCOMES:
            self.outcome.addItem(outcome_text(o, undecided=True), o)
        self.outcome.setCurrentIndex(OUTCOMES.index(rental.outcome))
        self.add("outcome", self.tr("Outcome"), self.outcome)
        self.notes = self.add("notes", self.tr("Notes"), QLineEdit(rental.notes))

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
        super().__init__(self.tr("Spend alerts"), parent)
        self.ctx = ctx
        self.rental = rental
        text = ctx.store.get_setting(QUIET_HOUR_SETTING, DEFAULT_QUIET_HOUR) or ""
        self.quiet = self.add("quiet_hour", self.tr("Left on overnight at"), QLineEdit(text))
        self.quiet.setPlaceholderText(self.tr("HH:MM, empty for no overnight alert"))
        self.snooze = QCheckBox(self.tr("Snooze its alerts for 1 hour"))
        self.mute = QCheckBox(self.tr("Mute its alerts"))
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
    return rate_text(format_amount(r.rate, r.currency), r.billing_mode)


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
    return QCoreApplication.translate("CsvImportDialog", "running")


def _status(row: ImportRow) -> str:
    if row.errors:
        return QCoreApplication.translate("CsvImportDialog", "refused: {errors}").format(
            errors="; ".join(row.errors)
        )
    if row.duplicate:
        return QCoreApplication.translate("CsvImportDialog", "already in the ledger")
    return QCoreApplication.translate("CsvImportDialog", "will be imported")


class _ImportProgress(QObject):
    """The import's progress, from its worker thread to the dialog's (a queued signal)."""

    moved = Signal(int, int)  # the file's line reached, about how many it has


class CsvImportDialog(QDialog):
    """Reads and checks the file off the GUI thread, shows each row's fate (the first
    `PREVIEW_ROWS`: the rest are counted, never held), imports it streamed on OK, with its
    progress; Cancel (or closing the dialog) while it imports stops it, storing nothing."""

    preview_rows = PREVIEW_ROWS

    def __init__(self, ctx: Services, path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.path = path
        self.preview: ImportPreview | None = None
        self.total = 0  # the file's rows, the preview's and the rest
        self.result_value: ImportResult | None = None
        self.setWindowTitle(self.tr("Import {file}").format(file=path.name))
        self.resize(760, 420)
        lay = QVBoxLayout(self)
        self.summary = QLabel(self.tr("Reading {path}…").format(path=path))
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
        defaults.addRow(self.tr("Platform of rows that name none"), self.default_platform)
        defaults.addRow(self.tr("Currency of rows that name none"), self.default_currency)
        lay.addLayout(defaults)
        self.default_platform.currentIndexChanged.connect(self._reread)
        typed = self.default_platform.lineEdit()  # editable: it has one
        if typed is not None:
            typed.editingFinished.connect(self._reread)
        self.default_currency.currentIndexChanged.connect(self._reread)
        self._reads = 0
        self.model: RowTableModel[ImportRow] = RowTableModel(
            [
                (self.tr("Line"), lambda r: r.line),
                (self.tr("Type"), lambda r: kind_text(r.kind)),
                (self.tr("Platform"), lambda r: r.platform),
                (self.tr("What"), lambda r: r.summary),
                (self.tr("Rate"), _rate),
                (self.tr("Amount"), _amount),
                (self.tr("Result"), _status),
            ]
        )
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.horizontalHeader().setStretchLastSection(True)
        lay.addWidget(self.table, 1)
        self.bar = QProgressBar()
        self.bar.setObjectName("importProgress")
        self.bar.setRange(0, 1000)
        self.bar.hide()
        lay.addWidget(self.bar)
        self.importing = False
        self._read_with: dict[str, str] = {}  # the defaults of the latest read
        self._progress = _ImportProgress(self)
        self._progress.moved.connect(self._moved)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setText(self.tr("Import"))
        self.ok.setEnabled(False)
        self.cancel = self.buttons.button(QDialogButtonBox.StandardButton.Cancel)
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
        """Read the file again with the defaults chosen, when they changed (the platform's
        field also says so when it only loses focus); only the latest read is shown."""
        if self.importing or (self._reads and self.defaults() == self._read_with):
            return
        self._read_with = self.defaults()
        self._reads += 1
        self.ok.setEnabled(False)
        self.worker = run_in_thread(
            self._read, self._reads, self.defaults(), on_result=self._show, on_error=self._failed
        )

    def _read(self, read: int, defaults: dict[str, str]) -> tuple[int, ImportPreview, int]:
        return read, *preview_csv(self.ctx.ledger, self.path, defaults, self.preview_rows)

    def _failed(self, exc: Exception) -> None:
        text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        self.summary.setText(
            self.tr("Could not read {path}: {error}").format(path=self.path, error=text)
        )

    def _show(self, result: tuple[int, ImportPreview, int]) -> None:
        read, preview, total = result
        if read != self._reads:
            return  # the defaults changed while this read ran
        self.preview, self.total = preview, total
        self.understood.setText(preview.understood)
        self.model.set_rows(preview.rows)
        if preview.file_errors:
            self.summary.setText(" ".join(preview.file_errors))
            return
        good, bad = len(preview.good), len(preview.bad)
        dupes = sum(r.duplicate for r in preview.rows)
        if dupes:
            text = QCoreApplication.translate(
                "CsvImportDialog",
                "%n rows will be imported, {refused} refused (they are not imported), "
                "{duplicates} already in the ledger.",
                None,
                good,
            )
        else:
            text = QCoreApplication.translate(
                "CsvImportDialog",
                "%n rows will be imported, {refused} refused (they are not imported).",
                None,
                good,
            )
        text = text.format(refused=bad, duplicates=dupes)
        if total > len(preview.rows):
            text = self.tr(
                "The first {shown} of {total} rows: {summary} The others are checked as they "
                "are imported."
            ).format(
                shown=QLocale().toString(len(preview.rows)),
                total=QLocale().toString(total),
                summary=text,
            )
        if preview.new_platforms:
            text = self.tr("{summary} New platforms: {platforms}.").format(
                summary=text, platforms=", ".join(preview.new_platforms)
            )
        self.summary.setText(text)
        self.ok.setEnabled(good > 0 or total > len(preview.rows))

    def _import(self) -> None:
        """The file read again and imported a batch at a time (`import_csv`): what the preview
        showed, and every row after it."""
        assert self.preview is not None
        self._importing(True)
        self.summary.setText(self.tr("Importing…"))
        self.worker = run_in_thread(
            import_csv,
            self.ctx.ledger,
            self.path,
            self.defaults(),
            progress=self._progress.moved.emit,
            on_result=self._done,
            on_error=self._import_failed,
        )

    def _importing(self, on: bool) -> None:
        self.importing = on
        self.bar.setVisible(on)
        self.bar.setRange(0, 1000)
        self.bar.setValue(0)
        for widget in (self.ok, self.default_platform, self.default_currency):
            widget.setEnabled(not on)
        self.cancel.setEnabled(True)

    def _moved(self, line: int, lines: int) -> None:
        if not self.importing or self.worker.cancel_event.is_set():
            return
        if line >= lines:  # every row stored: the indexes and the commit, which cannot stop
            self.bar.setRange(0, 0)
            self.cancel.setEnabled(False)
            self.summary.setText(self.tr("Saving the imported rows…"))
            return
        self.bar.setValue(1000 * line // max(lines, 1))
        self.summary.setText(
            self.tr("Importing: line {line} of about {lines}…").format(
                line=QLocale().toString(line), lines=QLocale().toString(lines)
            )
        )

    def reject(self) -> None:
        """Cancel: while importing, stop the import (nothing is stored) and stay open; once
        cancelling, or saving (which cannot stop), wait."""
        if not self.importing:
            super().reject()
            return
        if not self.cancel.isEnabled():
            return
        self.worker.cancel()
        self.cancel.setEnabled(False)
        self.summary.setText(self.tr("Cancelling the import…"))

    def _import_failed(self, exc: Exception) -> None:
        self._importing(False)
        if isinstance(exc, ImportCancelled):  # its words say so, in the user's language
            self.summary.setText(str(exc))
            return
        self._failed(exc)

    def _done(self, done: StreamedImport) -> None:
        self._importing(False)
        if done.info.file_errors:  # the file changed since the preview
            self.summary.setText(" ".join(done.info.file_errors))
            return
        self.result_value = done.result
        self.accept()
