"""Transfers page: the queue with progress bars, job actions, drop files on a host to upload.

The page drives nothing: the queue's lane scheduler runs the lanes, and every job snapshot the
queue saves (whichever page or command queued the job) reaches the table through `JobEvents`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.transfers.job import JobState, TransferJob, validate_remote_path
from gpu_companion.core.transfers.presets import (
    BACKUPS_DIR,
    backup_dir,
    sync_checkpoints,
    upload_options,
)
from gpu_companion.core.transfers.queue import TransferQueue
from gpu_companion.ui.common.flow import button_bar
from gpu_companion.ui.common.models import RESIZE_ROWS
from gpu_companion.ui.common.page import EmptyStatePage, Navigator
from gpu_companion.ui.common.widgets import EmptyState
from gpu_companion.ui.common.worker import run_in_thread
from gpu_companion.ui.transfers.bridge import JobEvents
from gpu_companion.ui.transfers.dialogs import SyncCheckpointsDialog, TransferDialog
from gpu_companion.ui.transfers.model import PROGRESS_COLUMN, ProgressDelegate, TransferTableModel
from gpu_companion.ui.transfers.remote_picker import RemotePathDialog

if TYPE_CHECKING:
    from gpu_companion.services import Services

HOST_ROLE = Qt.ItemDataRole.UserRole + 1
FINISHED_PAGE = 200  # finished jobs shown at first (with every unfinished one), and per page on


class HostDropList(QListWidget):
    """Hosts as drop targets: dropping local files or folders on one queues their upload."""

    files_dropped = Signal(str, list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAcceptDrops(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DropOnly)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:
        if event.mimeData().hasUrls() and self.itemAt(event.position().toPoint()) is not None:
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        item = self.itemAt(event.position().toPoint())
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if item is None or not paths:
            event.ignore()
            return
        event.acceptProposedAction()
        self.files_dropped.emit(str(item.data(HOST_ROLE)), paths)


class TransfersPage(EmptyStatePage):
    key, title, icon_name = (
        "transfers",
        str(QT_TRANSLATE_NOOP("TransfersPage", "Transfers")),
        "transfers",
    )

    def __init__(self, ctx: Services, nav: Navigator, parent: QWidget | None = None) -> None:
        super().__init__(ctx, nav, parent)
        self.queue: TransferQueue = ctx.transfers
        self.finished_shown = FINISHED_PAGE
        self.open_url: Callable[[QUrl], object] = QDesktopServices.openUrl
        self.empty = EmptyState(
            self.icon_name,
            self.tr("No host to transfer to"),
            self.tr(
                "Uploads and downloads here resume after a dropped connection and end with a "
                "checksum on both sides. Add a host first."
            ),
            [(self.tr("Add a host"), lambda: nav.navigate("hosts"))],
        )
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self._build_content())
        self.events = self._follow(self.queue)
        self.refresh()
        self.start_lanes()

    def _follow(self, queue: TransferQueue) -> JobEvents:
        events = JobEvents(queue, self)
        events.job_changed.connect(self._on_job)
        self.destroyed.connect(lambda *_: events.close())  # no snapshot for a deleted page
        return events

    def use_queue(self, queue: TransferQueue) -> None:
        """Show and follow another queue (tests swap the app's for one of their own)."""
        self.events.close()
        self.events.deleteLater()
        self.queue = queue
        self.events = self._follow(queue)
        self.refresh()
        self.start_lanes()

    # --- layout --------------------------------------------------------------------------

    def _build_content(self) -> QWidget:
        left = QWidget()
        left.setFixedWidth(190)
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        hint = QLabel(self.tr("<b>Hosts</b><br>Drop files or folders on a host to upload them."))
        hint.setWordWrap(True)
        ll.addWidget(hint)
        self.host_list = HostDropList()
        self.host_list.setObjectName("hostDropList")
        self.host_list.files_dropped.connect(self.upload_dropped)
        ll.addWidget(self.host_list)
        ll.addWidget(QLabel(self.tr("Upload into (on the host)")))
        self.upload_dir = QLineEdit("uploads")
        self.upload_dir.setObjectName("uploadDir")
        ll.addWidget(self.upload_dir)

        right = QWidget()
        rl = QVBoxLayout(right)
        self.buttons: dict[str, QPushButton] = {}
        for name, label, slot in (
            ("upload", self.tr("Upload…"), lambda: self.new_transfer("upload")),
            ("download", self.tr("Download…"), lambda: self.new_transfer("download")),
            ("checkpoints", self.tr("Sync checkpoints…"), self.sync_checkpoints_dialog),
            ("pause", self.tr("Pause"), self.pause_selected),
            ("resume", self.tr("Resume"), self.resume_selected),
            ("cancel", self.tr("Cancel…"), lambda: self.cancel_selected()),
            ("retry", self.tr("Retry"), self.retry_selected),
            ("open", self.tr("Open folder"), self.open_selected_folder),
        ):
            b = QPushButton(label)
            b.setObjectName(f"transfer_{name}")
            b.clicked.connect(slot)
            self.buttons[name] = b
        rl.addWidget(button_bar(*self.buttons.values()))  # wraps in a narrow window
        self.model = TransferTableModel(self)
        self.table = QTableView()
        self.table.setObjectName("transferTable")
        self.table.setModel(self.model)
        self.table.setItemDelegateForColumn(PROGRESS_COLUMN, ProgressDelegate(self.table))
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(PROGRESS_COLUMN, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(PROGRESS_COLUMN, 120)
        self.table.selectionModel().currentRowChanged.connect(self._update_buttons)
        # columns fit the rows in view, never all of them: measuring every row's text on each
        # reset took most of a second at 2,000 jobs
        header.setResizeContentsPrecision(RESIZE_ROWS)
        rl.addWidget(self.table)
        self.older = QPushButton()
        self.older.setObjectName("transferOlder")
        self.older.setFlat(True)
        self.older.clicked.connect(self.show_older)
        self.older.hide()
        rl.addWidget(self.older, 0, Qt.AlignmentFlag.AlignLeft)
        self.detail = QLabel()
        self.detail.setObjectName("transferDetail")
        self.detail.setTextFormat(Qt.TextFormat.PlainText)  # rsync's and the host's words
        self.detail.setWordWrap(True)
        rl.addWidget(self.detail)

        content = QWidget()
        row = QHBoxLayout(content)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(left)
        row.addWidget(right, 1)
        return content

    # --- state ---------------------------------------------------------------------------

    def refresh(self) -> None:
        self.queue.recover_orphans()  # a `gpu-companion transfer` killed since: its jobs pause
        hosts = self._hosts()
        self.host_list.clear()
        for h in hosts:
            item = QListWidgetItem(h.alias)
            item.setData(HOST_ROLE, h.alias)
            self.host_list.addItem(item)
        selected = self.selected_job()
        # every unfinished job and only the newest finished ones: a year of use leaves tens of
        # thousands, and the table sizes its columns on the GUI thread ("Show older" pages on)
        jobs = self.queue.recent(self.finished_shown)
        self.model.set_jobs(jobs)
        for row, job in enumerate(jobs):  # keep the user's selection across the reload
            if selected is not None and job.id == selected.id:
                self.table.selectRow(row)
        self._show_older_button()
        self.stack.setCurrentIndex(1 if hosts or jobs else 0)
        self._update_buttons()

    def show_older(self) -> None:
        """Page on: `FINISHED_PAGE` more finished jobs."""
        self.finished_shown += FINISHED_PAGE
        self.refresh()

    def _show_older_button(self) -> None:
        hidden = self.queue.count_finished() - sum(j.state.finished for j in self.model.jobs())
        self.older.setVisible(hidden > 0)
        self.older.setText(
            QCoreApplication.translate("TransfersPage", "Show older (%n more)", None, hidden)
        )

    def _hosts(self) -> list[Host]:
        return self.ctx.registry.hosts(include_released=False)

    def selected_job(self) -> TransferJob | None:
        index = self.table.selectionModel().currentIndex()
        if not index.isValid():
            return None
        return self.model.job(index.row())

    def _update_buttons(self, *_args: object) -> None:
        job = self.selected_job()
        state = job.state if job else None
        self.buttons["pause"].setEnabled(state in (JobState.RUNNING, JobState.QUEUED))
        self.buttons["resume"].setEnabled(state is JobState.PAUSED)
        self.buttons["cancel"].setEnabled(
            state in (JobState.RUNNING, JobState.QUEUED, JobState.PAUSED)
        )
        self.buttons["retry"].setEnabled(state in (JobState.FAILED, JobState.CANCELLED))
        self.buttons["open"].setEnabled(job is not None)
        self.detail.setText(job.message if job else "")

    def _on_job(self, job: TransferJob) -> None:
        """A snapshot the queue saved (any page's or command's job), on the GUI thread."""
        before = next((j for j in self.model.jobs() if j.id == job.id), None)
        self.model.upsert(job)
        self.stack.setCurrentIndex(1)
        self._update_buttons()
        if job.state is JobState.FAILED and (before is None or before.state is not job.state):
            self.ctx.notifier.error(
                self.tr("Transfer to {host} failed: {message}").format(
                    host=job.host_alias, message=job.message
                ),
                source="transfers",
                key=f"transfer-{job.id}",
            )

    # --- running -------------------------------------------------------------------------

    def start_lanes(self) -> None:
        """The queue's scheduler runs the lanes (one thread per host with queued jobs, never the
        shared pool) and starts a host's lane whenever a job is queued from now on."""
        self.queue.scheduler.start()

    def stop(self) -> None:
        """App quit: running jobs are paused (partial data kept) and their lanes end."""
        self.events.close()
        self.queue.shutdown()

    # --- actions -------------------------------------------------------------------------

    def add_job(self, job: TransferJob) -> TransferJob | None:
        try:
            added = self.queue.add(job)
        except UserError as exc:
            self.ctx.notifier.error(str(exc), source="transfers")
            return None
        self.model.upsert(added)
        self.stack.setCurrentIndex(1)
        return added

    def upload_dropped(self, alias: str, paths: list[str]) -> list[TransferJob]:
        try:
            folder = validate_remote_path(self.upload_dir.text())
        except UserError as exc:
            self.ctx.notifier.error(str(exc), source="transfers")
            return []
        added = []
        for p in paths:
            local = Path(p)
            remote = f"{folder.rstrip('/')}/{local.name}" if local.is_dir() else folder
            job = self.add_job(TransferJob(alias, "upload", p, remote, upload_options()))
            if job is not None:
                added.append(job)
        return added

    def browse_remote(self, host: Host, start: str = ".") -> str | None:
        dialog = RemotePathDialog(host, self.queue.engine.client_factory, start, self)
        return dialog.path() if dialog.exec() else None

    def new_transfer(self, direction: str) -> None:
        dialog = TransferDialog(
            self._hosts(),
            "upload" if direction == "upload" else "download",
            self.browse_remote,
            self,
        )
        if dialog.exec() and dialog.job is not None:
            self.submit(dialog.job)

    def submit(self, job: TransferJob) -> None:
        """Queue a job; one with --delete first shows what the dry run would delete."""
        if not job.options.delete:
            self.add_job(job)
            return
        host = self.ctx.registry.host(job.host_alias)
        if host is None:
            return
        run_in_thread(
            self.queue.engine.preview_delete,
            job,
            host,
            on_result=lambda names: self._confirm_delete(job, names),
            on_error=lambda exc: self.ctx.notifier.error(str(exc), source="transfers"),
        )

    def _confirm_delete(self, job: TransferJob, names: list[str]) -> None:
        listing = "\n".join(names[:30])
        count, more_count = len(names), len(names) - 30  # plain names for lupdate
        if more_count > 0:
            more = QCoreApplication.translate("TransfersPage", "… and %n more", None, more_count)
            listing += f"\n{more}"
        answer = self.ask(
            self.tr("Delete at the destination?"),
            QCoreApplication.translate(
                "TransfersPage",
                "This transfer would delete %n file(s) at the destination:\n\n{listing}\n\n"
                "Queue it with deletion?",
                None,
                count,
            ).format(listing=listing or self.tr("(nothing)")),
        )
        if answer:
            self.add_job(replace(job, options=replace(job.options, delete_previewed=True)))

    def ask(self, title: str, text: str) -> bool:
        box = QMessageBox.question(self, title, text)
        return box == QMessageBox.StandardButton.Yes

    def default_backup_root(self) -> str:
        """Where checkpoint syncs land unless the user picks another folder: the release
        gate's backup folder, so a sync from here counts as the host's backup."""
        return str(self.ctx.paths.data_dir / BACKUPS_DIR)

    def sync_checkpoints_dialog(self) -> None:
        default = self.default_backup_root()
        dialog = SyncCheckpointsDialog(self._hosts(), self.browse_remote, default, self)
        if dialog.exec():
            self.queue_checkpoint_sync(dialog)

    def queue_checkpoint_sync(self, dialog: SyncCheckpointsDialog) -> TransferJob | None:
        host = dialog.chosen_host()
        if host is None:
            return None
        remote = dialog.remote.text()
        local = str(backup_dir(Path(dialog.local.text().strip()), host, remote))
        try:
            job = sync_checkpoints(self.queue, host, remote, local)
        except UserError as exc:
            self.ctx.notifier.error(str(exc), source="transfers")
            return None
        self.model.upsert(job)
        return job

    def pause_selected(self) -> None:
        job = self.selected_job()
        if job and job.id is not None:
            self.queue.pause(job.id)
            self._reload(job.id)

    def resume_selected(self) -> None:
        job = self.selected_job()
        if job and job.id is not None:
            self.queue.resume(job.id)
            self._reload(job.id)

    def retry_selected(self) -> None:
        job = self.selected_job()
        if job and job.id is not None:
            self.queue.retry(job.id)
            self._reload(job.id)

    def cancel_selected(self, keep_partial: bool | None = None) -> None:
        job = self.selected_job()
        if not job or job.id is None:
            return
        if keep_partial is None:
            box = QMessageBox(self)
            box.setWindowTitle(self.tr("Cancel transfer"))
            box.setText(self.tr("Keep the partly transferred data? Kept data lets a retry resume."))
            keep = box.addButton(self.tr("Keep partial data"), QMessageBox.ButtonRole.AcceptRole)
            box.addButton(self.tr("Delete partial data"), QMessageBox.ButtonRole.DestructiveRole)
            back = box.addButton(self.tr("Don't cancel"), QMessageBox.ButtonRole.RejectRole)
            box.exec()
            if box.clickedButton() is back:
                return
            keep_partial = box.clickedButton() is keep
        job_id = job.id
        run_in_thread(
            self.queue.cancel, job_id, keep_partial, on_finished=lambda: self._reload(job_id)
        )

    def open_selected_folder(self) -> None:
        job = self.selected_job()
        if job is None:
            return
        path = Path(job.local_path)
        folder = path if path.is_dir() else path.parent
        self.open_url(QUrl.fromLocalFile(str(folder)))

    def _reload(self, job_id: int) -> None:
        job = self.queue.get(job_id)
        if job is not None:
            self.model.upsert(job)
            self._update_buttons()
