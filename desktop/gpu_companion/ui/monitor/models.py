"""Item models of the monitor: the fleet (one row per host, with a sparkline) and per-GPU values."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, cast

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QAbstractTableModel,
    QCoreApplication,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtGui import QColor, QPainter, QPen, QPolygonF
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem

from gpu_companion.core.monitor.collector import HostState, HostStatus, TimedSample
from gpu_companion.core.monitor.faults import GpuFault
from gpu_companion.core.monitor.nvsmi import ComputeApp, GpuSample
from gpu_companion.ui.common.plain_text import tooltip_text

Index = QModelIndex | QPersistentModelIndex
SPARK_POINTS = 120
SparkRole = Qt.ItemDataRole.UserRole + 1
STATE_COLORS = {
    HostState.LIVE: "#2f855a",
    HostState.CONNECTING: "#718096",
    HostState.RECONNECTING: "#b7791f",
    HostState.STOPPED: "#718096",
}
# A host's state as the monitor shows it (the enum's English value is what the code compares).
HOST_STATES = {
    HostState.CONNECTING: str(QT_TRANSLATE_NOOP("FleetModel", "connecting")),
    HostState.LIVE: str(QT_TRANSLATE_NOOP("FleetModel", "live")),
    HostState.RECONNECTING: str(QT_TRANSLATE_NOOP("FleetModel", "reconnecting")),
    HostState.AUTH_FAILED: str(QT_TRANSLATE_NOOP("FleetModel", "auth failed")),
    HostState.HOST_KEY_CHANGED: str(QT_TRANSLATE_NOOP("FleetModel", "host key changed")),
    HostState.HOST_KEY_UNKNOWN: str(QT_TRANSLATE_NOOP("FleetModel", "host key not trusted yet")),
    HostState.NO_DRIVER: str(QT_TRANSLATE_NOOP("FleetModel", "no NVIDIA driver")),
    HostState.GPU_LOST: str(QT_TRANSLATE_NOOP("FleetModel", "GPU lost")),
    HostState.STOPPED: str(QT_TRANSLATE_NOOP("FleetModel", "stopped")),
}


def state_text(state: HostState) -> str:
    """The state's words in the app's language."""
    return QCoreApplication.translate("FleetModel", HOST_STATES.get(state, state.value))


def _skipped(bad_lines: int) -> str:
    return QCoreApplication.translate(
        "FleetModel", "%n unreadable line(s) skipped", None, bad_lines
    )


def _fmt(value: float | None, unit: str = "", digits: int = 0) -> str:
    return "—" if value is None else f"{value:.{digits}f}{unit}"


@dataclass
class FleetRow:
    alias: str
    status: HostStatus = field(default_factory=lambda: HostStatus(HostState.CONNECTING))
    gpus: dict[int, GpuSample] = field(default_factory=dict)
    spark: deque[float] = field(default_factory=lambda: deque(maxlen=SPARK_POINTS))
    cost_per_hour: str = ""  # the running rental's rate, from the spend ledger
    faults: tuple[GpuFault, ...] = ()  # GPUs that cannot be read while the others stream
    cached: list[str] | None = None  # the display cells, rebuilt after a change

    def utils(self) -> list[int]:
        return [g.utilization_gpu for g in self.gpus.values() if g.utilization_gpu is not None]

    def _sum(self, attr: str) -> float | None:
        values = [getattr(g, attr) for g in self.gpus.values() if getattr(g, attr) is not None]
        return sum(values) if values else None

    def cells(self) -> list[str]:
        if self.cached is None:
            self.cached = self._cells()
        return self.cached

    def _cells(self) -> list[str]:
        utils = self.utils()
        temps = [g.temperature_c for g in self.gpus.values() if g.temperature_c is not None]
        used, total = self._sum("memory_used_mib"), self._sum("memory_total_mib")
        memory = "—"
        if used is not None:
            memory = f"{used / 1024:.1f} / {(total or 0) / 1024:.1f} GiB"
        state = state_text(self.status.state)
        if self.faults:
            state += " · " + ", ".join(f"{f.label} {f.short}" for f in self.faults)
        count = len(self.gpus) + len(self.faults)
        return [
            self.alias,
            state,
            str(count) if count else "—",
            _fmt(sum(utils) / len(utils) if utils else None, " %"),
            _fmt(max(utils) if utils else None, " %"),
            memory,
            _fmt(max(temps) if temps else None, " °C"),
            _fmt(self._sum("power_draw_w"), " W"),
            self.cost_per_hour or "—",
            "",
        ]


class FleetModel(QAbstractTableModel):
    HEADERS = (  # translated where shown
        str(QT_TRANSLATE_NOOP("FleetModel", "Host")),
        str(QT_TRANSLATE_NOOP("FleetModel", "Status")),
        str(QT_TRANSLATE_NOOP("FleetModel", "GPUs")),
        str(QT_TRANSLATE_NOOP("FleetModel", "Mean util.")),
        str(QT_TRANSLATE_NOOP("FleetModel", "Max util.")),
        str(QT_TRANSLATE_NOOP("FleetModel", "Memory")),
        str(QT_TRANSLATE_NOOP("FleetModel", "Max temp.")),
        str(QT_TRANSLATE_NOOP("FleetModel", "Power")),
        str(QT_TRANSLATE_NOOP("FleetModel", "Cost / h")),
        str(QT_TRANSLATE_NOOP("FleetModel", "Utilisation (last 2 min)")),
    )
    SPARK_COLUMN = 9

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[FleetRow] = []
        self._by_alias: dict[str, int] = {}
        self._dirty: set[int] = set()

    def aliases(self) -> list[str]:
        return [r.alias for r in self._rows]

    def row_for(self, alias: str) -> FleetRow | None:
        i = self._by_alias.get(alias)
        return None if i is None else self._rows[i]

    def set_aliases(self, aliases: list[str]) -> None:
        if aliases == self.aliases():
            return
        old = {r.alias: r for r in self._rows}
        self.beginResetModel()
        self._rows = [old.get(a) or FleetRow(a) for a in aliases]
        self._by_alias = {r.alias: i for i, r in enumerate(self._rows)}
        self._dirty.clear()
        self.endResetModel()

    def _changed(self, alias: str) -> None:
        i = self._by_alias[alias]
        self._rows[i].cached = None
        self._dirty.add(i)

    def flush(self) -> None:
        """One dataChanged for every row changed since the last flush (called by a timer:
        per-sample signals made the view re-read the table 50 times a second)."""
        if self._dirty:
            first, last = min(self._dirty), max(self._dirty)
            self._dirty.clear()
            self.dataChanged.emit(self.index(first, 0), self.index(last, len(self.HEADERS) - 1))

    def add_samples(self, alias: str, samples: tuple[TimedSample, ...]) -> None:
        row = self.row_for(alias)
        if row is None:
            return
        for s in samples:
            row.gpus[s.sample.index if s.sample.index is not None else 0] = s.sample
        utils = [s.sample.utilization_gpu for s in samples if s.sample.utilization_gpu is not None]
        if utils:
            row.spark.append(sum(utils) / len(utils))
        self._changed(alias)

    def seed(self, alias: str, latest: dict[int, GpuSample], spark: list[float]) -> None:
        """What the monitor already knows when the row appears (the page opened later)."""
        row = self.row_for(alias)
        if row is not None and not row.gpus:
            row.gpus.update(latest)
            row.spark.extend(spark[-SPARK_POINTS:])
            self._changed(alias)

    def set_cost(self, alias: str, cost_per_hour: str) -> None:
        row = self.row_for(alias)
        if row is not None and row.cost_per_hour != cost_per_hour:
            row.cost_per_hour = cost_per_hour
            self._changed(alias)

    def set_faults(self, alias: str, faults: tuple[GpuFault, ...]) -> None:
        """GPUs that need a reset or are lost: named in the status cell, not counted as read."""
        row = self.row_for(alias)
        if row is None or row.faults == faults:
            return
        row.faults = faults
        for f in faults:
            if f.index is not None:
                row.gpus.pop(f.index, None)  # its last good reading is no longer true
        self._changed(alias)

    def set_status(self, alias: str, status: HostStatus) -> None:
        row = self.row_for(alias)
        if row is not None:
            row.status = status
            self._changed(alias)

    # --- Qt -----------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.HEADERS)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return row.cells()[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            st = row.status
            bad = _skipped(st.bad_lines) if st.bad_lines else ""
            faults = [f"{f.message} {f.hint}".strip() for f in row.faults]
            parts = (state_text(st.state), st.message, st.hint, bad, *faults)
            return tooltip_text("\n".join(p for p in parts if p))  # the host's words
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == 1:
            if row.faults:
                return QColor("#c53030")
            return QColor(STATE_COLORS.get(row.status.state, "#c53030"))
        if role == SparkRole and index.column() == self.SPARK_COLUMN:
            return list(row.spark)
        return None

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            if 0 <= section < len(self.HEADERS):
                return QCoreApplication.translate("FleetModel", self.HEADERS[section])
        return None


class SparklineDelegate(QStyledItemDelegate):
    """A small utilisation line (0-100 %) drawn in the cell: no widget per row."""

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        super().paint(painter, option, index)
        values = index.data(SparkRole)
        if not values or len(values) < 2:
            return
        rect = option.rect.adjusted(4, 4, -4, -4)  # type: ignore[attr-defined]
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(QColor("#3182ce"), 1.5))
        painter.drawPolyline(spark_polygon(values, rect.right(), rect.bottom(), rect.width(),
                                           rect.height()))  # fmt: skip
        painter.restore()


def spark_polygon(values: list[float], right: float, bottom: float, width: float,
                  height: float) -> QPolygonF:  # fmt: skip
    """The sparkline's points, newest at `right`, 0-100 % from `bottom` up: written in place
    through numpy (a QPointF per point cost the fleet view 6 ms per repaint at 100 hosts)."""
    import numpy as np  # loaded with pyqtgraph when the page first showed
    from shiboken6 import VoidPtr

    n = len(values)
    step = width / (SPARK_POINTS - 1)
    polygon = QPolygonF()
    polygon.resize(n)
    points: Any = cast(Any, VoidPtr)(polygon.data(), n * 16, True)  # writable, n (x, y) doubles
    xy = np.frombuffer(points, dtype=np.float64).reshape(n, 2)
    xy[:, 0] = right - step * np.arange(n - 1, -1, -1)
    xy[:, 1] = bottom - height * np.clip(np.asarray(values, dtype=np.float64), 0, 100) / 100
    return polygon


def _reading(row: GpuSample | GpuFault) -> GpuSample:
    """A GPU row's values: a GPU that cannot be read has none (never its last good ones)."""
    return row if isinstance(row, GpuSample) else GpuSample(index=row.index, name=row.name)


