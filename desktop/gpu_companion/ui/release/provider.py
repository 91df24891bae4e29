"""How the platform's instances are released, in the checklist settings: through its provider
account (vast.ai, RunPod), with "Check the account" reading the host's instance back; or, without
one, the platform's own commands (a release command, a read-only verify command and the words its
output shows) with "Test the command": the release argv as data plus the verify call. Both run off
the GUI thread; nothing is released or stopped here."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.money import format_money, to_minor
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.providers.accounts import Account, ProviderAccounts
from gpu_companion.core.providers.custom import CustomCommands, DryRun, dry_run, target_of
from gpu_companion.core.providers.model import Reading
from gpu_companion.ui.common.worker import Worker, run_in_thread

PLACEHOLDER_HINT = (
    "Placeholders: {instance_id}, {alias}, {hostname}, {port}, {user}. A release counts once the "
    "verify command's output says the instance is gone."
)


def describe_dry_run(result: DryRun) -> str:
    """The dry run in words: what would run, and what the read-only verify call answered."""
    lines = ["Release would run: " + (" ".join(result.argv) or "(no release command)")]
    lines.append("Nothing was released or stopped.")
    if not result.check_argv:
        lines.append("No verify command is set: the release could never be confirmed.")
        return "\n".join(lines)
    lines.append(f"Verify call: {' '.join(result.check_argv)} (exit {result.check_code}):")
    lines.append(result.check_output.rstrip() or "(no output)")
    return "\n".join(lines)


def describe_reading(account: Account, instance_id: str, reading: Reading) -> str:
    """What the provider said of the host's instance, in words."""
    name = account.provider_name
    if reading.state == "gone":
        return f"{name} has no instance {instance_id} (it reports it gone)."
    words: str = reading.state
    inst = reading.instance
    if inst is not None and inst.provider_state and inst.provider_state != reading.state:
        words += f" ({name} says {inst.provider_state})"
    text = f"{name} reports instance {instance_id}: {words}."
    if inst is not None:
        if inst.gpu_model:
            text += f" {max(inst.gpu_count, 1)}× {inst.gpu_model}."
        if inst.hourly is not None:
            price = format_money(to_minor(inst.hourly, inst.currency), inst.currency)
            text += f" {price}/h while running."
    return text


