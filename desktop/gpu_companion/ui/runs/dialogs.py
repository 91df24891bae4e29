"""New run: hosts with their slots, a command template, and inputs (an id range or a list)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QRadioButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.fleet.runs import HostSlots, RunSpec, parse_range, split_range
from gpu_companion.core.hosts.registry import Host
from gpu_companion.ui.common.widgets import form_error_label


class NewRunDialog(QDialog):
    def __init__(self, hosts: list[Host], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("New sharded run"))
        self.setObjectName("newRunDialog")
        self.spec: RunSpec | None = None
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel(self.tr("Hosts (jobs at once on each; default its GPU count)")))
        self.hosts = QTableWidget(len(hosts), 2)
        self.hosts.setObjectName("runHosts")
        self.hosts.setHorizontalHeaderLabels([self.tr("Host"), self.tr("Jobs at once")])
        self.hosts.verticalHeader().hide()
        self.slots: list[QSpinBox] = []
        for row, host in enumerate(hosts):
            item = QTableWidgetItem(host.alias)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked)
            self.hosts.setItem(row, 0, item)
            spin = QSpinBox()
            spin.setRange(1, 256)
            spin.setValue(max(host.gpu_count, 1))
            self.hosts.setCellWidget(row, 1, spin)
            self.slots.append(spin)
        self.hosts.resizeColumnsToContents()
        lay.addWidget(self.hosts)

        form = QFormLayout()
        self.command = QLineEdit()
        self.command.setObjectName("runCommand")
        self.command.setPlaceholderText(self.tr("python work.py --from {1} --to {2}"))
        form.addRow(self.tr("Command on each host"), self.command)
        self.by_range = QRadioButton(self.tr("Id range"))
        self.by_list = QRadioButton(self.tr("List of inputs (paths on the hosts)"))
        self.by_range.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.by_range)
        group.addButton(self.by_list)
        range_row = QHBoxLayout()
        self.range = QLineEdit("0:1000")
        self.range.setObjectName("runRange")
        self.shards = QSpinBox()
        self.shards.setObjectName("runShards")
        self.shards.setRange(1, 100_000)
        self.shards.setValue(20)
        range_row.addWidget(self.by_range)
        range_row.addWidget(self.range)
        range_row.addWidget(QLabel(self.tr("in", "an id range in N shards")))
        range_row.addWidget(self.shards)
        range_row.addWidget(QLabel(self.tr("shards ({1} = first id, {2} = one past the last)")))
        form.addRow(range_row)
        form.addRow(self.by_list)
        self.inputs = QPlainTextEdit()
        self.inputs.setObjectName("runInputs")
        self.inputs.setPlaceholderText(self.tr("one input per line, e.g. data/part-0001.jsonl"))
        form.addRow(self.inputs)
        self.retries = QSpinBox()
        self.retries.setRange(1, 10)
        self.retries.setValue(2)
        form.addRow(self.tr("Attempts per shard"), self.retries)
        lay.addLayout(form)
        self.error = form_error_label()
        lay.addWidget(self.error)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText(self.tr("Start run"))
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    def build_spec(self) -> RunSpec:
        items = [(self.hosts.item(r, 0), self.slots[r]) for r in range(self.hosts.rowCount())]
        chosen = [
            HostSlots(item.text(), slots.value())
            for item, slots in items
            if item is not None and item.checkState() == Qt.CheckState.Checked
        ]
        if self.by_range.isChecked():
            inputs = split_range(*parse_range(self.range.text().strip()), self.shards.value())
        else:
            inputs = tuple(x.strip() for x in self.inputs.toPlainText().splitlines() if x.strip())
        return RunSpec(
            hosts=tuple(chosen),
            command=self.command.text().strip(),
            inputs=inputs,
            by_range=self.by_range.isChecked(),
            retries=self.retries.value(),
        ).validated()

    def accept(self) -> None:
        try:
            self.spec = self.build_spec()
        except UserError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        super().accept()
