"""Two tabs of the Spend page: the chart by platform and the cost per successful experiment."""

from __future__ import annotations

from datetime import timedelta

from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.money import format_money
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.metering import period_of
from gpu_companion.core.spend.reports import ExperimentCost, chart_data
from gpu_companion.ui.common.models import RowTableModel, row_table
from gpu_companion.ui.common.worker import Worker, run_in_thread
from gpu_companion.ui.spend.chart import SpendChart

CHART_RANGES = {"day": 30, "week": 12, "month": 12}  # buckets shown


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
            self.bucket.addItem(f"per {b}, last {n}", b)
        row.addWidget(QLabel("Spend"))
        row.addWidget(self.bucket)
        row.addWidget(QLabel("in"))
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
            on_error=lambda exc: self.chart.note.setText(f"Could not compute the chart: {exc}"),
        )


def _per_success(e: ExperimentCost) -> str:
    if e.per_success_minor is None:
        return "no success yet"
    return format_money(e.per_success_minor, e.currency)


class ExperimentsTab(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.addWidget(
            QLabel("Tag rentals with an experiment and mark the outcome (History → Experiment…).")
        )
        self.model: RowTableModel[ExperimentCost] = RowTableModel(
            [
                ("Experiment", lambda e: e.tag),
                ("Runs", lambda e: e.runs),
                ("Successful", lambda e: e.successes),
                ("Total cost", lambda e: format_money(e.total_minor, e.currency)),
                ("Cost per success", _per_success),
            ]
        )
        lay.addWidget(row_table(self.model), 1)
