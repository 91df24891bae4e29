"""Item models for the tables (checked with pytest-qt's qtmodeltester)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from gpu_companion.ui.common.plain_text import tooltip_text

T = TypeVar("T")
# looked up once: a view asks `data()` for a dozen roles per cell and paint, and each attribute
# of a Qt enum is a lookup through PySide's enum machinery
_DISPLAY, _TOOLTIP = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole
Index = QModelIndex | QPersistentModelIndex
# rows a column's width is measured on (QHeaderView.resizeContentsPrecision): Qt's default,
# 1000, measured every row's text of a 1,000-row history on each reset and show; 0 ("the rows in
# view") measures every row while the page is hidden, as it is when built
RESIZE_ROWS = 20


class RowTableModel(QAbstractTableModel, Generic[T]):
    """A read-only table of rows, one column per (header, getter); `set_rows` resets it."""

    def __init__(
        self, columns: Sequence[tuple[str, Callable[[T], Any]]], parent: Any = None
    ) -> None:
        super().__init__(parent)
        self._columns = list(columns)
        self._rows: list[T] = []

    def set_rows(self, rows: Sequence[T]) -> None:
        self.beginResetModel()
        self._rows = list(rows)
        self.endResetModel()

    def row(self, index: int) -> T:
        return self._rows[index]

    def rows(self) -> list[T]:
        return list(self._rows)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._columns)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if role != _DISPLAY and role != _TOOLTIP:  # the roles asked most, answered first
            return None
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        value = self._columns[index.column()][1](self._rows[index.row()])
        text = "" if value is None else str(value)
        return tooltip_text(text) if role == _TOOLTIP else text

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            if 0 <= section < len(self._columns):
                return self._columns[section][0]
        return None


def row_table(
    model: QAbstractTableModel,
    name: str = "",
    selection: QAbstractItemView.SelectionMode = QAbstractItemView.SelectionMode.SingleSelection,
) -> QTableView:
    """The app's read-only table: whole rows (one at a time unless `selection` says otherwise),
    no row numbers, columns sized to their contents with the last one stretched."""
    view = QTableView()
    if name:
        view.setObjectName(name)
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(selection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.verticalHeader().hide()
    view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    # widths from the rows in view, never every row: at thousands of rows, measuring each
    # one's text on every reset held the GUI thread for a second
    view.horizontalHeader().setResizeContentsPrecision(RESIZE_ROWS)
    view.horizontalHeader().setStretchLastSection(True)
    return view