class ProviderCommandBox(QWidget):
    """The account's summary and check, or the platform's command fields and their test."""

    def __init__(
        self,
        accounts: ProviderAccounts | None,
        commands: CustomCommands,
        host: Host,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.host, self.accounts, self.stored = host, accounts, commands
        self.worker: Worker | None = None
        self.account = (
            accounts.for_platform(host.platform_id)
            if accounts is not None and host.platform_id is not None
            else None
        )
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.summary = QLabel()
        self.summary.setObjectName("providerSummary")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        self.instance = QLabel()
        self.instance.setObjectName("instanceId")
        self.instance.setTextFormat(Qt.TextFormat.PlainText)
        self.instance.setWordWrap(True)
        self.output = QPlainTextEdit()
        self.output.setObjectName("dryRunOutput")
        self.output.setReadOnly(True)
        self.output.setMaximumHeight(110)
        self.output.hide()
        if self.account is not None:
            self.summary.setText(
                f"Released through the {self.account.provider_name} API account "
                f"({self.account.platform_name}): the instance is read back until the provider "
                "reports it gone."
            )
            self.test_btn = QPushButton(self.tr("Check the account"))
            self.test_btn.setObjectName("checkAccount")
            self.test_btn.clicked.connect(self.check_account)
            row = QHBoxLayout()
            row.setContentsMargins(0, 0, 0, 0)
            row.addWidget(self.summary, 1)
            row.addWidget(self.test_btn)
            lay.addLayout(row)
        else:
            self._command_fields(commands)
            self.summary.setText(
                "No provider account for this platform: its own commands release it (or, with "
                "none, you release the instance in the provider's console)."
            )
            self.test_btn = QPushButton(self.tr("Test the command"))
            self.test_btn.setObjectName("testCommand")
            self.test_btn.clicked.connect(self.test)
            form = QFormLayout()
            form.setContentsMargins(0, 0, 0, 0)
            form.addRow(self.tr("Release command"), self.release)
            form.addRow(self.tr("Verify command (read-only)"), self.verify)
            form.addRow(self.tr("Output once gone"), self.gone_when)
            form.addRow(self.tr("Output while running"), self.running_when)
            lay.addWidget(self.summary)
            lay.addLayout(form)
            lay.addWidget(self.hint)
            row = QHBoxLayout()
            row.setContentsMargins(0, 0, 0, 0)
            row.addStretch(1)
            row.addWidget(self.test_btn)
            lay.addLayout(row)
        lay.addWidget(self.instance)
        lay.addWidget(self.output)
        if host.instance_id.strip():
            self.instance.setText(
                f"Instance id of {host.alias}: {host.instance_id} (Hosts page → Edit host)."
            )
        else:
            self.instance.setText(
                f"{host.alias} has no instance id yet: add it with Edit host on the Hosts page "
                "(it is in the provider's console), or sync the provider account."
            )

    def _command_fields(self, commands: CustomCommands) -> None:
        self.release = QLineEdit(commands.release)
        self.release.setObjectName("releaseCommand")
        self.release.setPlaceholderText(self.tr("e.g. mycloud delete {instance_id} --yes"))
        self.verify = QLineEdit(commands.verify)
        self.verify.setObjectName("verifyCommand")
        self.verify.setPlaceholderText(self.tr("read-only, e.g. mycloud show {instance_id}"))
        self.gone_when = QLineEdit(commands.gone_when)
        self.gone_when.setObjectName("goneWhen")
        self.gone_when.setPlaceholderText(self.tr("e.g. not found"))
        self.running_when = QLineEdit(commands.running_when)
        self.running_when.setObjectName("runningWhen")
        self.running_when.setPlaceholderText(self.tr("e.g. RUNNING"))
        self.hint = QLabel(PLACEHOLDER_HINT)
        self.hint.setTextFormat(Qt.TextFormat.PlainText)
        self.hint.setWordWrap(True)

    def editable(self) -> bool:
        """True when the platform's own commands are edited here (no provider account)."""
        return self.account is None

    def commands(self) -> CustomCommands:
        """The commands as edited; with an account, the stored ones (nothing is edited)."""
        if not self.editable():
            return self.stored
        return CustomCommands(
            self.release.text(),
            self.verify.text(),
            self.gone_when.text(),
            self.running_when.text(),
        )

    def busy(self) -> bool:
        return self.worker is not None

    def _begin(self, text: str) -> None:
        self.output.show()
        self.output.setPlainText(text)
        self.test_btn.setEnabled(False)

    def test(self) -> None:
        """The dry run: never the release itself, only the read-only verify call."""
        if self.busy():
            return
        commands, target = self.commands(), target_of(self.host)
        self._begin(self.tr("Testing …"))

        def work() -> str:
            return describe_dry_run(dry_run(commands.validated(), target))

        self.worker = run_in_thread(
            work, on_result=self.output.setPlainText, on_error=self._error,
            on_finished=self._finished,
        )  # fmt: skip

    def check_account(self) -> None:
        """Read the host's instance back through the account (the API key, from the keyring,
        and the request both off the GUI thread)."""
        account, instance_id = self.account, self.host.instance_id.strip()
        accounts = self.accounts
        if self.busy() or account is None or accounts is None:
            return
        if not instance_id:
            self.output.show()
            self.output.setPlainText(
                f"{self.host.alias} has no instance id: nothing to read back. Add it with Edit "
                "host, or sync the provider account."
            )
            return
        self._begin(f"Asking {account.provider_name} about instance {instance_id} …")

        def work() -> str:
            reading = accounts.provider(account).read(instance_id)
            return describe_reading(account, instance_id, reading)

        self.worker = run_in_thread(
            work, on_result=self.output.setPlainText, on_error=self._error,
            on_finished=self._finished,
        )  # fmt: skip

    def _error(self, exc: Exception) -> None:
        if self.account is not None:
            head = "The account could not be read"
        else:
            head = "The command cannot run" if isinstance(exc, UserError) else "The test failed"
        self.output.setPlainText(f"{head}: {exc}")

    def _finished(self) -> None:
        self.worker = None
        self.test_btn.setEnabled(True)
