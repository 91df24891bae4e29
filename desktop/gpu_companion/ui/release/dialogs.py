"""Dialogs of the release page: the checklist settings of one host (with how its platform
releases instances), and "release anyway"."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.providers.accounts import ProviderAccounts
from gpu_companion.core.release import ChecklistConfig, CustomCommand
from gpu_companion.core.release.checklist import BUILTINS
from gpu_companion.core.release.record import ChecklistSettings
from gpu_companion.ui.common.widgets import scrolling
from gpu_companion.ui.release.provider import ProviderCommandBox


def _lines(edit: QPlainTextEdit) -> tuple[str, ...]:
    return tuple(ln.strip() for ln in edit.toPlainText().splitlines() if ln.strip())


def _multiline(values: tuple[str, ...], placeholder: str) -> QPlainTextEdit:
    edit = QPlainTextEdit("\n".join(values))
    edit.setPlaceholderText(placeholder)
    edit.setMaximumHeight(64)
    return edit


class ChecklistSettingsDialog(QDialog):
    """One form for everything the checklist of a host checks; nothing is saved until valid."""

    def __init__(
        self,
        settings: ChecklistSettings,
        host: Host,
        parent: QWidget | None = None,
        accounts: ProviderAccounts | None = None,
    ):
        super().__init__(parent)
        self.setWindowTitle(self.tr("Release checklist of {host}").format(host=host.alias))
        self.setMinimumWidth(680)  # the release commands' fields and their wrapped hints
        self.settings, self.host = settings, host
        cfg = self.config = settings.config(host.alias)
        form = QFormLayout()
        self.enabled: dict[str, QCheckBox] = {}
        for kind in BUILTINS:
            box = QCheckBox(kind.title)
            box.setChecked(kind.key not in cfg.disabled)
            self.enabled[kind.key] = box
            form.addRow(self.tr("Built-in items") if len(self.enabled) == 1 else "", box)
        self.project = QLineEdit(cfg.project)
        form.addRow(self.tr("Project"), self.project)
        self.precision = QLineEdit(cfg.precision)
        form.addRow(self.tr("Precision"), self.precision)
        self.synced = _multiline(
            cfg.synced_dirs, self.tr("one remote directory a line, e.g. ~/runs/ckpt")
        )
        form.addRow(self.tr("Checkpoint dirs"), self.synced)
        self.archive = _multiline(cfg.archive_paths, self.tr("weights, logs, config, scripts"))
        form.addRow(self.tr("Archive paths"), self.archive)
        self.roots = _multiline(cfg.scan_roots, "~")
        form.addRow(self.tr("Scan for leftovers in"), self.roots)
        self.threshold = QSpinBox()
        self.threshold.setRange(1, 10_000_000)
        self.threshold.setSuffix(" MiB")
        self.threshold.setValue(cfg.size_threshold_mib)
        form.addRow(self.tr("Size threshold"), self.threshold)
        # the default label is stored in English (confirmations are recorded under it) and
        # shown in the app's language; typed back unchanged, it is stored in English again
        self._labels = {_(label): label for label in ChecklistConfig().manual}
        defaults = set(self._labels.values())
        shown = tuple(_(label) if label in defaults else label for label in cfg.manual)
        self.manual = _multiline(shown, self.tr("e.g. Data disk snapshot taken"))
        form.addRow(self.tr("Confirmations"), self.manual)
        self.custom = _multiline(
            tuple(f"{c.label}: {c.command}" for c in cfg.custom),
            self.tr("label: command exiting 0"),
        )
        form.addRow(self.tr("Custom checks"), self.custom)
        self.ignored = _multiline(
            cfg.ignored_processes, self.tr("command-line fragments to ignore")
        )
        form.addRow(self.tr("Ignore processes"), self.ignored)
        self.provider = ProviderCommandBox(accounts, settings.commands(host.platform_id), host)
        self.provider.setEnabled(host.platform_id is not None)
        form.addRow(self.tr("Release at the provider"), self.provider)
        self.error = QLabel()
        self.error.setObjectName("settingsError")
        self.error.setTextFormat(Qt.TextFormat.PlainText)
        self.error.setStyleSheet("color: #c53030;")
        self.error.setWordWrap(True)
        self.error.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(scrolling(form), 1)  # 16 rows: taller than a 700 px window
        lay.addWidget(self.error)
        lay.addWidget(buttons)

    def edited(self) -> ChecklistConfig:
        custom = []
        for line in _lines(self.custom):
            label, sep, command = line.partition(":")
            if not sep:
                raise ValidationError(
                    "custom",
                    self.tr("Write custom checks as 'label: command': {line}").format(
                        line=repr(line)
                    ),
                )
            custom.append(CustomCommand(label.strip(), command.strip()))
        return replace(
            self.config,
            project=self.project.text().strip(),
            precision=self.precision.text().strip(),
            synced_dirs=_lines(self.synced),
            archive_paths=_lines(self.archive),
            scan_roots=_lines(self.roots) or ("~",),
            size_threshold_mib=self.threshold.value(),
            manual=tuple(self._labels.get(line, line) for line in _lines(self.manual)),
            custom=tuple(custom),
            ignored_processes=_lines(self.ignored),
            disabled=tuple(k for k, box in self.enabled.items() if not box.isChecked()),
        )

    def save(self) -> None:
        platform_id = self.host.platform_id
        commands = self.provider.editable() and platform_id is not None
        try:
            edited = self.edited()
            if commands:  # checked before anything is saved: a refused template loses nothing
                self.provider.commands().validated()
            self.config = self.settings.save_config(self.host.alias, edited)
            if commands and platform_id is not None:
                self.settings.save_commands(platform_id, self.provider.commands())
        except UserError as exc:
            self.error.setText(str(exc))
            self.error.show()
            return
        self.accept()


class OverrideDialog(QDialog):
    """Release anyway: allowed only once the alias is typed exactly and a reason is given."""

    def __init__(self, host: Host, failing: tuple[str, ...], parent: QWidget | None = None):
        super().__init__(parent)
        self.host = host
        self.setWindowTitle(self.tr("Release {host} anyway").format(host=host.alias))
        lay = QVBoxLayout(self)
        text = QLabel(
            self.tr(
                "These items have not passed; releasing now may destroy work that exists nowhere "
                "else:"
            )
            + "\n• "
            + "\n• ".join(failing or (self.tr("(none)"),))
        )
        text.setWordWrap(True)
        lay.addWidget(text)
        form = QFormLayout()
        self.alias = QLineEdit()
        self.alias.setObjectName("typedAlias")
        self.alias.setPlaceholderText(host.alias)
        form.addRow(self.tr("Type {host} to confirm").format(host=host.alias), self.alias)
        self.reason = QPlainTextEdit()
        self.reason.setObjectName("reason")
        self.reason.setPlaceholderText(self.tr("Why is it safe to release now?"))
        self.reason.setMaximumHeight(70)
        form.addRow(self.tr("Reason"), self.reason)
        lay.addLayout(form)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setText(self.tr("Release anyway"))
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self.alias.textChanged.connect(self._update)
        self.reason.textChanged.connect(self._update)
        self._update()

    def _update(self) -> None:
        self.ok.setEnabled(
            self.alias.text().strip() == self.host.alias and bool(self.reason.toPlainText().strip())
        )

    def accept(self) -> None:
        if self.ok.isEnabled():
            super().accept()
