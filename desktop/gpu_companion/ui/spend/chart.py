"""Spend per day, week or month as bars stacked by platform (pyqtgraph, imported on first use)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from gpu_companion.core.common.money import format_money, from_minor
from gpu_companion.core.spend.reports import ChartData

PALETTE = ("#3182ce", "#dd6b20", "#38a169", "#805ad5", "#d53f8c", "#319795", "#718096")


def stacks(data: ChartData, currency: str) -> dict[str, list[float]]:
    """Per platform, one bar height per bucket (in currency units) for one currency."""
    platforms = sorted({p for b in data.values() for (p, c) in b if c == currency})
    return {
        p: [float(from_minor(b.get((p, currency), 0), currency)) for b in data.values()]
        for p in platforms
    }


class SpendChart(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)
        self.note = QLabel()
        self._lay.addWidget(self.note)
        self.plot: Any = None
        self.bars: list[Any] = []

    def _ensure_plot(self) -> Any:
        if self.plot is None:
            import pyqtgraph as pg  # lazy: 0.25 s the first window does not need

            self.plot = pg.PlotWidget(background=None)
            self.plot.showGrid(y=True, alpha=0.3)
            self.plot.addLegend(offset=(10, 10))
            self.plot.setMouseEnabled(x=False, y=False)
            self._lay.addWidget(self.plot, 1)
        return self.plot

    def show_data(self, data: ChartData, currency: str) -> None:
        import pyqtgraph as pg

        plot = self._ensure_plot()
        plot.clear()
        if plot.plotItem.legend is not None:
            plot.plotItem.legend.clear()
        self.bars = []
        labels = list(data)
        heights = stacks(data, currency)
        base = [0.0] * len(labels)
        for i, (platform, values) in enumerate(heights.items()):
            bar = pg.BarGraphItem(
                x=list(range(len(labels))),
                y0=list(base),
                height=values,
                width=0.8,
                brush=PALETTE[i % len(PALETTE)],
                pen=None,
                name=platform,
            )
            plot.addItem(bar)
            self.bars.append(bar)
            base = [b + v for b, v in zip(base, values, strict=True)]
        step = max(1, len(labels) // 8)
        ticks = [(i, labels[i]) for i in range(0, len(labels), step)]
        plot.getAxis("bottom").setTicks([ticks])
        plot.setLabel(axis="left", text=currency)  # the currency code: the same in every language
        if not heights:
            self.note.setText(
                self.tr("No spend in {currency} in this range.").format(currency=currency)
            )
            return
        total = sum(b.get((p, currency), 0) for b in data.values() for p in heights)
        periods = len(labels)  # a plain name: lupdate drops a translate() counting an expression
        self.note.setText(
            QCoreApplication.translate(
                "SpendChart", "%n periods, {total} in all", None, periods
            ).format(total=format_money(total, currency))
        )
