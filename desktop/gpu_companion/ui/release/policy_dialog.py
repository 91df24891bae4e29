"""The auto-release policy of one host: on/off and each rule's threshold, saved where the
AutoReleaseService reads it (`save_policy`). Nothing here releases: the checklist still decides."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
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
        return QCoreApplication.translate("PolicySummary", "Auto-release: off")
    rules = []
    if policy.idle_minutes:
        rules.append(
            QCoreApplication.translate("PolicySummary", "idle {n} min").format(
                n=policy.idle_minutes
            )
        )
    if policy.stall_minutes:
        rules.append(
            QCoreApplication.translate("PolicySummary", "stalled {n} min").format(
                n=policy.stall_minutes
            )
        )
    if policy.finished_session:
        rules.append(
            QCoreApplication.translate("PolicySummary", "tmux '{session}' ended").format(
                session=policy.finished_session
            )
        )
    rules.append(
        QCoreApplication.translate("PolicySummary", "planned end + {n} min").format(
            n=policy.runtime_grace_minutes
        )
    )
    if policy.forgotten_hours:
        rules.append(
            QCoreApplication.translate("PolicySummary", "unattended {n} h").format(
                n=policy.forgotten_hours
            )
        )
    if policy.on_budget:
        rules.append(QCoreApplication.translate("PolicySummary", "budget used up"))
    if policy.action == "stop":
        text = QCoreApplication.translate(
            "PolicySummary",
            "Auto-stop: on ({rules}); {n} min notice, only when the checklist passes",
        )
    else:
        text = QCoreApplication.translate(
            "PolicySummary",
            "Auto-release: on ({rules}); {n} min notice, only when the checklist passes",
        )
    separator = QCoreApplication.translate("PolicySummary", ", ", "between the rules of a list")
    return text.format(rules=separator.join(rules), n=policy.notice_minutes)


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
        self.setWindowTitle(self.tr("Auto-release of {host}").format(host=host.alias))
        self.store, self.host = store, host
        assert host.id is not None
        saved = load_policy(store, host.id)
        p = saved or Policy()
        self.enabled = QCheckBox(
            self.tr("Release {host} for me when it wastes money").format(host=host.alias)
        )
        self.enabled.setObjectName("autoreleaseEnabled")
        self.enabled.setChecked(saved is not None)
        form = QFormLayout()
        minutes = self.tr(" min", "spin box suffix")
        self.idle = _spin(p.idle_minutes, 24 * 60, minutes, "idleMinutes")
        self.idle_util = _spin(p.idle_util_pct, 100, " %", "idleUtil")
        self.idle_power = _spin(round(p.idle_power_share * 100), 99,
                                self.tr(" % of its power limit"), "idlePower",
                                bottom=1)  # fmt: skip
        self.stall = _spin(p.stall_minutes, 24 * 60, minutes, "stallMinutes")
        self.stall_util = _spin(p.stall_util_pct, 100, " %", "stallUtil")
        self.session = QLineEdit(p.finished_session)
        self.session.setObjectName("finishedSession")
        self.session.setPlaceholderText(self.tr("e.g. train (empty: not watched)"))
        self.grace = _spin(p.runtime_grace_minutes, 7 * 24 * 60, minutes, "graceMinutes")
        self.forgotten = _spin(
            p.forgotten_hours, 24 * 30, self.tr(" h", "spin box suffix"), "forgottenHours"
        )
        self.budget = QCheckBox(self.tr("when a budget that covers it is used up"))
        self.budget.setObjectName("onBudget")
        self.budget.setChecked(p.on_budget)
        self.notice = _spin(p.notice_minutes, 24 * 60, minutes, "noticeMinutes")
        self.action = QComboBox()
        self.action.setObjectName("policyAction")
        self.action.addItem(self.tr("Release (destroy) the instance"), userData="release")
        self.action.addItem(self.tr("Stop it (the disk keeps billing)"), userData="stop")
        self.action.setCurrentIndex(max(self.action.findData(p.action), 0))
        form.addRow(self.tr("Idle: every GPU idle for"), self.idle)
        form.addRow(self.tr("   idle means utilisation under"), self.idle_util)
        form.addRow(self.tr("   and power under"), self.idle_power)
        form.addRow(self.tr("Stalled: for"), self.stall)
        form.addRow(self.tr("   utilisation at least (at idle power)"), self.stall_util)
        form.addRow(self.tr("Finished: when this tmux session ends"), self.session)
        form.addRow(self.tr("Planned end passed by"), self.grace)
        form.addRow(self.tr("Act regardless after, unattended"), self.forgotten)
        form.addRow(self.tr("Budget:"), self.budget)
        form.addRow(self.tr("Countdown before acting"), self.notice)
        form.addRow(self.tr("Then"), self.action)
        note = QLabel(
            self.tr(
                "0 switches a rule off. A rule that holds first shows a countdown with Keep "
                "running, Release now and Snooze; then the backup checklist runs unattended, and "
                "the instance is released only when every item passes and none is stale. "
                "Otherwise it keeps running and you are told what failed."
            )
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
