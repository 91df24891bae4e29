"""Runs page: sharded runs on GNU parallel across hosts (shards with their state, host, exit code
and output; time and cost from the ledger), and the fleet exported for Ansible, Ray, SkyPilot."""

from __future__ import annotations

import functools
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.text import format_duration
from gpu_companion.core.fleet.runs import RunStatus, Shard, run_cost
from gpu_companion.ui.common.models import RowTableModel, row_table
from gpu_companion.ui.common.page import EmptyStatePage, Navigator
from gpu_companion.ui.common.widgets import EmptyState
from gpu_companion.ui.common.worker import run_in_thread
from gpu_companion.ui.runs.dialogs import NewRunDialog

if TYPE_CHECKING:
    from gpu_companion.services import Services

EXPORTS = (
    ("ansible", str(QT_TRANSLATE_NOOP("RunsPage", "Ansible inventory…")), "inventory.yml"),
    ("ray", str(QT_TRANSLATE_NOOP("RunsPage", "Ray cluster config…")), "ray-cluster.yaml"),
    ("ray-start", str(QT_TRANSLATE_NOOP("RunsPage", "Ray start script…")), "start-ray.sh"),
    ("skypilot", str(QT_TRANSLATE_NOOP("RunsPage", "SkyPilot node pools…")), "ssh_node_pools.yaml"),
)
# a shard's state as stored (pending | running | done | failed), in the user's words
SHARD_STATES = {
    "pending": str(QT_TRANSLATE_NOOP("RunsPage", "pending")),
    "running": str(QT_TRANSLATE_NOOP("RunsPage", "running")),
    "done": str(QT_TRANSLATE_NOOP("RunsPage", "done")),
    "failed": str(QT_TRANSLATE_NOOP("RunsPage", "failed")),
}


def _seconds(seconds: float, digits: int) -> str:
    return QCoreApplication.translate("RunsPage", "{seconds} s").format(
        seconds=f"{seconds:.{digits}f}"
    )


def _duration(seconds: float) -> str:
    return (
        format_duration(timedelta(seconds=round(seconds)))
        if seconds >= 60
        else _seconds(seconds, 0)
    )


def _shard_state(shard: Shard) -> str:
    state = QCoreApplication.translate("RunsPage", SHARD_STATES.get(shard.state, shard.state))
    return f"{state}: {shard.reason}" if shard.reason else state


