"""The new-transfer form (upload or download, limits, excludes, delete with a preview) and the
"sync checkpoints" preset form."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.transfers.job import (
    DEFAULT_UPLOAD_EXCLUDES,
    Direction,
    TransferJob,
    TransferOptions,
)


class TransferDialog(QDialog):
    """Builds a TransferJob; `browse_remote(host) -> str | None` opens the remote picker."""

    def __init__(
        self,
        hosts: list[Host],
        direction: Direction,
        browse_remote: Callable[[Host], str | None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.direction: Direction = direction
        self.hosts = hosts
        self.browse_remote = browse_remote
        self.setWindowTitle(
            self.tr("New upload") if direction == "upload" else self.tr("New download")
        )
        self.host = QComboBox()
        for h in hosts:
            self.host.addItem(h.alias)
        self.local = QLineEdit()
        self.local.setObjectName("local_path")
        self.remote = QLineEdit("uploads" if direction == "upload" else "")
        self.remote.setObjectName("remote_path")
        self.bwlimit = QSpinBox()
        self.bwlimit.setRange(0, 10_000_000)
        self.bwlimit.setSuffix(self.tr(" KiB/s"))
        self.bwlimit.setSpecialValueText(self.tr("unlimited"))
        self.excludes = QLineEdit(
            ", ".join(DEFAULT_UPLOAD_EXCLUDES) if direction == "upload" else ""
        )
        self.delete = QCheckBox(
            self.tr("Delete files at the destination that the source does not have")
        )
        self.delete.setToolTip(
            self.tr("A dry run lists what would be deleted before anything runs.")
        )
        form = QFormLayout()
        form.addRow(self.tr("Host"), self.host)
        form.addRow(self.tr("On this computer"), self._local_row())
        form.addRow(self.tr("On the host"), self._with_button(self.remote, self._browse_remote))
        form.addRow(self.tr("Bandwidth limit"), self.bwlimit)
        form.addRow(self.tr("Exclude (comma separated)"), self.excludes)
        form.addRow("", self.delete)
        self.error = QLabel()
        self.error.setObjectName("formError")
        self.error.setStyleSheet("color: #c53030;")
        self.error.setWordWrap(True)
        self.error.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self._try_accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.error)
        lay.addWidget(buttons)
        self.job: TransferJob | None = None

    def _with_button(self, edit: QLineEdit, slot: Callable[[], None]) -> QWidget:
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(edit)
        b = QPushButton(self.tr("Browse…"))
        b.clicked.connect(slot)
        row.addWidget(b)
        return box

    def _local_row(self) -> QWidget:
        """An upload is most often a folder (a dataset, a project), sometimes one file: a button
        for each; a download lands in a folder."""
        if self.direction != "upload":
            return self._with_button(self.local, self._browse_local_folder)
        box = QWidget()
        row = QHBoxLayout(box)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.local)
        self.browse_folder = QPushButton(self.tr("Folder…"))
        self.browse_folder.setObjectName("browse_folder")
        self.browse_folder.setToolTip(self.tr("Upload a folder and everything in it"))
        self.browse_folder.clicked.connect(self._browse_local_folder)
        self.browse_file = QPushButton(self.tr("File…"))
        self.browse_file.setObjectName("browse_file")
        self.browse_file.setToolTip(self.tr("Upload one file"))
        self.browse_file.clicked.connect(self._browse_local_file)
        row.addWidget(self.browse_folder)
        row.addWidget(self.browse_file)
        return box

    def _browse_local_folder(self) -> None:
        if self.direction == "upload":
            title = self.tr("Folder to upload")
        else:
            title = self.tr("Download into")
        path = QFileDialog.getExistingDirectory(self, title, self.local.text().strip())
        if path:
            self.local.setText(path)

    def _browse_local_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, self.tr("File to upload"), self.local.text().strip()
        )
        if path:
            self.local.setText(path)

    def _browse_remote(self) -> None:
        chosen = self.browse_remote(self.hosts[self.host.currentIndex()])
        if chosen:
            self.remote.setText(chosen)

    def build(self) -> TransferJob:
        if not self.hosts:
            raise ValidationError("host", self.tr("Add a host first."))
        local = self.local.text().strip()
        if self.direction == "upload" and local and not Path(local).exists():
            raise ValidationError(
                "local_path", self.tr("{path} does not exist.").format(path=local)
            )
        excludes = tuple(e.strip() for e in self.excludes.text().split(",") if e.strip())
        return TransferJob(
            self.hosts[self.host.currentIndex()].alias,
            self.direction,
            local,
            self.remote.text(),
            TransferOptions(
                excludes=excludes, bwlimit_kbps=self.bwlimit.value(), delete=self.delete.isChecked()
            ),
        ).validated()

    def _try_accept(self) -> None:
        try:
            self.job = self.build()
        except ValidationError as exc:
            self.error.setText(exc.message)
            self.error.show()
            return
        self.accept()


class SyncCheckpointsDialog(QDialog):
    """Remote output folder → local folder, incremental and verified (the preset)."""

    def __init__(
        self,
        hosts: list[Host],
        browse_remote: Callable[[Host], str | None],
        default_local: str,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Sync checkpoints"))
        self.hosts, self.browse_remote = hosts, browse_remote
        self.host = QComboBox()
        for h in hosts:
            self.host.addItem(h.alias)
        self.remote = QLineEdit("outputs")
        self.remote.setObjectName("remote_path")
        self.local = QLineEdit(default_local)
        self.local.setObjectName("local_path")
        browse = QPushButton(self.tr("Browse…"))
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.remote)
        row.addWidget(browse)
        form = QFormLayout()
        form.addRow(self.tr("Host"), self.host)
        form.addRow(self.tr("Output folder on the host"), row)
        form.addRow(self.tr("Back up into"), self.local)
        note = QLabel(
            self.tr(
                "Only new or changed files are copied; partial files resume; every file is "
                "checksummed on both sides at the end. Nothing in the local folder is deleted. "
                "Files land in <folder>/<host>/<path on the host>: the release checklist counts "
                "a verified copy there as the host's backup."
            )
        )
        note.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(note)
        lay.addWidget(buttons)

    def chosen_host(self) -> Host | None:
        i = self.host.currentIndex()
        return self.hosts[i] if 0 <= i < len(self.hosts) else None

    def _browse(self) -> None:
        host = self.chosen_host()
        chosen = self.browse_remote(host) if host else None
        if chosen:
            self.remote.setText(chosen)
