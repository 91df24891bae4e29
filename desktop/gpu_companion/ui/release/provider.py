"""How the platform's instances are released, in the checklist settings: through its provider
account (vast.ai, RunPod), with "Check the account" reading the host's instance back; or, without
one, the platform's own commands (a release command, a read-only verify command and the words its
output shows) with "Test the command": the release argv as data plus the verify call. Both run off
the GUI thread; nothing is released or stopped here."""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
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

PLACEHOLDER_HINT = str(
    QT_TRANSLATE_NOOP(
        "ProviderCommandBox",
        "Placeholders: {instance_id}, {alias}, {hostname}, {port}, {user}. A release counts once "
        "the verify command's output says the instance is gone.",
    )
)
# the app's word for an instance's state (the provider's own word is shown beside it)
STATE_WORDS = {
    "running": str(QT_TRANSLATE_NOOP("ProviderCommandBox", "running")),
    "starting": str(QT_TRANSLATE_NOOP("ProviderCommandBox", "starting")),
    "stopped": str(QT_TRANSLATE_NOOP("ProviderCommandBox", "stopped")),
    "gone": str(QT_TRANSLATE_NOOP("ProviderCommandBox", "gone")),
    "other": str(QT_TRANSLATE_NOOP("ProviderCommandBox", "other")),
}


def describe_dry_run(result: DryRun) -> str:
    """The dry run in words: what would run, and what the read-only verify call answered."""
    argv = " ".join(result.argv) or QCoreApplication.translate(
        "ProviderCommandBox", "(no release command)"
    )
    lines = [
        QCoreApplication.translate("ProviderCommandBox", "Release would run: {argv}").format(
            argv=argv
        )
    ]
    lines.append(
        QCoreApplication.translate("ProviderCommandBox", "Nothing was released or stopped.")
    )
    if not result.check_argv:
        lines.append(
            QCoreApplication.translate(
                "ProviderCommandBox",
                "No verify command is set: the release could never be confirmed.",
            )
        )
        return "\n".join(lines)
    lines.append(
        QCoreApplication.translate(
            "ProviderCommandBox", "Verify call: {argv} (exit {code}):"
        ).format(argv=" ".join(result.check_argv), code=result.check_code)
    )
    lines.append(
        result.check_output.rstrip()
        or QCoreApplication.translate("ProviderCommandBox", "(no output)")
    )
    return "\n".join(lines)


def describe_reading(account: Account, instance_id: str, reading: Reading) -> str:
    """What the provider said of the host's instance, in words."""
    name = account.provider_name
    if reading.state == "gone":
        return QCoreApplication.translate(
            "ProviderCommandBox", "{provider} has no instance {instance} (it reports it gone)."
        ).format(provider=name, instance=instance_id)
    state = reading.state
    words = QCoreApplication.translate("ProviderCommandBox", STATE_WORDS.get(state, state))
    inst = reading.instance
    if inst is not None and inst.provider_state and inst.provider_state != reading.state:
        words = QCoreApplication.translate(
            "ProviderCommandBox", "{state} ({provider} says {said})"
        ).format(state=words, provider=name, said=inst.provider_state)
    text = QCoreApplication.translate(
        "ProviderCommandBox", "{provider} reports instance {instance}: {state}."
    ).format(provider=name, instance=instance_id, state=words)
    if inst is not None:
        if inst.gpu_model:
            text += " " + QCoreApplication.translate("ProviderCommandBox", "{n}× {gpu}.").format(
                n=max(inst.gpu_count, 1), gpu=inst.gpu_model
            )
        if inst.hourly is not None:
            price = format_money(to_minor(inst.hourly, inst.currency), inst.currency)
            text += " " + QCoreApplication.translate(
                "ProviderCommandBox", "{price}/h while running."
            ).format(price=price)
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
                self.tr(
                    "Released through the {provider} API account ({platform}): the instance is "
                    "read back until the provider reports it gone."
                ).format(provider=self.account.provider_name, platform=self.account.platform_name)
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
                self.tr(
                    "No provider account for this platform: its own commands release it (or, "
                    "with none, you release the instance in the provider's console)."
                )
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
                self.tr("Instance id of {host}: {instance} (Hosts page → Edit host).").format(
                    host=host.alias, instance=host.instance_id
                )
            )
        else:
            self.instance.setText(
                self.tr(
                    "{host} has no instance id yet: add it with Edit host on the Hosts page "
                    "(it is in the provider's console), or sync the provider account."
                ).format(host=host.alias)
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
        self.hint = QLabel(QCoreApplication.translate("ProviderCommandBox", PLACEHOLDER_HINT))
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
                self.tr(
                    "{host} has no instance id: nothing to read back. Add it with Edit host, or "
                    "sync the provider account."
                ).format(host=self.host.alias)
            )
            return
        self._begin(
            self.tr("Asking {provider} about instance {instance} …").format(
                provider=account.provider_name, instance=instance_id
            )
        )

        def work() -> str:
            reading = accounts.provider(account).read(instance_id)
            return describe_reading(account, instance_id, reading)

        self.worker = run_in_thread(
            work, on_result=self.output.setPlainText, on_error=self._error,
            on_finished=self._finished,
        )  # fmt: skip

    def _error(self, exc: Exception) -> None:
        if self.account is not None:
            text = self.tr("The account could not be read: {error}")
        elif isinstance(exc, UserError):
            text = self.tr("The command cannot run: {error}")
        else:
            text = self.tr("The test failed: {error}")
        self.output.setPlainText(text.format(error=exc))

    def _finished(self) -> None:
        self.worker = None
        self.test_btn.setEnabled(True)
