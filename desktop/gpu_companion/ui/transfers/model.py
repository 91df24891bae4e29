"""The transfer queue as a table: one row per job, a progress bar column drawn by a delegate."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QT_TRANSLATE_NOOP,
    QAbstractTableModel,
    QCoreApplication,
    QModelIndex,
    QPersistentModelIndex,
    Qt,
)
from PySide6.QtWidgets import (
    QApplication,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionProgressBar,
    QStyleOptionViewItem,
)

from gpu_companion.core.transfers.job import JobState, TransferJob, human_bytes
from gpu_companion.ui.common.plain_text import tooltip_text

Index = QModelIndex | QPersistentModelIndex
PERCENT_ROLE = Qt.ItemDataRole.UserRole + 1
COLUMNS = (  # translated where shown
    str(QT_TRANSLATE_NOOP("TransferTableModel", "Transfer")),
    str(QT_TRANSLATE_NOOP("TransferTableModel", "Host")),
    str(QT_TRANSLATE_NOOP("TransferTableModel", "State")),
    str(QT_TRANSLATE_NOOP("TransferTableModel", "Progress")),
    str(QT_TRANSLATE_NOOP("TransferTableModel", "Bytes")),
    str(QT_TRANSLATE_NOOP("TransferTableModel", "Rate")),
    str(QT_TRANSLATE_NOOP("TransferTableModel", "ETA")),
    str(QT_TRANSLATE_NOOP("TransferTableModel", "Current file")),
    str(QT_TRANSLATE_NOOP("TransferTableModel", "Engine")),
)
PROGRESS_COLUMN = COLUMNS.index("Progress")
STATE_COLUMN = COLUMNS.index("State")
_STATE_TEXT = {  # translated where shown
    JobState.QUEUED: str(QT_TRANSLATE_NOOP("TransferTableModel", "Queued")),
    JobState.RUNNING: str(QT_TRANSLATE_NOOP("TransferTableModel", "Running")),
    JobState.PAUSED: str(QT_TRANSLATE_NOOP("TransferTableModel", "Paused")),
    JobState.FAILED: str(QT_TRANSLATE_NOOP("TransferTableModel", "Failed")),
    JobState.CANCELLED: str(QT_TRANSLATE_NOOP("TransferTableModel", "Cancelled")),
}


def human_duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def describe(job: TransferJob) -> str:
    if job.label:
        return job.label
    arrow = "↑" if job.direction == "upload" else "↓"
    if job.direction == "upload":
        return f"{arrow} {job.local_path} → {job.remote_path}"
    return f"{arrow} {job.remote_path} → {job.local_path}"


def state_text(job: TransferJob) -> str:
    if job.state is JobState.DONE:
        if job.verified:
            return QCoreApplication.translate("TransferTableModel", "Verified")
        return QCoreApplication.translate("TransferTableModel", "Done (not verified)")
    return QCoreApplication.translate("TransferTableModel", _STATE_TEXT[job.state])


class TransferTableModel(QAbstractTableModel):
    """Jobs by id; `upsert` updates one row in place so a running bar does not reset the view."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._jobs: list[TransferJob] = []

    def set_jobs(self, jobs: list[TransferJob]) -> None:
        self.beginResetModel()
        self._jobs = list(jobs)
        self.endResetModel()

    def upsert(self, job: TransferJob) -> None:
        for row, old in enumerate(self._jobs):
            if old.id == job.id:
                self._jobs[row] = job
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))
                return
        self.beginInsertRows(QModelIndex(), len(self._jobs), len(self._jobs))
        self._jobs.append(job)
        self.endInsertRows()

    def job(self, row: int) -> TransferJob:
        return self._jobs[row]

    def jobs(self) -> list[TransferJob]:
        return list(self._jobs)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._jobs)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if (
            role == Qt.ItemDataRole.DisplayRole
            and orientation == Qt.Orientation.Horizontal
            and 0 <= section < len(COLUMNS)
        ):
            return QCoreApplication.translate("TransferTableModel", COLUMNS[section])
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._jobs):
            return None
        job = self._jobs[index.row()]
        col = index.column()
        if role == PERCENT_ROLE:
            return job.percent
        if role == Qt.ItemDataRole.ToolTipRole:
            return tooltip_text(job.message or describe(job))  # rsync's errors quote the host
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        running = job.state is JobState.RUNNING
        values = (
            describe(job),
            job.host_alias,
            state_text(job),
            "" if job.percent is None else f"{job.percent} %",
            f"{human_bytes(job.bytes_done)} / {human_bytes(job.bytes_total)}",
            f"{human_bytes(job.rate_bps)}/s" if running and job.rate_bps else "",
            human_duration(job.eta_s) if running else "",
            (job.current_file or "") if running else "",
            job.engine or "",
        )
        return values[col]


class ProgressDelegate(QStyledItemDelegate):
    """Draws PERCENT_ROLE as a progress bar (empty and text-only while the total is unknown)."""

    def paint(self, painter: Any, option: QStyleOptionViewItem, index: Index) -> None:
        percent = index.data(PERCENT_ROLE)
        bar = QStyleOptionProgressBar()
        bar.rect = option.rect.adjusted(2, 3, -2, -3)  # type: ignore[attr-defined]
        bar.minimum, bar.maximum = 0, 100
        bar.progress = int(percent) if percent is not None else 0
        bar.text = index.data() or ""
        bar.textVisible = True
        style = option.widget.style() if option.widget else QApplication.style()  # type: ignore[attr-defined]
        style.drawControl(QStyle.ControlElement.CE_ProgressBar, bar, painter, option.widget)  # type: ignore[attr-defined]
