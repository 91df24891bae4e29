"""The Spend page's tabs after History: the chart by platform and the cost per successful
experiment, each built when first shown, each reading the ledger off the GUI thread."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial

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
from gpu_companion.core.spend.reports import (
    ChartData,
    ExperimentCost,
    chart_data,
    experiment_costs,
)
from gpu_companion.ui.common.models import RowTableModel, row_table
from gpu_companion.ui.common.worker import LatestRead
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


class LazyTab(QWidget):
    """A tab's place, its content built by `make` the first time it is shown (`build()`)."""

    def __init__(self, make: Callable[[], QWidget], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._make = make
        self.content: QWidget | None = None
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)

    def build(self) -> QWidget:
        if self.content is None:
            self.content = self._make()
            self._lay.addWidget(self.content)
        return self.content


def _chart_read(
    ledger: SpendLedger, start: datetime, end: datetime, bucket: str, currency: str
) -> tuple[ChartData, str]:
    return chart_data(ledger, start, end, bucket), currency


class ChartTab(QWidget):
    """Spend per day, week or month, stacked by platform, in one currency (no conversion)."""

    def __init__(self, ledger: SpendLedger, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ledger = ledger
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
        self.reads = LatestRead(self._prepare, self._show, self._failed, self)

    def set_currencies(self, currencies: list[str]) -> None:
        if currencies == [self.currency.itemText(i) for i in range(self.currency.count())]:
            return
        current = self.currency.currentText()
        self.currency.clear()
        self.currency.addItems(currencies)
        self.currency.setCurrentText(current)

    def load(self) -> None:
        """Compute the buckets off the GUI thread (a year of days reads many rows)."""
        self.reads.request()

    def _prepare(self) -> Callable[[], tuple[ChartData, str]]:
        bucket = self.bucket.currentData()
        currency = self.currency.currentText() or "USD"
        end = period_of(self.ledger.now(), bucket, self.ledger.tz)[1]
        start = end
        for _ in range(CHART_RANGES[bucket]):
            start = period_of(start - timedelta(seconds=1), bucket, self.ledger.tz)[0]
        return partial(_chart_read, self.ledger, start, end, bucket, currency)

    def _show(self, result: tuple[ChartData, str]) -> None:
        self.chart.show_data(*result)

    def _failed(self, exc: Exception) -> None:
        self.chart.note.setText(self.tr("Could not compute the chart: {error}").format(error=exc))


def _per_success(e: ExperimentCost) -> str:
    if e.per_success_minor is None:
        return QCoreApplication.translate("ExperimentsTab", "no success yet")
    return format_money(e.per_success_minor, e.currency)


class ExperimentsTab(QWidget):
    def __init__(self, ledger: SpendLedger, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ledger = ledger
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
        self.reads = LatestRead(
            lambda: partial(experiment_costs, self.ledger), self.model.set_rows, parent=self
        )

    def load(self) -> None:
        """Sum every tagged rental off the GUI thread (a year of use: a million of them); a
        change while a sum runs sums once more after it."""
        self.reads.request()