class RunsPage(EmptyStatePage):
    key, title, icon_name = "runs", "Runs", "runs"
    run_changed = Signal(str)

    def __init__(self, ctx: Services, nav: Navigator, parent: QWidget | None = None) -> None:
        super().__init__(ctx, nav, parent)
        self.costs: dict[str, str] = {}
        self._shown: tuple[tuple[str, int], str] | None = None  # the shard output on screen
        self._reselecting = False  # a reload's model reset drops the selection: not a change
        self._out_reads = 0  # reads of shard output asked for; only the newest is shown
        self.empty = EmptyState(
            self.icon_name,
            self.tr("No host to run on"),
            self.tr(
                "A run splits many inputs into shards and runs them across your hosts with GNU "
                "parallel; failed shards can be rerun alone. Add a host first."
            ),
            [(self.tr("Add a host"), lambda: nav.navigate("hosts"))],
        )
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self._build_content())
        # the run registry says when a run changed (its follower reads GNU parallel's joblog);
        # re-posted to the GUI thread, where the page reads the runs again off it
        self.run_changed.connect(self._on_run_changed, Qt.ConnectionType.QueuedConnection)
        self._unsubscribe = ctx.runs.subscribe(lambda run_id: self.run_changed.emit(run_id))
        self._again = False  # a change came while a read was under way: read once more
        self._loading = False
        self.refresh()

    def _build_content(self) -> QWidget:
        content = QWidget()
        lay = QVBoxLayout(content)
        bar = QHBoxLayout()
        self.buttons: dict[str, QPushButton] = {}
        for name, label, slot in (
            ("new", self.tr("New run…"), self.new_run),
            ("resume", self.tr("Rerun failed shards"), self.resume_failed),
            ("cancel", self.tr("Cancel run"), self.cancel_run),
        ):
            b = QPushButton(label)
            b.setObjectName(f"runs_{name}")
            b.clicked.connect(slot)
            bar.addWidget(b)
            self.buttons[name] = b
        self.export_button = QToolButton()
        self.export_button.setObjectName("runs_export")
        self.export_button.setText(self.tr("Export fleet"))
        self.export_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        menu = QMenu(self.export_button)
        for fmt, label, name in EXPORTS:
            menu.addAction(
                QCoreApplication.translate("RunsPage", label),
                functools.partial(self.export, fmt, name),
            )
        self.export_button.setMenu(menu)
        bar.addWidget(self.export_button)
        bar.addStretch(1)
        lay.addLayout(bar)
        self.status = QLabel()
        self.status.setObjectName("runsStatus")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)

        self.runs_model: RowTableModel[RunStatus] = RowTableModel(
            [
                (self.tr("Run"), lambda r: r.run_id),
                (self.tr("Shards"), lambda r: len(r.shards)),
                (self.tr("Done"), lambda r: r.count("done")),
                (self.tr("Failed"), lambda r: r.count("failed")),
                (self.tr("Running"), lambda r: r.count("running") if r.running else "—"),
                (self.tr("Time"), lambda r: _duration(r.elapsed_s())),
                (self.tr("Cost"), lambda r: self.costs.get(r.run_id, "")),
            ],
            self,
        )
        self.shards_model: RowTableModel[Shard] = RowTableModel(
            [
                ("#", lambda s: s.seq),
                (self.tr("Input"), lambda s: s.input),
                (self.tr("State"), _shard_state),
                (self.tr("Host"), lambda s: s.host),
                (self.tr("Exit"), lambda s: "" if s.exit_code is None else s.exit_code),
                (
                    self.tr("Time"),
                    lambda s: "" if s.runtime_s is None else _seconds(s.runtime_s, 1),
                ),
            ],
            self,
        )
        self.runs_table = row_table(self.runs_model, "runsTable")
        self.shards_table = row_table(self.shards_model, "shardsTable")
        self.runs_table.selectionModel().selectionChanged.connect(
            lambda *_: None if self._reselecting else self._show_run()
        )
        self.shards_table.selectionModel().selectionChanged.connect(
            lambda *_: None if self._reselecting else self._show_out()
        )
        self.output = QPlainTextEdit()
        self.output.setObjectName("shardOutput")
        self.output.setReadOnly(True)
        self.output.setPlaceholderText(self.tr("Select a shard to see its output."))
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.shards_table)
        right.addWidget(self.output)
        split = QSplitter()
        split.addWidget(self.runs_table)
        split.addWidget(right)
        split.setSizes([330, 670])
        lay.addWidget(split, 1)
        return content

    # --- data ------------------------------------------------------------------------------

    def refresh(self) -> None:
        has_hosts = bool(self.ctx.registry.hosts(include_released=False))
        self.stack.setCurrentIndex(1 if has_hosts else 0)
        if has_hosts:
            self.reload()

    def _load(self) -> list[tuple[RunStatus, str]]:
        runs = self.ctx.runs
        out = []
        for run_id in runs.ids():
            status = runs.status(run_id)
            out.append((status, run_cost(self.ctx.ledger, status)))
        return out

    def _on_run_changed(self, _run_id: str) -> None:
        self.reload()

    def reload(self) -> None:
        """Read every run's joblog off the GUI thread (when the registry says one changed)."""
        if self._loading:
            self._again = True
            return
        self._loading = True
        run_in_thread(self._load, on_result=self._loaded, on_error=self._load_failed)

    def _loaded(self, rows: list[tuple[RunStatus, str]]) -> None:
        self._loading = False
        selected = self.selected_run()
        self.costs = {s.run_id: cost for s, cost in rows}
        self._reselecting = True
        try:
            self.runs_model.set_rows([s for s, _ in rows])
            ids = [s.run_id for s, _ in rows]
            if ids:
                row = ids.index(selected.run_id) if selected and selected.run_id in ids else 0
                self.runs_table.selectRow(row)
        finally:
            self._reselecting = False
        self._show_run()
        if self._again:
            self._again = False
            self.reload()

    def _load_failed(self, exc: BaseException) -> None:
        self._loading = False
        self.status.setText(self.tr("Could not read the runs: {error}").format(error=exc))

    def selected_run(self) -> RunStatus | None:
        rows = self.runs_table.selectionModel().selectedRows()
        return self.runs_model.row(rows[0].row()) if rows else None

    def _show_run(self) -> None:
        run = self.selected_run()
        seq = self._selected_seq()
        self._reselecting = True
        try:
            self.shards_model.set_rows(run.shards if run else [])
            if seq is not None and run and 0 < seq <= len(run.shards):
                self.shards_table.selectRow(seq - 1)
        finally:
            self._reselecting = False
        self._show_out()
        self.buttons["resume"].setEnabled(bool(run and not run.running and run.count("failed")))
        self.buttons["cancel"].setEnabled(bool(run and run.running))
        if run:
            cost = self.costs.get(run.run_id, "")
            self.status.setText(
                f"{run.summary()}; {_duration(run.elapsed_s())}" + (f"; {cost}" if cost else "")
            )

    def _selected_seq(self) -> int | None:
        rows = self.shards_table.selectionModel().selectedRows()
        return self.shards_model.row(rows[0].row()).seq if rows else None

    def _show_out(self) -> None:
        """Read the selected shard's output off the GUI thread. An unchanged text is left
        alone; one that only grew at its end gets the new part appended; otherwise it is
        replaced, the scroll position kept. A reader following the end stays at the end."""
        run, seq = self.selected_run(), self._selected_seq()
        self._out_reads += 1
        asked = self._out_reads
        if run is None or seq is None:
            self._shown = None
            self.output.clear()
            return
        shard = (run.run_id, seq)

        def current() -> bool:  # the newest read, for the shard still selected
            now = self.selected_run()
            return asked == self._out_reads and now is not None and (
                now.run_id, self._selected_seq()) == shard  # fmt: skip

        def show(text: str) -> None:
            if not current():
                return
            before = self._shown[1] if self._shown and self._shown[0] == shard else None
            self._shown = (shard, text)
            if before == text:
                return
            bar = self.output.verticalScrollBar()
            following, reading = bar.value() == bar.maximum(), bar.value()
            if before is not None and text.startswith(before):  # a running shard's new lines
                cursor = QTextCursor(self.output.document())
                cursor.movePosition(QTextCursor.MoveOperation.End)
                cursor.insertText(text[len(before) :])
            else:
                self.output.setPlainText(text)
                if before is None:
                    return  # another shard: from its top
                bar.setValue(reading)  # the same shard past the tail size: about where it was
            if following:
                bar.setValue(bar.maximum())

        def failed(exc: BaseException) -> None:
            if current():
                self._shown = None
                self.output.setPlainText(
                    self.tr("The shard's output could not be read: {error}").format(error=exc)
                )

        run_in_thread(self.ctx.runs.shard_text, run.run_id, seq, on_result=show, on_error=failed)

    # --- actions ---------------------------------------------------------------------------

    def new_run(self) -> None:
        dialog = NewRunDialog(self.ctx.registry.hosts(include_released=False), self)
        if dialog.exec() != NewRunDialog.DialogCode.Accepted or dialog.spec is None:
            return
        self.start(dialog.spec)

    def start(self, spec: object) -> None:
        def begin() -> str:
            self.ctx.managed_ssh.sync()  # parallel's ssh reads the managed file
            return self.ctx.runs.start(spec)  # type: ignore[arg-type]

        run_in_thread(begin, on_result=lambda _id: self.reload(), on_error=self._failed)

    def resume_failed(self) -> None:
        run = self.selected_run()
        if run is not None:
            run_in_thread(self.ctx.runs.resume_failed, run.run_id,
                          on_result=lambda _r: self.reload(), on_error=self._failed)  # fmt: skip

    def cancel_run(self) -> None:
        run = self.selected_run()
        if run is not None:
            run_in_thread(self.ctx.runs.cancel, run.run_id,
                          on_result=lambda _r: self.reload(), on_error=self._failed)  # fmt: skip

    def _failed(self, exc: BaseException) -> None:
        hint = getattr(exc, "hint", "")
        self.status.setText(f"{exc}" + (f" {hint}" if hint else ""))

    def export(self, fmt: str, default_name: str) -> None:

        path, _ = QFileDialog.getSaveFileName(
            self, self.tr("Export the fleet"), str(Path.home() / default_name)
        )
        if path:
            self.export_to(fmt, Path(path))

    def export_to(self, fmt: str, path: Path) -> None:
        from gpu_companion.core.fleet.export import (
            fleet_hosts,
            public_keys_in,
            render,
            write_private,
        )

        try:
            hosts = fleet_hosts(self.ctx.registry, (), public_keys_in(self.ctx.vault))
            text = render(fmt, hosts, self.ctx.ssh_config.config_path)
            write_private(path, text)  # a new 0600 file: a link there is replaced, not followed
        except UserError as exc:
            QMessageBox.warning(self, self.tr("Export the fleet"), str(exc))
            return
        if fmt in ("ray", "skypilot"):
            text = self.tr(
                "Exported for {format} to {path}. No private key is in it: its comments say how "
                "the hosts are reached."
            )
        else:
            text = self.tr(
                "Exported for {format} to {path}. No private key is in it: the hosts are reached "
                "through the app's ssh config and agent."
            )
        self.status.setText(text.format(format=fmt, path=path))

    def stop(self) -> None:
        self._unsubscribe()
        self._unsubscribe = lambda: None
