"""The platform's release command with provider presets (vast.ai, RunPod, custom), the host's
instance id it addresses, and "Test the command": the argv as data plus the provider's read-only
call, run off the GUI thread. Nothing is released or stopped here."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.release.providers import (
    PRESETS,
    DryRun,
    command_argv,
    dry_run,
    preset_for,
    run_check,
    target_of,
)
from gpu_companion.ui.common.worker import Worker, run_in_thread

CUSTOM = ""


def describe_dry_run(result: DryRun, stop_argv: list[str] | None) -> str:
    """The dry run in words: what would run, and what the read-only call answered."""
    lines = ["Release would run: " + " ".join(result.argv)]
    if stop_argv:
        lines.append("Stop would run: " + " ".join(stop_argv))
    lines.append("Nothing was released or stopped.")
    if not result.check_argv:
        lines.append("No read-only call is known for this command: check the argv above.")
        return "\n".join(lines)
    lines.append(f"Read-only check: {' '.join(result.check_argv)} (exit {result.check_code}):")
    lines.append(result.check_output.rstrip() or "(no output)")
    return "\n".join(lines)


class ProviderCommandBox(QWidget):
    """`command` is the template saved per platform; the preset only fills it in."""

    def __init__(self, template: str, host: Host, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.host = host
        self.worker: Worker | None = None
        self.preset = QComboBox()
        self.preset.setObjectName("providerPreset")
        for key, preset in PRESETS.items():
            self.preset.addItem(preset.name, key)
        self.preset.addItem("Custom", CUSTOM)
        self.command = QLineEdit(template)
        self.command.setObjectName("releaseCommand")
        self.command.setPlaceholderText("e.g. vastai destroy instance {instance_id}")
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.instance = QLabel()
        self.instance.setObjectName("instanceId")
        self.instance.setWordWrap(True)
        self.test_btn = QPushButton("Test the command")
        self.test_btn.setObjectName("testCommand")
        self.test_btn.clicked.connect(self.test)
        self.output = QPlainTextEdit()
        self.output.setObjectName("dryRunOutput")
        self.output.setReadOnly(True)
        self.output.setMaximumHeight(110)
        self.output.hide()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.preset)
        row.addWidget(self.command, 1)
        row.addWidget(self.test_btn)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(row)
        lay.addWidget(self.hint)
        lay.addWidget(self.instance)
        lay.addWidget(self.output)
        if host.instance_id.strip():
            self.instance.setText(
                f"Instance id of {host.alias}: {host.instance_id} (Hosts page → Edit host)."
            )
        else:
            self.instance.setText(
                f"{host.alias} has no instance id yet: add it with Edit host on the Hosts page "
                "(it is in the provider's console)."
            )
        self._match_preset()
        self.preset.activated.connect(self._preset_chosen)
        self.command.textEdited.connect(lambda _text: self._match_preset())

    def preset_key(self) -> str:
        return str(self.preset.currentData())

    def _match_preset(self) -> None:
        preset = preset_for(self.command.text())
        key = next((k for k, p in PRESETS.items() if p is preset), CUSTOM)
        self.preset.setCurrentIndex(self.preset.findData(key))
        self._show_hint()

    def _preset_chosen(self) -> None:
        key = self.preset_key()
        if key != CUSTOM:
            self.command.setText(PRESETS[key].release)
        self._show_hint()

    def _show_hint(self) -> None:
        key = self.preset_key()
        self.hint.setText(
            f"Uses the provider's own CLI and its own login ({PRESETS[key].install_hint}); no "
            "credential is kept by this app."
            if key != CUSTOM
            else "Placeholders: {instance_id}, {alias}, {hostname}, {port}, {user}."
        )

    def busy(self) -> bool:
        return self.worker is not None

    def test(self) -> None:
        """The dry run: never the release itself, only the preset's read-only call."""
        if self.busy():
            return
        template = self.command.text()
        preset = preset_for(template)
        target = target_of(self.host)
        self.output.show()
        self.output.setPlainText("Testing …")
        self.test_btn.setEnabled(False)

        def work() -> str:
            result = dry_run(template, target, run_check, preset.show if preset else "")
            stop = command_argv(preset.stop, target) if preset else None
            return describe_dry_run(result, stop)

        self.worker = run_in_thread(
            work,
            on_result=self.output.setPlainText,
            on_error=self._error,
            on_finished=self._finished,
        )

    def _error(self, exc: Exception) -> None:
        head = "The command cannot run" if isinstance(exc, UserError) else "The test failed"
        self.output.setPlainText(f"{head}: {exc}")

    def _finished(self) -> None:
        self.worker = None
        self.test_btn.setEnabled(True)
