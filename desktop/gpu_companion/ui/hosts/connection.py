"""The connection side of the Hosts page: "Test connection" with its round-trip time, the host key
decisions (first contact, changed key) and the per-host ssh options."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QObject, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.hosts.registry import Host
from gpu_companion.ui.common.host_key import HOST_KEY_KINDS, ask_box, decide_host_key
from gpu_companion.ui.common.worker import run_in_thread

if TYPE_CHECKING:  # the ssh modules load on the first connection, not with the Hosts page
    from gpu_companion.core.ssh.connection import ConnectionProblem, ConnectionTest
    from gpu_companion.services import Services

# the words of core.ssh.config_writer.FORWARD_PORTS (the others are names), translated where shown
FORWARD_WORDS = (QT_TRANSLATE_NOOP("SshOptionsDialog", "inference server"),)


class HostConnection(QObject):
    """Owned by the Hosts page; `status` shows the last result."""

    def __init__(self, ctx: Services, page: QWidget, status: QLabel) -> None:
        super().__init__(page)
        self.ctx = ctx
        self.page = page
        self.status = status
        self._running = 0

    @property
    def busy(self) -> bool:
        return self._running > 0

    def ask(self, box: QMessageBox) -> str:
        """The clicked answer's object name (tests answer here)."""
        return ask_box(box)

    def test(self, host: Host) -> None:
        if host.is_local:
            self.status.setText(self.tr("“This computer” needs no SSH connection."))
            return
        if not self._ensure_passphrase(host):
            return
        self._running += 1
        self.status.setText(self.tr("Connecting to {alias}…").format(alias=host.alias))
        run_in_thread(
            self.ctx.sessions.test_connection,
            host,
            on_result=lambda r: self._tested(host, r),
            on_error=self._error,
            on_finished=self._done,
        )

    def _done(self) -> None:
        self._running -= 1

    def _error(self, exc: Exception) -> None:
        self.status.setText(str(exc))
        if not isinstance(exc, UserError):
            raise exc

    def _ensure_passphrase(self, host: Host) -> bool:
        platform = self.ctx.vault.platform_of(host)
        key = self.ctx.vault.key(platform) if platform else None
        if key is None or not key.encrypted or self.ctx.key_passphrases.get(key.platform):
            return True
        text, ok = QInputDialog.getText(
            self.page,
            self.tr("Passphrase"),
            self.tr("Passphrase of the {platform} key").format(platform=key.platform),
            QLineEdit.EchoMode.Password,
        )
        if ok and text:
            self.ctx.key_passphrases[key.platform] = text
        return bool(ok and text)

    def _tested(self, host: Host, result: ConnectionTest) -> None:
        self.status.setText(result.message)
        problem = result.problem
        if result.ok:
            self.ctx.notifier.info(result.message, source="hosts")
        elif problem is not None and problem.kind in HOST_KEY_KINDS:
            answer = decide_host_key(self.page, host, problem, self.ask)
            if answer == "trust":
                self._then_retest(host, self.ctx.sessions.trust_host_key, problem)
            elif answer == "replace":
                self._then_retest(host, self.ctx.sessions.replace_host_key, problem)
        else:
            if problem is not None and problem.kind == "passphrase":
                platform = self.ctx.vault.platform_of(host)
                self.ctx.key_passphrases.pop(platform or "", None)
            # the message can quote the host ('echo ok' printed ...): escaped, never markup
            from html import escape  # not before the first paint

            shown = f"<p>{escape(result.message)}</p>".replace("\n", "<br>")  # markup, no words
            title = self.tr("Connection to {alias}").format(alias=host.alias)
            QMessageBox.warning(self.page, title, shown)

    def _then_retest(
        self, host: Host, action: Callable[..., object], problem: ConnectionProblem
    ) -> None:
        self._running += 1
        run_in_thread(
            action,
            host,
            problem.key,  # type: ignore[arg-type]
            on_result=lambda _r: self.test(host),
            on_error=self._error,
            on_finished=self._done,
        )


class SshOptionsDialog(QDialog):
    """Jump host and forwarded ports for one host's block in the generated ssh config."""

    def __init__(self, ctx: Services, host: Host, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx, self.host = ctx, host
        self.setWindowTitle(self.tr("SSH options for {alias}").format(alias=host.alias))
        assert host.id is not None
        from gpu_companion.core.ssh.config_writer import FORWARD_PORTS
        from gpu_companion.core.ssh.managed import get_options

        current = get_options(ctx.store, host.id)
        form = QFormLayout()
        self.proxy_jump = QLineEdit(current.proxy_jump)
        self.proxy_jump.setObjectName("proxy_jump")
        self.proxy_jump.setPlaceholderText(self.tr("optional: user@bastion.example:22"))
        form.addRow(self.tr("Jump host (ProxyJump)"), self.proxy_jump)
        self.forwards: dict[int, QCheckBox] = {}
        for port, what in FORWARD_PORTS.items():
            box = QCheckBox(
                self.tr("{what} (local port {port})").format(
                    what=QCoreApplication.translate("SshOptionsDialog", what), port=port
                )
            )
            box.setChecked(port in current.forwards)
            self.forwards[port] = box
            form.addRow(self.tr("Forward") if port == next(iter(FORWARD_PORTS)) else "", box)
        self.error = QLabel()
        self.error.setStyleSheet("color: #c53030;")
        self.error.setWordWrap(True)
        self.error.hide()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        self.buttons = buttons
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.error)
        lay.addWidget(buttons)

    def save(self) -> None:
        assert self.host.id is not None
        from gpu_companion.core.ssh.managed import SshOptions, set_options

        options = SshOptions(
            self.proxy_jump.text(), tuple(p for p, b in self.forwards.items() if b.isChecked())
        )
        try:
            set_options(self.ctx.store, self.host.id, options)
        except ValidationError as exc:
            self.error.setText(exc.message)
            self.error.show()
            self.proxy_jump.setStyleSheet("border: 1px solid #c53030;")
            return
        self.accept()


class TrustedKeyRow(QWidget):
    """Edit host's row: the host key trusted for the saved address, and a way to forget it (a new
    instance behind a recycled address), after which the next connection asks as on first
    contact."""

    def __init__(self, ctx: Services, host: Host, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx, self.host = ctx, host
        self.label = QLabel()
        self.label.setObjectName("trustedHostKey")
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.forget = QPushButton(self.tr("Forget trusted key…"))
        self.forget.setObjectName("forgetHostKey")
        self.forget.clicked.connect(self.forget_key)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.label)
        lay.addWidget(self.forget)
        self.refresh()

    def refresh(self) -> None:
        try:
            found = self.ctx.sessions.trusted_fingerprints(self.host)
            none = self.tr("None yet: the next connection shows the host's fingerprint to compare.")
        except OSError as exc:
            found = []
            none = self.tr("The app's known_hosts could not be read: {error}").format(error=exc)
        self.label.setText("\n".join(found) or none)
        self.forget.setEnabled(bool(found))

    def forget_key(self) -> None:
        answer = QMessageBox.question(
            self,
            self.tr("Forget the trusted host key?"),
            self.tr(
                "Forget the host key trusted for {hostname}:{port}? The next connection shows "
                "the new key's fingerprint; trust it only if it matches the one your provider "
                "shows for this instance."
            ).format(hostname=self.host.hostname, port=self.host.port),
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.ctx.sessions.forget_host_keys(self.host)
            self.refresh()
