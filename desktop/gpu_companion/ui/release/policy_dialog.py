"""The auto-release policy of one host: on/off and each rule's threshold, saved where the
AutoReleaseService reads it (`save_policy`). Nothing here releases: the checklist still decides."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.access.launch import validate_tmux_session
from gpu_companion.core.autorelease.policy import Policy
from gpu_companion.core.autorelease.service import load_policy, save_policy
from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.storage.store import Store
from gpu_companion.ui.common.widgets import form_error_label


def policy_summary(policy: Policy | None) -> str:
    """One line for the Release page: what acts on this host, and after which countdown."""
    if policy is None:
        return "Auto-release: off"
    rules = []
    if policy.idle_minutes:
        rules.append(f"idle {policy.idle_minutes} min")
    if policy.stall_minutes:
        rules.append(f"stalled {policy.stall_minutes} min")
    if policy.finished_session:
        rules.append(f"tmux '{policy.finished_session}' ended")
    rules.append(f"planned end + {policy.runtime_grace_minutes} min")
    if policy.forgotten_hours:
        rules.append(f"unattended {policy.forgotten_hours} h")
    if policy.on_budget:
        rules.append("budget used up")
    verb = "stop" if policy.action == "stop" else "release"
    return (
        f"Auto-{verb}: on ({', '.join(rules)}); {policy.notice_minutes} min notice, only when "
        "the checklist passes"
    )


def _spin(value: int, top: int, suffix: str, name: str, bottom: int = 0) -> QSpinBox:
    box = QSpinBox()
    box.setRange(bottom, top)
    box.setValue(value)
    box.setSuffix(suffix)
    box.setObjectName(name)
    return box


class PolicyDialog(QDialog):
    """Per host; 0 minutes switches a rule off. Save is refused with a message, never guessed."""

    def __init__(self, store: Store, host: Host, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(f"Auto-release of {host.alias}")
        self.store, self.host = store, host
        assert host.id is not None
        saved = load_policy(store, host.id)
        p = saved or Policy()
        self.enabled = QCheckBox(f"Release {host.alias} for me when it wastes money")
        self.enabled.setObjectName("autoreleaseEnabled")
        self.enabled.setChecked(saved is not None)
        form = QFormLayout()
        self.idle = _spin(p.idle_minutes, 24 * 60, " min", "idleMinutes")
        self.idle_util = _spin(p.idle_util_pct, 100, " %", "idleUtil")
        self.idle_power = _spin(round(p.idle_power_share * 100), 99, " % of its power limit",
                                "idlePower", bottom=1)  # fmt: skip
        self.stall = _spin(p.stall_minutes, 24 * 60, " min", "stallMinutes")
        self.stall_util = _spin(p.stall_util_pct, 100, " %", "stallUtil")
        self.session = QLineEdit(p.finished_session)
        self.session.setObjectName("finishedSession")
        self.session.setPlaceholderText("e.g. train (empty: not watched)")
        self.grace = _spin(p.runtime_grace_minutes, 7 * 24 * 60, " min", "graceMinutes")
        self.forgotten = _spin(p.forgotten_hours, 24 * 30, " h", "forgottenHours")
        self.budget = QCheckBox(self.tr("when a budget that covers it is used up"))
        self.budget.setObjectName("onBudget")
        self.budget.setChecked(p.on_budget)
        self.notice = _spin(p.notice_minutes, 24 * 60, " min", "noticeMinutes")
        self.action = QComboBox()
        self.action.setObjectName("policyAction")
        self.action.addItem("Release (destroy) the instance", "release")
        self.action.addItem("Stop it (the disk keeps billing)", "stop")
        self.action.setCurrentIndex(max(self.action.findData(p.action), 0))
        form.addRow("Idle: every GPU idle for", self.idle)
        form.addRow("   idle means utilisation under", self.idle_util)
        form.addRow("   and power under", self.idle_power)
        form.addRow("Stalled: for", self.stall)
        form.addRow("   utilisation at least (at idle power)", self.stall_util)
        form.addRow("Finished: when this tmux session ends", self.session)
        form.addRow("Planned end passed by", self.grace)
        form.addRow("Act regardless after, unattended", self.forgotten)
        form.addRow(self.tr("Budget:"), self.budget)
        form.addRow("Countdown before acting", self.notice)
        form.addRow("Then", self.action)
        note = QLabel(
            "0 switches a rule off. A rule that holds first shows a countdown with Keep running, "
            "Release now and Snooze; then the backup checklist runs unattended, and the instance "
            "is released only when every item passes and none is stale. Otherwise it keeps "
            "running and you are told what failed."
        )
        note.setWordWrap(True)
        self.error = form_error_label()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.enabled)
        lay.addLayout(form)
        lay.addWidget(note)
        lay.addWidget(self.error)
        lay.addWidget(buttons)
        self.enabled.toggled.connect(self._sync)
        self._sync()

    def _sync(self) -> None:
        on = self.enabled.isChecked()
        for kind in (QSpinBox, QLineEdit, QComboBox):
            for w in self.findChildren(kind):
                w.setEnabled(on)
        self.budget.setEnabled(on)

    def edited(self) -> Policy:
        session = self.session.text().strip()
        if session:
            session = validate_tmux_session(session)
        return Policy(
            idle_minutes=self.idle.value(),
            idle_util_pct=self.idle_util.value(),
            idle_power_share=self.idle_power.value() / 100,
            stall_minutes=self.stall.value(),
            stall_util_pct=self.stall_util.value(),
            finished_session=session,
            runtime_grace_minutes=self.grace.value(),
            forgotten_hours=self.forgotten.value(),
            on_budget=self.budget.isChecked(),
            notice_minutes=self.notice.value(),
            action=str(self.action.currentData()),
        ).validated()

    def save(self) -> None:
        assert self.host.id is not None
        try:
            policy = self.edited() if self.enabled.isChecked() else None
            save_policy(self.store, self.host.id, policy)
        except ValidationError as exc:
            self.error.setText(exc.message)
            self.error.show()
            return
        self.accept()
