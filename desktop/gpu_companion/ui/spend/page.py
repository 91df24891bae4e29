"""Spend page: live meters of running rentals, budgets, history with filters, a chart by
platform, cost per successful experiment, CSV export and import.

The ledger is read off the GUI thread (a year of use holds a million rentals): the page is built
empty, each refresh is one read in a worker whose result fills it, and refreshes asked for while
a read runs coalesce into one more. The Chart and Experiments tabs are built, and read, only when
shown."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.money import format_amount, format_money, format_totals
from gpu_companion.core.common.text import format_duration
from gpu_companion.core.hosts.registry import Platform
from gpu_companion.core.spend.alerts import rental_name
from gpu_companion.core.spend.budgets import BudgetStatus
from gpu_companion.core.spend.ledger import HistoryFilter
from gpu_companion.core.spend.ledger_csv import export_csv
from gpu_companion.core.spend.metering import Rental, period_of
from gpu_companion.core.spend.reports import (
    burn_text,
    period_report,
    today,
)
from gpu_companion.ui.common.flow import button_bar
from gpu_companion.ui.common.models import RowTableModel, row_table
from gpu_companion.ui.common.page import EmptyStatePage, Navigator
from gpu_companion.ui.common.widgets import EmptyState
from gpu_companion.ui.common.worker import LatestRead, run_in_thread
from gpu_companion.ui.spend.dialogs import (
    AlertsDialog,
    BudgetDialog,
    CsvImportDialog,
    OutcomeDialog,
    StartRentalDialog,
)
from gpu_companion.ui.spend.labels import (
    billing_mode_text,
    end_reason_text,
    outcome_text,
    rate_text,
)
from gpu_companion.ui.spend.tabs import ChartTab, ExperimentsTab, LazyTab

if TYPE_CHECKING:
    from gpu_companion.services import Services

# the newest rentals the history shows (a year of use matches tens of thousands; 5,000 took
# 140 ms to read and fill on the GUI thread at a million rentals): the filters narrow it down
HISTORY_LIMIT = 1000
EXPORT_NAME = "gpu-companion-ledger.csv"  # a file name, the same in every language
# a provider's bill comes as .csv or tab-separated .tsv (the reader finds the delimiter itself)
IMPORT_FILTER = str(
    QT_TRANSLATE_NOOP(
        "SpendPage",
        "Ledger and bills (*.csv *.tsv);;CSV files (*.csv);;Tab-separated (*.tsv);;All files (*)",
    )
)
PERIODS = {  # filter label (translated where shown) -> (bucket, how many back), None: everything
    str(QT_TRANSLATE_NOOP("SpendPage", "Last 30 days")): ("30 days", 0),
    str(QT_TRANSLATE_NOOP("SpendPage", "This month")): ("month", 0),
    str(QT_TRANSLATE_NOOP("SpendPage", "Last month")): ("month", 1),
    str(QT_TRANSLATE_NOOP("SpendPage", "This week")): ("week", 0),
    str(QT_TRANSLATE_NOOP("SpendPage", "This year")): ("year", 0),
    str(QT_TRANSLATE_NOOP("SpendPage", "All time")): None,
}
# what one read of the ledger covers: the totals and budgets (every 10 s while shown), the
# platforms, running rentals and filter lists, and the history under the filters
SUMMARY, ROWS, HISTORY = "summary", "rows", "history"
EVERYTHING = frozenset({SUMMARY, ROWS, HISTORY})
HISTORY_TAB, CHART_TAB, EXPERIMENTS_TAB = 0, 1, 2
READ_AFTER_PAINT = QEvent.Type(QEvent.registerEventType())


@dataclass
class SpendView:
    """What one read of the ledger found; a part not read is None."""

    platforms: list[Platform] | None = None
    running: list[Rental] | None = None
    gpus: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    currencies: list[str] = field(default_factory=list)
    history: list[Rental] | None = None
    choice: tuple[object, ...] = ()  # the filters' choices the history was read for
    history_totals: dict[str, int] = field(default_factory=dict)
    today: dict[str, int] | None = None
    month: dict[str, int] = field(default_factory=dict)
    burn: str = ""
    budgets: list[BudgetStatus] = field(default_factory=list)


def read_view(
    ctx: Services, parts: frozenset[str], filt: HistoryFilter, choice: tuple[object, ...]
) -> SpendView:
    """The parts of the page asked for, read in a worker thread (never on the GUI thread)."""
    ledger, view = ctx.ledger, SpendView(choice=choice)
    if ROWS in parts:
        view.platforms = ctx.registry.platforms()
        view.running = ledger.running()
        view.gpus = ledger.distinct("gpu_model")
        view.tags = ledger.distinct("tag")
        view.currencies = sorted(
            set(ledger.distinct("currency")) | {p.currency for p in view.platforms}
        )
    if HISTORY in parts:
        view.history = ledger.history(filt, limit=HISTORY_LIMIT)
        now = ledger.now()
        for r in view.history:
            view.history_totals[r.currency] = view.history_totals.get(r.currency, 0) + r.cost_at(
                now
            )
    if SUMMARY in parts:
        view.today = today(ledger)
        view.month = period_report(ledger, "month").totals
        view.burn = burn_text(ledger)
        view.budgets = ctx.budgets.statuses()
    return view


class SpendPage(EmptyStatePage):
    key, title, icon_name = "spend", str(QT_TRANSLATE_NOOP("SpendPage", "Spend")), "spend"
    # a rental started, ended or changed anywhere (any thread): re-read while on show
    ledger_changed = Signal()

    def __init__(self, ctx: Services, nav: Navigator, parent: QWidget | None = None) -> None:
        super().__init__(ctx, nav, parent)
        self.ledger = ctx.ledger
        self.empty = EmptyState(
            "spend",
            self.tr("No platform to meter yet"),
            self.tr(
                "Every rental is metered here from its start time, with budgets, alerts and "
                "reports. Add the platform you rent from (and its hosts) first."
            ),
            [(self.tr("Add a host"), lambda: nav.navigate("hosts"))],
        )
        self.stack.addWidget(self.empty)
        body = QWidget()
        self.stack.addWidget(body)
        self.unread = QWidget()  # until the first read says whether there is a platform
        self.stack.addWidget(self.unread)
        self.stack.setCurrentWidget(self.unread)
        lay = QVBoxLayout(body)

        self.summary = QLabel()
        self.summary.setObjectName("spendSummary")
        font = self.summary.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.summary.setFont(font)
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)
        self.buttons: dict[str, QPushButton] = {}
        for name, label, slot in (
            ("start", self.tr("Start rental…"), self.start_rental),
            ("stop", self.tr("Stop meter"), self.stop_rental),
            ("budget", self.tr("Budget…"), self.set_budget),
            ("alerts", self.tr("Alerts…"), self.edit_alerts),
            ("import", self.tr("Import CSV…"), self.import_csv),
            ("export", self.tr("Export CSV…"), self.export_csv),
        ):
            b = QPushButton(label)
            b.setObjectName(f"spend_{name}")
            b.clicked.connect(slot)
            self.buttons[name] = b
        lay.addWidget(button_bar(*self.buttons.values()))  # wraps in a narrow window
        self.budget_box = QVBoxLayout()
        lay.addLayout(self.budget_box)
        self.budget_bars: list[QProgressBar] = []

        lay.addWidget(QLabel(self.tr("<b>Running now</b>")))
        self.running_model: RowTableModel[Rental] = RowTableModel(
            [
                (self.tr("Rental"), rental_name),
                (self.tr("Platform"), lambda r: r.platform_name),
                ("GPU", lambda r: f"{r.gpu_count} × {r.gpu_model}" if r.gpu_model else ""),
                (self.tr("Billing"), self._billing),
                (self.tr("Started"), lambda r: self._local(r.started_at)),
                (self.tr("Elapsed"), lambda r: format_duration(r.elapsed(self.ledger.now()))),
                (
                    self.tr("Cost so far"),
                    lambda r: format_money(r.cost_at(self.ledger.now()), r.currency),
                ),
                (
                    self.tr("Planned end"),
                    lambda r: self._local(r.planned_end) if r.planned_end else "",
                ),
            ]
        )
        self.running_view = _sized_on_fill(row_table(self.running_model))  # type: ignore[arg-type]
        self.running_view.setMaximumHeight(120)
        lay.addWidget(self.running_view)

        self.tabs = QTabWidget()
        lay.addWidget(self.tabs, 1)
        self._build_history()
        # built on first show: the chart's plot and a sum over every tagged rental wait for it
        self.chart_place = LazyTab(self._make_chart)
        self.tabs.addTab(self.chart_place, self.tr("Chart"))
        self.experiments_place = LazyTab(lambda: ExperimentsTab(self.ledger))
        self.tabs.addTab(self.experiments_place, self.tr("Experiments"))
        self._history_stale = False
        self._missed_change = False  # the ledger changed while the page was hidden
        self.tabs.currentChanged.connect(self._tab_changed)
        self.currencies: list[str] = []

        self.meter = QTimer(self)  # live meters: recomputed from timestamps, so cheap
        self.meter.setInterval(1000)
        self.meter.timeout.connect(self.tick)
        self._ticks = 0
        self._wanted: set[str] = set()
        self._read_posted = False
        self.reads = LatestRead(self._prepare_read, self._apply, self._read_failed, self)
        self.ledger_changed.connect(self._on_ledger_changed, Qt.ConnectionType.QueuedConnection)
        unsubscribe = self.ledger.on_rentals_changed.subscribe(
            lambda _none: self.ledger_changed.emit()  # any thread: it only posts
        )
        self.destroyed.connect(lambda *_: unsubscribe())
        self.refresh()

    # --- building -------------------------------------------------------------------------

    @property
    def chart_tab(self) -> ChartTab | None:
        """The Chart tab once it was shown (None before)."""
        content = self.chart_place.content
        return content if isinstance(content, ChartTab) else None

    @property
    def experiments(self) -> ExperimentsTab | None:
        """The Experiments tab once it was shown (None before)."""
        content = self.experiments_place.content
        return content if isinstance(content, ExperimentsTab) else None

    def _make_chart(self) -> ChartTab:
        tab = ChartTab(self.ledger)
        tab.set_currencies(self.currencies)
        return tab

    def _tab_changed(self, index: int) -> None:
        """A tab is read when shown (and built the first time)."""
        if index == HISTORY_TAB and self._history_stale:
            self._history_stale = False
            self._read(frozenset({HISTORY}))
        elif index == CHART_TAB:
            chart = self.chart_place.build()
            assert isinstance(chart, ChartTab)
            chart.load()
        elif index == EXPERIMENTS_TAB:
            experiments = self.experiments_place.build()
            assert isinstance(experiments, ExperimentsTab)
            experiments.load()

    def _build_history(self) -> None:
        page = QWidget()
        lay = QVBoxLayout(page)
        filters = QHBoxLayout()
        self.f_period, self.f_platform, self.f_gpu, self.f_tag = (QComboBox() for _ in range(4))
        for period in PERIODS:
            self.f_period.addItem(QCoreApplication.translate("SpendPage", period), period)
        for label, combo in (
            (self.tr("Period"), self.f_period),
            (self.tr("Platform"), self.f_platform),
            ("GPU", self.f_gpu),
            (self.tr("Tag"), self.f_tag),
        ):
            filters.addWidget(QLabel(label))
            filters.addWidget(combo)
            combo.activated.connect(lambda _i: self._load_history())
        filters.addStretch(1)
        self.outcome_button = QPushButton(self.tr("Experiment…"))
        self.outcome_button.clicked.connect(self.edit_outcome)
        filters.addWidget(self.outcome_button)
        lay.addLayout(filters)
        now = self.ledger.now
        self.history_model: RowTableModel[Rental] = RowTableModel(
            [
                (self.tr("Started"), lambda r: self._local(r.started_at)),
                (
                    self.tr("Ended"),
                    lambda r: self._local(r.ended_at) if r.ended_at else self.tr("running"),
                ),
                (self.tr("Rental"), rental_name),
                (self.tr("Platform"), lambda r: r.platform_name),
                ("GPU", lambda r: f"{r.gpu_count} × {r.gpu_model}" if r.gpu_model else ""),
                (self.tr("Hours"), lambda r: f"{r.elapsed(now()).total_seconds() / 3600:.2f}"),
                (self.tr("Cost"), lambda r: format_money(r.cost_at(now()), r.currency)),
                (self.tr("Tag"), lambda r: r.tag),
                (self.tr("Outcome"), lambda r: outcome_text(r.outcome)),
                (self.tr("Ended by"), lambda r: _end_note(r)),
            ]
        )
        self.history_view = _sized_on_fill(row_table(self.history_model))  # type: ignore[arg-type]
        lay.addWidget(self.history_view, 1)
        self.history_total = QLabel()
        lay.addWidget(self.history_total)
        self.tabs.addTab(page, self.tr("History"))

    # --- showing --------------------------------------------------------------------------
    def _local(self, when: datetime | None) -> str:
        return when.astimezone(self.ledger.tz).strftime("%Y-%m-%d %H:%M") if when else ""

    def _billing(self, r: Rental) -> str:
        """'on-demand, $1.20/h': the plan and its rate, the rate formatted as money."""
        rate = rate_text(format_amount(r.rate, r.currency), r.billing_mode)
        return self.tr("{mode}, {rate}").format(mode=billing_mode_text(r.billing_mode), rate=rate)

    def refresh(self) -> None:
        """Re-read everything the page shows, and the tab on show, off the GUI thread, once the
        paint already asked for is done (the click that shows the page paints what it has at
        once; a read would hold the GIL while it paints)."""
        self._wanted |= EVERYTHING
        if not self._read_posted:
            self._read_posted = True
            # posted events of one priority keep their order: after the queued paint
            QCoreApplication.postEvent(
                self, QEvent(READ_AFTER_PAINT), Qt.EventPriority.LowEventPriority.value
            )

    def event(self, e: QEvent) -> bool:
        if e.type() == READ_AFTER_PAINT:
            self._read_posted = False
            self.reads.request()
            self._tab_changed(self.tabs.currentIndex())
            return True
        return super().event(e)

    def busy(self) -> bool:
        """A read of the ledger is running or asked for (tests wait for it to end)."""
        tabs = [self.reads] + [t.reads for t in (self.chart_tab, self.experiments) if t]
        return self._read_posted or any(r.busy() for r in tabs)

    def _read(self, parts: frozenset[str]) -> None:
        self._wanted |= parts
        self.reads.request()

    def _on_ledger_changed(self) -> None:
        if self.isVisible():
            self.refresh()
        else:  # read when it shows again (the window restored from the tray, say)
            self._missed_change = True

    def _prepare_read(self) -> Callable[[], SpendView]:
        if HISTORY in self._wanted and self.tabs.currentIndex() != HISTORY_TAB:
            self._wanted.discard(HISTORY)  # read when its tab shows again
            self._history_stale = True
        parts, self._wanted = frozenset(self._wanted), set()
        return partial(read_view, self.ctx, parts, self.history_filter(), self._choice())

    def _read_failed(self, exc: Exception) -> None:
        self.ctx.notifier.error(str(exc), source="spend")  # a damaged database says so in words

    def _apply(self, view: SpendView) -> None:
        if view.platforms is not None:
            self.stack.setCurrentIndex(1 if view.platforms else 0)
            if view.running is not None and view.running != self.running_model.rows():
                self.running_model.set_rows(view.running)
                self.running_view.resizeColumnsToContents()
            self._fill_filters(view)
        if view.history is not None:
            if view.choice == self._choice():  # else the filters changed: a read is coming
                self._show_history(view.history, view.history_totals)
            else:
                self._read(frozenset({HISTORY}))
        if view.today is not None:
            self._show_summary(view)

    def _fill_filters(self, view: SpendView) -> None:
        assert view.platforms is not None

        def refill(combo: QComboBox, everything: str, items: list[tuple[str, object]]) -> None:
            wanted = [(everything, None), *items]
            if wanted == [(combo.itemText(i), combo.itemData(i)) for i in range(combo.count())]:
                return  # the same choices: the combo stays as it is
            current = combo.currentData()
            combo.clear()
            for label, data in wanted:
                combo.addItem(label, data)
            combo.setCurrentIndex(max(combo.findData(current), 0))

        refill(self.f_platform, self.tr("All platforms"), [(p.name, p.id) for p in view.platforms])
        refill(self.f_gpu, self.tr("All GPUs"), [(g, g) for g in view.gpus])
        refill(self.f_tag, self.tr("All tags"), [(t, t) for t in view.tags])
        self.currencies = view.currencies
        if self.chart_tab is not None:
            self.chart_tab.set_currencies(view.currencies)

    def _choice(self) -> tuple[object, ...]:
        return tuple(
            c.currentData() for c in (self.f_period, self.f_platform, self.f_gpu, self.f_tag)
        )

    def history_filter(self) -> HistoryFilter:
        since = until = None
        choice = PERIODS[self.f_period.currentData()]
        if choice is not None:
            bucket, back = choice
            now = self.ledger.now()
            if bucket == "30 days":
                since, until = now - timedelta(days=30), None
            elif bucket == "year":
                local = now.astimezone(self.ledger.tz)
                since = local.replace(month=1, day=1, hour=0, minute=0, second=0)
                until = since.replace(year=since.year + 1)
            else:
                since, until = period_of(now, bucket, self.ledger.tz)
                for _ in range(back):
                    since, until = period_of(since - timedelta(seconds=1), bucket, self.ledger.tz)
        return HistoryFilter(
            since=since,
            until=until,
            platform_id=self.f_platform.currentData(),
            gpu_model=self.f_gpu.currentData() or "",
            tag=self.f_tag.currentData() or "",
        )

    def _load_history(self) -> None:
        """The filters changed: the history is read again (off the GUI thread)."""
        self._read(frozenset({HISTORY}))

    def _show_history(self, rows: list[Rental], totals: dict[str, int]) -> None:
        if rows != self.history_model.rows():  # a reset re-measures and repaints the table
            self.history_model.set_rows(rows)
            self.history_view.resizeColumnsToContents()
        n = len(rows)  # a plain name: lupdate drops a translate() whose count is an expression
        if n == HISTORY_LIMIT:
            text = QCoreApplication.translate(
                "SpendPage", "%n rentals (the newest shown): {totals}", None, n
            )
        else:
            text = QCoreApplication.translate("SpendPage", "%n rentals: {totals}", None, n)
        self.history_total.setText(text.format(totals=format_totals(totals)))

    def _show_summary(self, view: SpendView) -> None:
        if view.burn:
            summary = self.tr("Today {today} · this month {month} · burning {burn}")
        else:
            summary = self.tr("Today {today} · this month {month} · nothing billing now")
        self.summary.setText(
            summary.format(
                today=format_totals(view.today or {}),
                month=format_totals(view.month),
                burn=view.burn,
            )
        )
        while len(self.budget_bars) > len(view.budgets):
            bar = self.budget_bars.pop()
            self.budget_box.removeWidget(bar)
            bar.setParent(None)
            bar.deleteLater()
        while len(self.budget_bars) < len(view.budgets):
            bar = QProgressBar()
            bar.setRange(0, 100)
            self.budget_box.addWidget(bar)
            self.budget_bars.append(bar)
        for bar, st in zip(self.budget_bars, view.budgets, strict=True):
            b = st.budget
            bar.setValue(min(st.percent, 100))
            if st.forecast is not None and st.percent < 100:
                text = self.tr(
                    "{budget}: {percent}% — {spent} of {amount} · runs out {when} at this rate"
                )
            else:
                text = self.tr("{budget}: {percent}% — {spent} of {amount}")
            bar.setFormat(
                text.format(
                    budget=b.title,
                    percent=st.percent,
                    spent=format_money(st.spent_minor, b.currency),
                    amount=format_money(b.amount_minor, b.currency),
                    when=self._local(st.forecast),
                )
            )
            color = {"ok": "#38a169", "warning": "#d69e2e", "over": "#c53030"}[st.state]
            bar.setStyleSheet(f"QProgressBar::chunk {{ background: {color}; }}")

    def tick(self) -> None:
        """Once a second: the meters re-read the clock; every 10 s the totals too."""
        rows = self.running_model.rowCount()
        if rows:
            self.running_model.dataChanged.emit(
                self.running_model.index(0, 5), self.running_model.index(rows - 1, 6)
            )
        self._ticks += 1
        if self._ticks % 10 == 0:
            self.running_view.resizeColumnsToContents()  # the meters' text grows
            self._read(frozenset({SUMMARY}))

    def showEvent(self, event: QShowEvent) -> None:
        self.meter.start()
        super().showEvent(event)
        if self._missed_change:
            self._missed_change = False
            self.refresh()

    def hideEvent(self, event: QHideEvent) -> None:
        self.meter.stop()
        super().hideEvent(event)

    # --- actions --------------------------------------------------------------------------
    def _changed(self) -> None:
        """The user changed the ledger or a budget here: the page and the tray read it again."""
        self.refresh()
        self.nav.refresh_tray()

    def _selected(self, view: QTableView, model: RowTableModel[Rental]) -> Rental | None:
        rows = view.selectionModel().selectedRows()
        return model.row(rows[0].row()) if rows else None

    def start_rental(self) -> None:
        dialog = StartRentalDialog(self.ctx, self)
        if dialog.exec():
            self._changed()

    def stop_rental(self) -> None:
        r = self._selected(self.running_view, self.running_model)
        if r is None and self.running_model.rowCount() == 1:
            r = self.running_model.row(0)
        if r is None or r.id is None:
            self.ctx.notifier.info(self.tr("Select the running rental to stop."))
            return
        cost = format_money(r.cost_at(self.ledger.now()), r.currency)
        answer = QMessageBox.question(
            self,
            self.tr("Stop the meter"),
            self.tr(
                "Stop metering {rental} now, at {cost}?\n\nThis only ends the ledger's "
                "meter: release the instance on the platform too (the Release page checks your "
                "backups first)."
            ).format(rental=rental_name(r), cost=cost),
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.stop(r)

    def stop(self, r: Rental) -> None:
        assert r.id is not None
        try:
            self.ledger.end_rental(r.id, reason="stopped on the Spend page")
        except UserError as exc:
            self.ctx.notifier.warning(str(exc), source="spend")
        self._changed()

    def edit_alerts(self) -> None:
        r = self._selected(self.running_view, self.running_model)
        AlertsDialog(self.ctx, r, self).exec()

    def set_budget(self) -> None:
        if BudgetDialog(self.ctx, self).exec():
            self._changed()

    def edit_outcome(self) -> None:
        r = self._selected(self.history_view, self.history_model)
        if r is None:
            self.ctx.notifier.info(self.tr("Select a rental in the history first."))
            return
        if OutcomeDialog(self.ctx, r, self).exec():
            self._changed()

    def import_csv(self) -> None:
        name, _ = QFileDialog.getOpenFileName(
            self,
            self.tr("Import rentals"),
            "",
            QCoreApplication.translate("SpendPage", IMPORT_FILTER),
        )
        if name:
            self.run_import(Path(name))

    def run_import(self, path: Path) -> CsvImportDialog:
        dialog = CsvImportDialog(self.ctx, path, self)
        dialog.finished.connect(lambda _code: self._imported(dialog))
        dialog.open()
        return dialog

    def _imported(self, dialog: CsvImportDialog) -> None:
        res = dialog.result_value
        if res is not None:
            self.ctx.notifier.info(
                self.tr(
                    "Imported {rentals} rentals and {charges} charges ({refused} rows refused, "
                    "{duplicates} already there)."
                ).format(
                    rentals=res.rentals,
                    charges=res.charges,
                    refused=res.refused,
                    duplicates=res.duplicates,
                ),
                source="spend",
            )
            self._changed()

    def export_csv(self) -> None:
        name, _ = QFileDialog.getSaveFileName(
            self,
            self.tr("Export the ledger"),
            EXPORT_NAME,
            self.tr("CSV files (*.csv)"),
        )
        if name:
            self.run_export(Path(name))

    def run_export(self, path: Path) -> None:
        def write() -> int:
            tmp = path.with_name(f".{path.name}.part")
            with tmp.open("w", encoding="utf-8", newline="") as out:
                count = export_csv(self.ledger, out)
            tmp.replace(path)
            return count

        self._export_worker = run_in_thread(
            write,
            on_result=lambda n: self.ctx.notifier.info(
                self.tr("Exported {n} rows to {path}.").format(n=n, path=path), source="spend"
            ),
            on_error=lambda exc: self.ctx.notifier.error(
                self.tr("Could not export to {path}: {error}").format(path=path, error=exc),
                source="spend",
            ),
        )


def _sized_on_fill(view: QTableView) -> QTableView:
    """Columns sized to their contents when the rows change (`resizeColumnsToContents`), not
    on every layout: as ResizeToContents, each table was measured three times as the page
    first showed (the rows' text in each of 8 roles per cell), most of the show's time."""
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    return view


def _end_note(r: Rental) -> str:
    note = end_reason_text(r.end_reason)
    override = r.evidence.get("override_reason") if r.evidence else None
    if override:  # the user's own words: shown as typed
        return QCoreApplication.translate("SpendPage", "{reason} (override: {override})").format(
            reason=note, override=override
        )
    return note
