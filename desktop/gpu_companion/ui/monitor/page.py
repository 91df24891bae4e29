"""Monitor page: the fleet (one row per host) and, for one host, live plots, current values,
compute processes and hints. What is watched is the app's (Services.watcher: every running
rental from launch); opening this page adds the other active hosts and this computer.

Samples arrive by signals (ui.monitor_bridge) and are already in the history (loaded from the
store on the collector's thread); this page only redraws, at most twice a second, what is
visible. pyqtgraph is imported on first show, but the plot panels are built after the fleet
view has painted, one per idle moment: a host then opens onto built plots.
"""

from __future__ import annotations

import time
from html import escape
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QModelIndex, Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QTableView,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.hosts.registry import LOCAL_ALIAS, LOCAL_HOST, Host
from gpu_companion.core.monitor.collector import HostState, HostStatus, PollEvent, TimedSample
from gpu_companion.core.monitor.hints import Hint
from gpu_companion.ui.common.access import AccessActions, context_menu_on, fill_open_menu
from gpu_companion.ui.common.models import RowTableModel, row_table
from gpu_companion.ui.common.page import Navigator, Page
from gpu_companion.ui.monitor.models import (
    FleetModel,
    FleetRow,
    SparklineDelegate,
    gpu_rows,
    gpu_value_columns,
    process_columns,
    state_text,
)

if TYPE_CHECKING:
    from gpu_companion.core.monitor.history import HostHistory
    from gpu_companion.core.monitor.live import Monitor
    from gpu_companion.services import Services
    from gpu_companion.ui.monitor.bridge import MonitorBridge
    from gpu_companion.ui.monitor.plots import GpuPlots

FLEET = "__fleet__"
WINDOWS = (  # (label, translated where shown; seconds)
    (str(QT_TRANSLATE_NOOP("MonitorPage", "1 min")), 60.0),
    (str(QT_TRANSLATE_NOOP("MonitorPage", "10 min")), 600.0),
    (str(QT_TRANSLATE_NOOP("MonitorPage", "1 h")), 3600.0),
    (str(QT_TRANSLATE_NOOP("MonitorPage", "24 h")), 86400.0),
)
REDRAW_MS = 500
PANEL_BUILD_MS = 50  # after the first show, one plot panel per idle moment this far apart


def _table(model: Any) -> QTableView:
    return row_table(model, selection=QAbstractItemView.SelectionMode.ExtendedSelection)


def _preformatted(text: str) -> str:
    """A tooltip that shows `text` (a host's line, escaped here) on one unbroken line."""
    return f"<p style='white-space:pre'>{escape(text)}</p>"


def _recent_mean_util(history: HostHistory, now: float) -> list[float]:
    """The fleet sparkline's last two minutes from the history: mean over GPUs, NaN skipped."""
    import numpy as np  # with pyqtgraph, on the page's first show

    utils = [history.series(g, now - 120)[1][:, 0] for g in history.gpus()]
    n = min((len(u) for u in utils), default=0)
    if not n:
        return []
    rows = np.array([u[-n:] for u in utils])
    counts = (~np.isnan(rows)).sum(axis=0)
    sums = np.nansum(rows, axis=0)
    return [float(x) for x in sums[counts > 0] / counts[counts > 0]]