def gpu_value_columns() -> list[tuple[str, Any]]:
    """Columns of the per-GPU table; rows are readings, or faults for GPUs that cannot be read."""

    def pct(v: int | None) -> str:
        return _fmt(v, " %")

    def col(read: Any) -> Any:
        return lambda row: read(_reading(row))

    ok = QCoreApplication.translate("MonitorTables", "ok")

    def state(row: GpuSample | GpuFault) -> str:
        return row.short if isinstance(row, GpuFault) else ok

    def index(row: GpuSample | GpuFault) -> Any:
        if isinstance(row, GpuFault) and row.index is None:
            return row.bus_id or "?"
        return row.index

    return [
        ("GPU", index),
        (QCoreApplication.translate("MonitorTables", "Name"), col(lambda g: g.name)),
        (
            QCoreApplication.translate("MonitorTables", "Util."),
            col(lambda g: pct(g.utilization_gpu)),
        ),
        (
            QCoreApplication.translate("MonitorTables", "Memory (MiB)"),
            col(lambda g: f"{_fmt(g.memory_used_mib)} / {_fmt(g.memory_total_mib)}"),
        ),
        (
            QCoreApplication.translate("MonitorTables", "Temp."),
            col(lambda g: _fmt(g.temperature_c, " °C")),
        ),
        (
            QCoreApplication.translate("MonitorTables", "Power (W)"),
            col(lambda g: f"{_fmt(g.power_draw_w)} / {_fmt(g.power_limit_w)}"),
        ),
        (
            QCoreApplication.translate("MonitorTables", "SM clock"),
            col(lambda g: _fmt(g.clocks_sm_mhz, " MHz")),
        ),
        (QCoreApplication.translate("MonitorTables", "P-state"), col(lambda g: g.pstate or "—")),
        (QCoreApplication.translate("MonitorTables", "Fan"), col(lambda g: pct(g.fan_speed_pct))),
        (QCoreApplication.translate("MonitorTables", "State"), state),
    ]


