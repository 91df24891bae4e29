"""The connection side of the Hosts page: "Test connection" with its round-trip time, the host key
decisions (first contact, changed key) and the per-host ssh options."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Qt
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
from gpu_companion.ui.common.worker import run_in_thread

if TYPE_CHECKING:  # the ssh modules load on the first connection, not with the Hosts page
    from gpu_companion.core.ssh.connection import ConnectionProblem, ConnectionTest
    from gpu_companion.services import Services


def _decision_box(
    parent: QWidget,
    icon: QMessageBox.Icon,
    title: str,
    text: str,
    name: str,
    answer: tuple[str, QMessageBox.ButtonRole, str],
) -> QMessageBox:
    """A plain-text question (it quotes the host) with one answer and Cancel, Cancel the default;
    `HostConnection.ask` returns the answer's object name."""
    box = QMessageBox(icon, title, text, parent=parent)
    box.setObjectName(name)
    box.setTextFormat(Qt.TextFormat.PlainText)
    label, role, answer_name = answer
    box.addButton(label, role).setObjectName(answer_name)
    box.setDefaultButton(box.addButton(QMessageBox.StandardButton.Cancel))
    return box


def unknown_key_box(parent: QWidget, host: Host, problem: ConnectionProblem) -> QMessageBox:
    return _decision_box(
        parent,
        QMessageBox.Icon.Question,
        "New host key",
        f"First connection to {host.alias} ({host.hostname}:{host.port}).\n\n"
        f"Its host key fingerprint is:\n{problem.fingerprint}\n\n"
        "Compare it with the one your provider shows for this instance (console or "
        "boot log). Trust it only if they match.",
        "hostKeyUnknown",
        ("Trust and connect", QMessageBox.ButtonRole.AcceptRole, "trust"),
    )


def changed_key_box(parent: QWidget, host: Host, problem: ConnectionProblem) -> QMessageBox:
    return _decision_box(
        parent,
        QMessageBox.Icon.Warning,
        "Host key changed",
        f"{problem.message}\n\nTrusted before: {problem.known_fingerprint}\n"
        f"Offered now: {problem.fingerprint}\n\n{problem.hint}",
        "hostKeyChanged",
        ("This is a new instance…", QMessageBox.ButtonRole.DestructiveRole, "newInstance"),
    )


def confirm_replace_box(parent: QWidget, host: Host, problem: ConnectionProblem) -> QMessageBox:
    return _decision_box(
        parent,
        QMessageBox.Icon.Warning,
        "Replace the trusted host key?",
        f"Forget the old key of {host.alias} and trust {problem.fingerprint}?\n\n"
        "Only do this if you created, restarted or re-rented this instance just now.",
        "confirmReplace",
        ("Replace the key", QMessageBox.ButtonRole.AcceptRole, "replace"),
    )


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
        """Show a decision box modally; the clicked button's object name, "cancel" for Cancel or
        Escape (tests answer here). Read while the box is alive: its buttons go with it."""
        box.exec()
        clicked = box.clickedButton()
        name = clicked.objectName() if clicked is not None else ""
        box.deleteLater()
        return name or "cancel"

    def test(self, host: Host) -> None:
        if host.is_local:
            self.status.setText("“This computer” needs no SSH connection.")
            return
        if not self._ensure_passphrase(host):
            return
        self._running += 1
        self.status.setText(f"Connecting to {host.alias}…")
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
            "Passphrase",
            f"Passphrase of the {key.platform} key",
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
        elif problem is not None and problem.kind == "host_key_unknown":
            if self.ask(unknown_key_box(self.page, host, problem)) == "trust":
                self._then_retest(host, self.ctx.sessions.trust_host_key, problem)
        elif problem is not None and problem.kind == "host_key_changed":
            if self.ask(changed_key_box(self.page, host, problem)) == "newInstance":
                if self.ask(confirm_replace_box(self.page, host, problem)) == "replace":
                    self._then_retest(host, self.ctx.sessions.replace_host_key, problem)
        else:
            if problem is not None and problem.kind == "passphrase":
                platform = self.ctx.vault.platform_of(host)
                self.ctx.key_passphrases.pop(platform or "", None)
            # the message can quote the host ('echo ok' printed ...): escaped, never markup
            from html import escape  # not before the first paint

            shown = escape(result.message).replace("\n", "<br>")
            QMessageBox.warning(self.page, f"Connection to {host.alias}", f"<p>{shown}</p>")

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
        self.setWindowTitle(f"SSH options for {host.alias}")
        assert host.id is not None
        from gpu_companion.core.ssh.config_writer import FORWARD_PORTS
        from gpu_companion.core.ssh.managed import get_options

        current = get_options(ctx.store, host.id)
        form = QFormLayout()
        self.proxy_jump = QLineEdit(current.proxy_jump)
        self.proxy_jump.setObjectName("proxy_jump")
        self.proxy_jump.setPlaceholderText("optional: user@bastion.example:22")
        form.addRow("Jump host (ProxyJump)", self.proxy_jump)
        self.forwards: dict[int, QCheckBox] = {}
        for port, what in FORWARD_PORTS.items():
            box = QCheckBox(f"{what} (local port {port})")
            box.setChecked(port in current.forwards)
            self.forwards[port] = box
            form.addRow("Forward" if port == next(iter(FORWARD_PORTS)) else "", box)
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
        self.forget = QPushButton("Forget trusted key…")
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
            none = "None yet: the next connection shows the host's fingerprint to compare."
        except OSError as exc:
            found, none = [], f"The app's known_hosts could not be read: {exc}"
        self.label.setText("\n".join(found) or none)
        self.forget.setEnabled(bool(found))

    def forget_key(self) -> None:
        answer = QMessageBox.question(
            self,
            "Forget the trusted host key?",
            f"Forget the host key trusted for {self.host.hostname}:{self.host.port}? The next "
            "connection shows the new key's fingerprint; trust it only if it matches the one "
            "your provider shows for this instance.",
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.ctx.sessions.forget_host_keys(self.host)
            self.refresh()
