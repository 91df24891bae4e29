"""Pick a folder on a host: a tree listed over SFTP one level at a time, off the GUI thread."""

from __future__ import annotations

import posixpath
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QModelIndex, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.transfers.engine import ClientFactory
from gpu_companion.core.transfers.remote_browse import RemoteEntry, list_remote_dir
from gpu_companion.ui.common.worker import Worker, run_in_thread

PATH_ROLE = Qt.ItemDataRole.UserRole + 1
LOADED_ROLE = Qt.ItemDataRole.UserRole + 2
_LOADING = str(QT_TRANSLATE_NOOP("RemotePathDialog", "Loading…"))  # translated where shown


class RemotePathDialog(QDialog):
    """The chosen path is in `path()`; typing a path that does not exist yet is allowed."""

    def __init__(
        self,
        host: Host,
        client_factory: ClientFactory,
        start: str = ".",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Choose a folder on {host}").format(host=host.alias))
        self.resize(520, 420)
        self.host, self.client_factory = host, client_factory
        self.model = QStandardItemModel(self)
        self.model.setHorizontalHeaderLabels([self.tr("Folder")])
        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.expanded.connect(self._expanded)
        self.tree.selectionModel().currentChanged.connect(self._selected)
        self.path_edit = QLineEdit(start)
        self.path_edit.setObjectName("remotePath")
        self.status = QLabel(self.tr("Connecting…"))
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # paths and errors from the host
        self.status.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.tree)
        lay.addWidget(self.path_edit)
        lay.addWidget(self.status)
        lay.addWidget(buttons)
        self.workers: list[Worker] = []
        self._load(None, start)

    def path(self) -> str:
        return self.path_edit.text().strip()

    def _load(self, item: QStandardItem | None, path: str) -> None:
        def done(result: tuple[str, list[RemoteEntry]]) -> None:
            self._fill(item, *result)

        self.workers.append(
            run_in_thread(
                list_remote_dir,
                self.client_factory,
                self.host,
                path,
                on_result=done,
                on_error=self._failed,
            )
        )

    def _fill(self, item: QStandardItem | None, path: str, entries: list[RemoteEntry]) -> None:
        if item is None:
            item = QStandardItem(path)
            item.setData(path, PATH_ROLE)
            item.setEditable(False)
            self.model.appendRow(item)
            self.path_edit.setText(path)
        item.removeRows(0, item.rowCount())
        item.setData(True, LOADED_ROLE)
        for e in entries:
            child = QStandardItem(e.name)
            child.setEditable(False)
            child.setData(e.path, PATH_ROLE)
            loading = QCoreApplication.translate("RemotePathDialog", _LOADING)
            child.appendRow(QStandardItem(loading))  # makes it expandable until listed
            item.appendRow(child)
        self.tree.expand(item.index())
        count = len(entries)  # a plain name: lupdate drops a translate() counting an expression
        self.status.setText(
            QCoreApplication.translate(
                "RemotePathDialog", "%n folder(s) in {path}", None, count
            ).format(path=path)
        )

    def _failed(self, exc: Exception) -> None:
        self.status.setText(str(exc))

    def _expanded(self, index: QModelIndex) -> None:
        item = self.model.itemFromIndex(index)
        if item is not None and not item.data(LOADED_ROLE):
            item.setData(True, LOADED_ROLE)
            self._load(item, str(item.data(PATH_ROLE)))

    def _selected(self, current: QModelIndex, _previous: Any) -> None:
        path = current.data(PATH_ROLE)
        if path:
            self.path_edit.setText(posixpath.normpath(str(path)))