def gpu_rows(
    latest: dict[int, GpuSample], faults: tuple[GpuFault, ...]
) -> list[GpuSample | GpuFault]:
    """One row per GPU by index: its reading, or its fault when it cannot be read now."""
    by_index: dict[object, GpuSample | GpuFault] = {i: s for i, s in latest.items()}
    for f in faults:
        by_index[f.index if f.index is not None else f.bus_id] = f
    ints = sorted(k for k in by_index if isinstance(k, int))
    return [by_index[k] for k in ints] + [v for k, v in by_index.items() if not isinstance(k, int)]


def process_columns() -> list[tuple[str, Any]]:
    def mem(a: ComputeApp) -> str:
        return _fmt(a.used_memory_mib, " MiB")

    hidden = QCoreApplication.translate("MonitorTables", "hidden")
    return [  # rows are (GPU index or uuid, app)
        ("GPU", lambda r: r[0]),
        (
            QCoreApplication.translate("MonitorTables", "PID"),
            lambda r: r[1].pid if r[1].pid is not None else hidden,
        ),
        (
            QCoreApplication.translate("MonitorTables", "Process"),
            lambda r: r[1].process_name or "—",
        ),
        (QCoreApplication.translate("MonitorTables", "Memory"), lambda r: mem(r[1])),
    ]
