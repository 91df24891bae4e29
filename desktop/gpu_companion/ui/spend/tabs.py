"""Two tabs of the Spend page: the chart by platform and the cost per successful experiment."""

from __future__ import annotations

from datetime import timedelta

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.money import format_money
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.metering import BUCKETS, period_of
from gpu_companion.core.spend.reports import ExperimentCost, chart_data, experiment_costs
from gpu_companion.ui.common.models import RowTableModel, row_table
from gpu_companion.ui.common.worker import Worker, run_in_thread
from gpu_companion.ui.spend.chart import SpendChart

CHART_RANGES = {"day": 30, "week": 12, "month": 12}  # buckets shown
RANGE_LABELS = dict(  # per bucket ("day", "week", "month"), translated where shown
    zip(
        BUCKETS,
        (
            str(QT_TRANSLATE_NOOP("ChartTab", "per day, last {n}")),
            str(QT_TRANSLATE_NOOP("ChartTab", "per week, last {n}")),
            str(QT_TRANSLATE_NOOP("ChartTab", "per month, last {n}")),
        ),
        strict=True,
    )
)


class ChartTab(QWidget):
    """Spend per day, week or month, stacked by platform, in one currency (no conversion)."""

    def __init__(self, ledger: SpendLedger, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ledger = ledger
        self.worker: Worker | None = None
        lay = QVBoxLayout(self)
        row = QHBoxLayout()
        self.bucket, self.currency = QComboBox(), QComboBox()
        for b, n in CHART_RANGES.items():
            label = QCoreApplication.translate("ChartTab", RANGE_LABELS[b]).format(n=n)
            self.bucket.addItem(label, b)
        row.addWidget(QLabel(self.tr("Spend")))
        row.addWidget(self.bucket)
        row.addWidget(QLabel(self.tr("in")))
        row.addWidget(self.currency)
        row.addStretch(1)
        self.bucket.activated.connect(lambda _i: self.load())
        self.currency.activated.connect(lambda _i: self.load())
        lay.addLayout(row)
        self.chart = SpendChart()
        lay.addWidget(self.chart, 1)

    def set_currencies(self, currencies: list[str]) -> None:
        current = self.currency.currentText()
        self.currency.clear()
        self.currency.addItems(currencies)
        self.currency.setCurrentText(current)

    def load(self) -> None:
        """Compute the buckets off the GUI thread (a year of days reads many rows)."""
        bucket = self.bucket.currentData()
        currency = self.currency.currentText() or "USD"
        end = period_of(self.ledger.now(), bucket, self.ledger.tz)[1]
        start = end
        for _ in range(CHART_RANGES[bucket]):
            start = period_of(start - timedelta(seconds=1), bucket, self.ledger.tz)[0]
        self.worker = run_in_thread(
            chart_data,
            self.ledger,
            start,
            end,
            bucket,
            on_result=lambda data: self.chart.show_data(data, currency),
            on_error=lambda exc: self.chart.note.setText(
                self.tr("Could not compute the chart: {error}").format(error=exc)
            ),
        )


def _per_success(e: ExperimentCost) -> str:
    if e.per_success_minor is None:
        return QCoreApplication.translate("ExperimentsTab", "no success yet")
    return format_money(e.per_success_minor, e.currency)


class ExperimentsTab(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.addWidget(
            QLabel(
                self.tr(
                    "Tag rentals with an experiment and mark the outcome (History → Experiment…)."
                )
            )
        )
        self.model: RowTableModel[ExperimentCost] = RowTableModel(
            [
                (self.tr("Experiment"), lambda e: e.tag),
                (self.tr("Runs"), lambda e: e.runs),
                (self.tr("Successful"), lambda e: e.successes),
                (self.tr("Total cost"), lambda e: format_money(e.total_minor, e.currency)),
                (self.tr("Cost per success"), _per_success),
            ]
        )
        lay.addWidget(row_table(self.model), 1)
        self.worker: Worker | None = None
        self._loading = self._again = False

    def load(self, ledger: SpendLedger) -> None:
        """Sum every tagged rental off the GUI thread (a year of use: a million of them); a
        change while a sum runs sums once more after it."""
        if self._loading:
            self._again = True
            return
        self._loading = True

        def done(costs: list[ExperimentCost]) -> None:
            self._loading = False
            self.model.set_rows(costs)
            if self._again:
                self._again = False
                self.load(ledger)

        def failed(_exc: BaseException) -> None:
            self._loading = False

        self.worker = run_in_thread(experiment_costs, ledger, on_result=done, on_error=failed)