class MonitorPage(Page):
    key, title, icon_name = "monitor", str(QT_TRANSLATE_NOOP("MonitorPage", "Monitor")), "monitor"

    def __init__(self, ctx: Services, nav: Navigator, parent: QWidget | None = None) -> None:
        super().__init__(ctx, nav, parent)
        self.monitor: Monitor | None = None
        self.bridge: MonitorBridge | None = None
        self.plots: GpuPlots | None = None
        self._drawn_version = -1
        self._values_dirty = False
        self._fleet_sized = False

        self.host_combo = QComboBox()
        self.host_combo.setObjectName("monitorHost")
        self.host_combo.setMinimumWidth(220)
        self.window_combo = QComboBox()
        self.window_combo.setObjectName("monitorWindow")
        for label, seconds in WINDOWS:
            self.window_combo.addItem(QCoreApplication.translate("MonitorPage", label), seconds)
        self.window_combo.setCurrentIndex(1)
        self.status_label = QLabel()
        self.status_label.setObjectName("monitorStatus")
        self.status_label.setWordWrap(True)
        self.reconnect_button = QPushButton(self.tr("Reconnect"))
        self.reconnect_button.hide()
        top = QHBoxLayout()
        top.addWidget(QLabel(self.tr("Show")))
        top.addWidget(self.host_combo)
        top.addWidget(QLabel(self.tr("Window")))
        top.addWidget(self.window_combo)
        top.addWidget(self.status_label, 1)
        top.addWidget(self.reconnect_button)

        self.fleet_model = FleetModel(self)
        self.fleet_view = _table(self.fleet_model)
        self.fleet_view.setObjectName("fleetTable")
        self.fleet_view.setItemDelegateForColumn(FleetModel.SPARK_COLUMN, SparklineDelegate(self))
        header = self.fleet_view.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)  # measured once, below
        header.setSectionResizeMode(FleetModel.SPARK_COLUMN, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(70)
        self.fleet_view.doubleClicked.connect(self._open_row)
        self.access = AccessActions(ctx, self)
        context_menu_on(self.fleet_view, self._fleet_host_at, self._fill_access_menu)
        fleet = QWidget()
        flay = QVBoxLayout(fleet)
        flay.setContentsMargins(0, 0, 0, 0)
        flay.addWidget(self.fleet_view)
        hint = QLabel(
            self.tr(
                "Double-click a host to see its GPUs; right-click it for a terminal, VS Code or "
                "its tunnels."
            )
        )
        hint.setStyleSheet("color: palette(mid);")
        flay.addWidget(hint)

        self.values_model: RowTableModel[Any] = RowTableModel(gpu_value_columns(), self)
        self.process_model: RowTableModel[Any] = RowTableModel(process_columns(), self)
        self.hints_list = QListWidget()
        self.hints_list.setObjectName("monitorHints")
        self.details = QTabWidget()
        self.details.addTab(_table(self.values_model), self.tr("Current values"))
        self.details.addTab(_table(self.process_model), self.tr("Processes"))
        self.details.addTab(self.hints_list, self.tr("Hints"))
        self.counters_label = QLabel()
        self.counters_label.setObjectName("monitorCounters")
        self.plot_holder = QVBoxLayout()
        self.plot_holder.setContentsMargins(0, 0, 0, 0)
        plot_area = QWidget()
        plot_area.setLayout(self.plot_holder)
        host_split = QSplitter(Qt.Orientation.Vertical)
        host_split.addWidget(plot_area)
        lower = QWidget()
        llay = QVBoxLayout(lower)
        llay.setContentsMargins(0, 0, 0, 0)
        llay.addWidget(self.counters_label)
        llay.addWidget(self.details)
        host_split.addWidget(lower)
        host_split.setStretchFactor(0, 3)
        host_split.setStretchFactor(1, 2)

        self.stack = QStackedWidget()
        self.stack.addWidget(fleet)
        self.stack.addWidget(host_split)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.stack, 1)

        self.timer = QTimer(self)
        self.timer.setInterval(REDRAW_MS)
        self.timer.timeout.connect(self._tick)
        self.panel_timer = QTimer(self)  # builds the plots' panels once the fleet is painted
        self.panel_timer.setInterval(PANEL_BUILD_MS)
        self.panel_timer.timeout.connect(self._build_panel)
        self.host_combo.currentIndexChanged.connect(self._host_changed)
        self.window_combo.currentIndexChanged.connect(self._window_changed)
        self.reconnect_button.clicked.connect(self._reconnect)

    # --- start and stop -----------------------------------------------------------------

    def refresh(self) -> None:
        """Show what the watcher watches; the page itself starts and stops no collector."""
        if self.monitor is None:
            self._start()
        assert self.monitor is not None
        self.ctx.watcher.include_all_hosts()
        hosts = [LOCAL_HOST, *self.ctx.registry.hosts(include_released=False)]
        aliases = [h.alias for h in hosts]
        self.fleet_model.set_aliases(aliases)
        current = self.host_combo.currentData()
        self.host_combo.blockSignals(True)
        self.host_combo.clear()
        self.host_combo.addItem(self.tr("All hosts (fleet)"), FLEET)
        for host in hosts:
            label = self.tr("This computer") if host.alias == LOCAL_ALIAS else host.alias
            self.host_combo.addItem(label, host.alias)
        self.host_combo.setCurrentIndex(max(0, self.host_combo.findData(current)))
        self.host_combo.blockSignals(False)
        now = time.time()
        for alias in aliases:
            self.fleet_model.set_status(alias, self.monitor.status(alias))
            self.fleet_model.set_faults(alias, self.monitor.faults(alias))
            self.fleet_model.set_cost(alias, self.ctx.cost_per_hour(alias))
            history = self.monitor.history(alias)
            self.fleet_model.seed(alias, dict(history.latest), _recent_mean_util(history, now))
        self.fleet_model.flush()
        self._host_changed()
        self.timer.start()

    def _start(self) -> None:
        from gpu_companion.ui.monitor.bridge import MonitorBridge
        from gpu_companion.ui.monitor.plots import GpuPlots

        self.monitor = self.ctx.monitor()
        self.bridge = MonitorBridge(self.monitor, self)
        self.bridge.samples_arrived.connect(self._on_samples)
        self.bridge.status_changed.connect(self._on_status)
        self.bridge.poll_arrived.connect(self._on_poll)
        self.bridge.hint_raised.connect(self._on_hint)
        self.plots = GpuPlots(build=False)  # the fleet shows first: panels come after its paint
        self.plot_holder.addWidget(self.plots)
        self.panel_timer.start()

    def _build_panel(self) -> None:
        """One plot panel per idle moment (~15 ms each), so opening a host finds them built;
        then `_lay_out_host_side`."""
        if self.plots is None:
            self.panel_timer.stop()
        elif not self.plots.build_next():
            self.panel_timer.stop()
            self._lay_out_host_side()

    def _lay_out_host_side(self) -> None:
        """Give the host's side of the page the fleet view's size and paint it once, off
        screen. A stacked widget sizes only the page it shows: the first click on a host
        resized the hidden side, laid out its four plots and drew their axes afresh, a third of
        that click (20-35 ms); the clicks after found it at that size."""
        host_side, shown = self.stack.widget(1), self.stack.currentWidget()
        if self.plots is None or host_side is None or shown is None or shown is host_side:
            return  # a host shown already: laid out at its size
        host_side.setGeometry(shown.geometry())
        self.plots.set_time_axis()
        host_side.grab()

    def stop(self) -> None:
        """Stop redrawing and disconnect (the monitor itself is stopped by Services.close)."""
        self.timer.stop()
        self.panel_timer.stop()
        if self.bridge is not None:
            self.bridge.close()

    # --- what is shown ------------------------------------------------------------------

    def selected(self) -> str:
        return str(self.host_combo.currentData() or FLEET)

    def open_host(self, alias: str) -> None:
        i = self.host_combo.findData(alias)
        if i >= 0:
            self.host_combo.setCurrentIndex(i)

    def _open_row(self, index: QModelIndex) -> None:
        self.open_host(self.fleet_model.aliases()[index.row()])

    def _fleet_host_at(self, pos: Any) -> Host | None:
        index = self.fleet_view.indexAt(pos)
        if not index.isValid():
            return None
        return self.ctx.registry.host(self.fleet_model.aliases()[index.row()])

    def _fill_access_menu(self, menu: Any, host: Host) -> None:
        fill_open_menu(menu, self.access, host, self._show_tunnels)

    def _show_tunnels(self, host: Host) -> None:
        page = self.nav.navigate("hosts")
        show = getattr(page, "show_tunnels", None)
        if show is not None:
            show(host)

    def _host_changed(self) -> None:
        alias = self.selected()
        fleet = alias == FLEET
        self.stack.setCurrentIndex(0 if fleet else 1)
        self.window_combo.setEnabled(not fleet)
        if self.monitor is None or self.plots is None:
            return
        if fleet:
            self.plots.set_source(None)
            self.status_label.setText(self._fleet_summary())
            self.reconnect_button.hide()
            return
        self.plots.set_source(self.monitor.history(alias), self.window_combo.currentData())
        self._drawn_version = -1
        self._show_status(alias, self.monitor.status(alias))
        poll = self.monitor.last_poll(alias)
        self._show_poll(poll)
        self.hints_list.clear()
        for hint in self.monitor.hints.active(alias):
            self.hints_list.addItem(hint.text)
        self.details.setTabText(2, self.tr("Hints ({n})").format(n=self.hints_list.count()))
        self._values_dirty = True
        self._tick()

    def _window_changed(self) -> None:
        if self.plots is not None:
            self.plots.set_source(self.plots.history, float(self.window_combo.currentData()))
            self._drawn_version = -1
            self._tick()

    def _reconnect(self) -> None:
        if self.monitor is not None and self.selected() != FLEET:
            self.monitor.reconnect(self.selected())

    def _fleet_rows(self) -> list[FleetRow]:
        return [r for a in self.fleet_model.aliases() if (r := self.fleet_model.row_for(a))]

    def _fleet_summary(self) -> str:
        """'2 of 2 hosts live, 16 GPUs': the rented hosts; this computer only when it has
        GPUs to show (a laptop without nvidia-smi is not a host that failed)."""
        rows = self._fleet_rows()
        hosts = [r for r in rows if r.alias != LOCAL_ALIAS]
        local = [r for r in rows if r.alias == LOCAL_ALIAS and r.status.state == HostState.LIVE]
        live = sum(1 for r in hosts if r.status.state == HostState.LIVE)
        gpus = sum(len(r.gpus) for r in hosts + local)
        rented = len(hosts)  # a plain name: lupdate drops a translate() counting an expression
        if local and local[0].gpus:
            text = QCoreApplication.translate(
                "MonitorPage",
                "{live} of %n hosts live, {gpus} GPUs (this computer's included)",
                None,
                rented,
            )
        else:
            text = QCoreApplication.translate(
                "MonitorPage", "{live} of %n hosts live, {gpus} GPUs", None, rented
            )
        return text.format(live=live, gpus=gpus)

    def _tick(self) -> None:
        """The throttled redraw: only the visible view, only when its data moved."""
        alias = self.selected()
        if self.monitor is None or self.plots is None or not self.isVisible():
            return
        self.fleet_model.flush()
        if alias == FLEET:
            self.status_label.setText(self._fleet_summary())
            if not self._fleet_sized and any(r for r in self._fleet_rows() if r.gpus):
                self._fleet_sized = True
                self.fleet_view.resizeColumnsToContents()
            return
        history = self.monitor.history(alias)
        if history.version != self._drawn_version:
            self._drawn_version = history.version
            self.plots.redraw()
        if self._values_dirty:
            self._values_dirty = False
            self.values_model.set_rows(gpu_rows(history.latest, self.monitor.faults(alias)))

    # --- signals from the collectors ----------------------------------------------------

    def _on_samples(self, alias: str, samples: tuple[TimedSample, ...]) -> None:
        self.fleet_model.add_samples(alias, samples)
        if self.monitor is not None:
            self.fleet_model.set_faults(alias, self.monitor.faults(alias))
        if alias == self.selected():
            self._values_dirty = True

    def _on_status(self, alias: str, status: HostStatus) -> None:
        self.fleet_model.set_status(alias, status)
        if alias == self.selected():
            self._show_status(alias, status)

    def _on_poll(self, alias: str, poll: PollEvent) -> None:
        if alias == self.selected():
            self._show_poll(poll)

    def _on_hint(self, alias: str, hint: Hint) -> None:
        if alias == self.selected():
            self.hints_list.insertItem(0, hint.text)
            self.details.setTabText(2, self.tr("Hints ({n})").format(n=self.hints_list.count()))

    def _show_status(self, alias: str, status: HostStatus) -> None:
        text = f"<b>{escape(state_text(status.state))}</b>"
        if status.state != HostState.LIVE and status.message:  # the host's words: never markup
            text += f" — {escape(status.message)} {escape(status.hint)}"
        if bad_lines := status.bad_lines:
            skipped = QCoreApplication.translate(
                "MonitorPage", "%n unreadable line(s) skipped", None, bad_lines
            )
            text += f" · {escape(skipped)}"
        self.status_label.setText(text)
        bad = status.last_bad_line
        self.status_label.setToolTip(
            _preformatted(bad) if bad else ""
        )  # a tooltip is rich text when it looks like markup: the host's line is escaped
        self.reconnect_button.setVisible(
            status.state in (HostState.AUTH_FAILED, HostState.HOST_KEY_CHANGED,
                             HostState.HOST_KEY_UNKNOWN, HostState.RECONNECTING)
        )  # fmt: skip

    def _show_poll(self, poll: PollEvent | None) -> None:
        if poll is None:
            self.process_model.set_rows([])
            self.counters_label.setText(self.tr("Host counters arrive with the first slow poll."))
            return
        history = self.monitor.history(poll.alias) if self.monitor else None
        by_uuid = {s.uuid: s.index for s in (history.latest.values() if history else [])}
        self.process_model.set_rows([(by_uuid.get(a.gpu_uuid, a.gpu_uuid), a) for a in poll.apps])
        self.details.setTabText(1, self.tr("Processes ({n})").format(n=len(poll.apps)))
        c = poll.counters
        parts = [
            self.tr("load {value}").format(value=f"{c.load1:.2f}") if c.load1 is not None
            else "",
            self.tr("CPU {value} %").format(value=f"{c.cpu_busy_pct:.0f}")
            if c.cpu_busy_pct is not None else "",
            self.tr("iowait {value} %").format(value=f"{c.iowait_pct:.0f}")
            if c.iowait_pct is not None else "",
            self.tr("disk read {value} MB/s").format(value=f"{c.read_bytes_per_s / 1e6:.1f}")
            if c.read_bytes_per_s is not None else "",
            self.tr("write {value} MB/s").format(value=f"{c.write_bytes_per_s / 1e6:.1f}")
            if c.write_bytes_per_s is not None else "",
            self.tr("free disk {value} GiB").format(value=f"{c.disk_free_bytes / 2**30:.0f}")
            if c.disk_free_bytes is not None else "",
            self.tr("at {time}").format(time=time.strftime("%H:%M:%S", time.localtime(c.t))),
        ]  # fmt: skip
        self.counters_label.setText(
            self.tr("Host: {counters}").format(counters=" · ".join(p for p in parts if p))
        )
