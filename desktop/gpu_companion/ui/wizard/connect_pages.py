"""The connecting half of the wizard: create the instance (checklist and this platform's key), enter
or paste its connection details, and the first connection with host-key confirmation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.core.ssh.command import parse_ssh_command
from gpu_companion.ui.common.host_key import HOST_KEY_KINDS, ask_box, decide_host_key
from gpu_companion.ui.common.worker import run_in_thread
from gpu_companion.ui.wizard.plan_pages import WizardPage
from gpu_companion.ui.wizard.services import not_yet

if TYPE_CHECKING:
    from gpu_companion.core.ssh.connection import ConnectionProblem

EXAMPLE_SSH_COMMAND = "ssh -p 41234 root@1.2.3.4"  # a command: the same in every language

CHECKLIST = (  # shown through QCoreApplication.translate("CreateInstancePage", text)
    (
        "image",
        str(
            QT_TRANSLATE_NOOP(
                "CreateInstancePage",
                "A pre-built CUDA + PyTorch image (e.g. “PyTorch 2.x, CUDA 12.x”), not a bare OS",
            )
        ),
    ),
    (
        "key",
        str(
            QT_TRANSLATE_NOOP(
                "CreateInstancePage",
                "This platform's SSH public key (below) pasted into its console — no password "
                "login",
            )
        ),
    ),
    (
        "disks",
        str(
            QT_TRANSLATE_NOOP(
                "CreateInstancePage",
                "A separate data disk or volume for datasets and checkpoints, apart from the "
                "system disk",
            )
        ),
    ),
    (
        "ports",
        str(
            QT_TRANSLATE_NOOP(
                "CreateInstancePage",
                "No open ports beyond SSH: reach Jupyter or TensorBoard through an SSH tunnel",
            )
        ),
    ),
)


class CreateInstancePage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle(self.tr("Create the instance on the platform"))
        self.setSubTitle(
            self.tr(
                "In the provider's console, create an on-demand instance with the card "
                "you chose, and tick each point as you set it."
            )
        )
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.platform = QComboBox()
        self.platform.setObjectName("platform")
        self.platform.setEditable(True)
        typed = self.platform.lineEdit()  # editable: it has one
        if typed is not None:
            typed.setPlaceholderText(self.tr("e.g. vast.ai, RunPod, AutoDL"))
        self.platform.currentTextChanged.connect(lambda _t: self.completeChanged.emit())
        form.addRow(self.tr("Platform"), self.platform)
        lay.addLayout(form)
        self.checks: dict[str, QCheckBox] = {}
        for key, text in CHECKLIST:
            box = QCheckBox(QCoreApplication.translate("CreateInstancePage", text))
            box.setObjectName(f"check_{key}")
            box.toggled.connect(lambda _on: self.completeChanged.emit())
            self.checks[key] = box
            lay.addWidget(box)
        row = QHBoxLayout()
        self.generate = QPushButton(self.tr("Generate this platform's key"))
        self.generate.setObjectName("generateKey")
        self.generate.clicked.connect(self.generate_key)
        self.copy = QPushButton(self.tr("Copy public key"))
        self.copy.setObjectName("copyKey")
        self.copy.setEnabled(False)
        self.copy.clicked.connect(self.copy_key)
        row.addWidget(self.generate)
        row.addWidget(self.copy)
        row.addStretch(1)
        lay.addLayout(row)
        self.public_key = QPlainTextEdit()
        self.public_key.setObjectName("publicKey")
        self.public_key.setReadOnly(True)
        self.public_key.setMaximumHeight(60)
        self.key_status = self.note(name="keyStatus")
        self.key_text = ""  # the key's status before "Copied." was added
        lay.addWidget(self.public_key)
        lay.addWidget(self.key_status)
        lay.addStretch(1)

    def initializePage(self) -> None:  # noqa: N802
        if self.platform.count() == 0:
            for p in self.wiz().ctx.registry.platforms():
                self.platform.addItem(p.name, p.id)
            self.platform.setCurrentIndex(-1 if self.platform.count() != 1 else 0)
        if self.wiz().services.keys is None:
            self.generate.setEnabled(False)
            self.key_status.setText(not_yet("keys"))

    def generate_key(self) -> None:
        keys = self.wiz().services.keys
        name = self.platform.currentText().strip()
        if keys is None:
            return
        if not name:
            self.key_status.setText(self.tr("Name the platform first: the key is made for it."))
            return
        self.generate.setEnabled(False)
        self.key_status.setText(self.tr("Generating the key for {name}…").format(name=name))
        run_in_thread(
            keys.generate,
            name,
            on_result=lambda stored: self._generated(name, stored),
            on_error=self._key_failed,
        )

    def _generated(self, name: str, stored: Any) -> None:
        self.wiz().state.key = stored
        self.generate.setEnabled(True)
        self.public_key.setPlainText(stored.public_key)
        self.key_text = self.tr(
            "Key for {name}: {fingerprint}. The private key stays in the OS keyring."
        ).format(name=name, fingerprint=stored.fingerprint)
        self.key_status.setText(self.key_text)
        self.copy.setEnabled(True)

    def _key_failed(self, exc: Exception) -> None:
        self.generate.setEnabled(True)
        hint = getattr(exc, "hint", "")
        text = self.tr("No key was made: {error}").format(error=exc)
        self.key_status.setText(text + (f" {hint}" if hint else ""))

    def copy_key(self) -> None:
        QGuiApplication.clipboard().setText(self.public_key.toPlainText())
        self.key_status.setText(self.tr("{status} Copied.").format(status=self.key_text))

    def isComplete(self) -> bool:  # noqa: N802
        return bool(self.platform.currentText().strip()) and all(
            b.isChecked() for b in self.checks.values()
        )

    def blocked_reason(self) -> str:
        if not self.platform.currentText().strip():
            return self.tr("name the platform you rent from.")
        left = sum(not b.isChecked() for b in self.checks.values())
        return self.tr("tick each point of the checklist once it is done ({left} left).").format(
            left=left
        )

    def validatePage(self) -> bool:  # noqa: N802
        """Use the platform of that name, or save a new one."""
        registry, name = self.wiz().ctx.registry, self.platform.currentText().strip()
        found = next((p for p in registry.platforms() if p.name.lower() == name.lower()), None)
        try:
            self.wiz().state.platform = found or registry.save_platform(Platform(name=name))
        except UserError as exc:
            self.key_status.setText(str(exc))
            return False
        return True


class PortEdit(QLineEdit):
    """A port typed as text: 70000 stays 70000 and is refused with a message, where a spin box
    would silently drop the last digit."""

    def __init__(self) -> None:
        super().__init__("22")
        self.setMaxLength(12)

    def problem(self) -> str:
        text = self.text().strip()
        if not text:
            return self.tr("Enter the SSH port (22 unless the console shows another).")
        if not text.isdigit() or not 1 <= int(text) <= 65535:
            return self.tr("Port {port} is not a port number: ports go from 1 to 65535.").format(
                port=repr(text)
            )
        return ""

    def value(self) -> int:
        return 0 if self.problem() else int(self.text().strip())

    def setValue(self, port: int) -> None:  # noqa: N802 - the spin box's name
        self.setText(str(port))


class ConnectionPage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle(self.tr("Connection details"))
        self.setSubTitle(self.tr("Paste the ssh command the console shows, or fill the fields."))
        self.pasted_forwards: tuple[str, ...] = ()  # its -L forwards, made tunnels on Next
        lay = QVBoxLayout(self)
        self.paste = QLineEdit()
        self.paste.setObjectName("sshCommand")
        self.paste.setPlaceholderText(EXAMPLE_SSH_COMMAND)
        self.paste.textChanged.connect(self.read_command)
        self.paste_note = self.note(name="pasteNote")
        form = QFormLayout()
        self.hostname = QLineEdit()
        self.hostname.setObjectName("hostname")
        self.port = PortEdit()
        self.port.setObjectName("port")
        self.port.textChanged.connect(self._port_changed)
        self.user = QLineEdit("root")
        self.user.setObjectName("user")
        self.alias = QLineEdit()
        self.alias.setObjectName("alias")
        self.alias.setPlaceholderText(self.tr("short name for `ssh ALIAS`, e.g. gpu1"))
        self.gpu_count = QSpinBox()
        self.gpu_count.setObjectName("gpuCount")
        self.gpu_count.setRange(1, 64)
        form.addRow(self.tr("Host name or IP"), self.hostname)
        form.addRow(self.tr("Port"), self.port)
        form.addRow(self.tr("User"), self.user)
        form.addRow(self.tr("Alias"), self.alias)
        form.addRow(self.tr("GPUs rented"), self.gpu_count)
        self.error = self.note(name="connectionError")
        self.error.setStyleSheet("color: #c53030;")
        lay.addWidget(self.paste)
        lay.addWidget(self.paste_note)
        lay.addLayout(form)
        lay.addWidget(self.error)
        lay.addStretch(1)

    def _port_changed(self) -> None:
        self.error.setText(self.port.problem())
        self.completeChanged.emit()

    def isComplete(self) -> bool:  # noqa: N802
        return not self.port.problem()

    def blocked_reason(self) -> str:
        return self.port.problem()

    def initializePage(self) -> None:  # noqa: N802
        if not self.alias.text():
            taken = {h.alias for h in self.wiz().ctx.registry.hosts()}
            self.alias.setText(next(f"gpu{i}" for i in range(1, 1000) if f"gpu{i}" not in taken))

    def read_command(self, text: str) -> None:
        self.pasted_forwards = ()
        if not text.strip():
            self.paste_note.clear()
            return
        try:
            target = parse_ssh_command(text)
        except ValidationError as exc:
            self.paste_note.setText(
                self.tr("Not understood yet: {error}").format(error=exc.message)
            )
            return
        self.pasted_forwards = target.forwards
        self.hostname.setText(target.hostname)
        self.port.setValue(target.port)
        self.user.setText(target.user)
        read = self.tr("Read: {user}@{host}, port {port}.").format(
            user=target.user, host=target.hostname, port=target.port
        )
        # each note a sentence of its own; the leading space is the translation's to keep or drop
        notes = "".join(self.tr(" Note: {note}.").format(note=n) for n in target.notes)
        self.paste_note.setText(read + notes)

    def validatePage(self) -> bool:  # noqa: N802
        state = self.wiz().state
        previous = state.host
        host = Host(
            alias=self.alias.text(),
            hostname=self.hostname.text(),
            port=self.port.value(),
            user=self.user.text(),
            platform_id=state.platform.id if state.platform else None,
            gpu_model=state.card.name if state.card else "",
            gpu_count=self.gpu_count.value(),
            id=previous.id if previous else None,
        )
        if self.port.problem():
            self.error.setText(self.port.problem())
            self.port.setFocus()
            return False
        try:
            state.host = self.wiz().ctx.registry.save_host(host)
        except ValidationError as exc:
            self.error.setText(exc.message)
            field = {"hostname": self.hostname, "user": self.user, "alias": self.alias}.get(
                exc.field
            )
            if field is not None:
                field.setFocus()
            return False
        self._save_pasted_tunnels(state.host)
        if previous is None or (previous.hostname, previous.port) != (host.hostname, host.port):
            state.connected = False
        self.error.clear()
        return True

    def _save_pasted_tunnels(self, host: Host) -> None:
        """The pasted command's `-L` forwards become this host's tunnels (Hosts page)."""
        from gpu_companion.core.access.specs import TunnelBook, specs_from_forwards

        specs, _notes = specs_from_forwards(self.pasted_forwards)
        if host.id is not None:
            book = TunnelBook(self.wiz().ctx.store)
            for spec in specs:
                book.save(host.id, spec)


class FirstConnectionPage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle(self.tr("First connection"))
        self.setSubTitle(
            self.tr(
                "The host's key is shown once, on first contact: compare its "
                "fingerprint with the provider's console before you trust it."
            )
        )
        lay = QVBoxLayout(self)
        self.status = self.note(name="connectStatus")
        row = QHBoxLayout()
        self.connect_button = QPushButton(self.tr("Connect"))
        self.connect_button.setObjectName("connect")
        self.connect_button.clicked.connect(lambda: self.connect_host())
        self.trust_button = QPushButton(self.tr("Trust this host key"))
        self.trust_button.setObjectName("trustKey")
        self.trust_button.hide()
        self.trust_button.clicked.connect(self.trust)
        row.addWidget(self.connect_button)
        row.addWidget(self.trust_button)
        row.addStretch(1)
        lay.addWidget(self.status)
        lay.addLayout(row)
        lay.addStretch(1)
        self.pending_key: Any = None
        self.pending_problem: ConnectionProblem | None = None
        self.pending_is_change = False
        self.connecting = False

    def isComplete(self) -> bool:  # noqa: N802
        """The self-check needs a trusted, working connection: no Next before it."""
        return self.wiz().services.sessions is None or self.wiz().state.connected

    def blocked_reason(self) -> str:
        if self.connecting:
            return self.tr("connecting to the host…")
        if self.pending_key is not None:
            return self.tr(
                "the host key is not trusted yet: compare its fingerprint with the provider's "
                "console, then press the trust button."
            )
        return self.tr("connect to the host first (press Connect).")

    def initializePage(self) -> None:  # noqa: N802
        state = self.wiz().state
        if self.wiz().services.sessions is None:
            self.connect_button.setEnabled(False)
            self.status.setText(not_yet("sessions"))
        elif state.connected:
            self.status.setText(self.tr("Connected: the host key is trusted."))
        else:
            self.connect_host()

    def connect_host(self, trust_key: Any = None) -> None:
        sessions, host = self.wiz().services.sessions, self.wiz().state.host
        if sessions is None or host is None:
            return
        self.connect_button.setEnabled(False)
        self.trust_button.hide()
        self.connecting = True
        self.completeChanged.emit()
        self.status.setText(
            self.tr("Connecting to {user}@{host}:{port}…").format(
                user=host.user, host=host.hostname, port=host.port
            )
        )
        run_in_thread(
            _connect_and_close,
            sessions,
            host,
            trust_key,
            trust_key is not None and self.pending_is_change,
            on_result=self._connected,
            on_error=self._problem,
        )

    def _connected(self, _result: object) -> None:
        self.wiz().state.connected = True
        self.connecting = False
        self.connect_button.setEnabled(True)
        self.status.setText(self.tr("Connected: the host key is trusted and the login works."))
        self.completeChanged.emit()

    def _problem(self, exc: Exception) -> None:
        self.connect_button.setEnabled(True)
        self.connecting = False
        kind = getattr(exc, "kind", "")
        if kind in HOST_KEY_KINDS:
            self.pending_problem = exc  # type: ignore[assignment]  # a ConnectionProblem
            self.pending_key = getattr(exc, "key", None)
            self.pending_is_change = kind == "host_key_changed"
            fingerprint = getattr(exc, "fingerprint", "?")
            if self.pending_is_change:
                text = self.tr("{error}\nTrusted before: {known}\nOffered now: {offered}\n{hint}")
                self.status.setText(
                    text.format(
                        error=exc,
                        known=getattr(exc, "known_fingerprint", "?"),
                        offered=fingerprint,
                        hint=getattr(exc, "hint", ""),
                    ).rstrip()
                )
                self.trust_button.setText(self.tr("This is a new instance: trust the new key"))
            else:
                self.status.setText(
                    self.tr(
                        "First contact with this host. Its key fingerprint is:\n"
                        "{fingerprint}\nIf the provider's console shows the same, trust it."
                    ).format(fingerprint=fingerprint)
                )
                self.trust_button.setText(self.tr("Trust this host key"))
            self.trust_button.show()
        else:
            hint = getattr(exc, "hint", "")
            text = self.tr("Could not connect: {error}").format(error=exc)
            self.status.setText(text + (f"\n{hint}" if hint else ""))
        self.completeChanged.emit()

    def ask(self, box: QMessageBox) -> str:
        """The clicked answer's object name (tests answer here)."""
        return ask_box(box)

    def trust(self) -> None:
        """The same question as the Hosts page asks (compare the fingerprint; a changed key is
        replaced only after a second confirmation), then connect with the confirmed key."""
        problem, host = self.pending_problem, self.wiz().state.host
        if problem is None or host is None:
            return
        answer = decide_host_key(self, host, problem, self.ask)
        if answer == "cancel":
            return
        self.pending_key, self.pending_problem = None, None
        self.pending_is_change = answer == "replace"
        self.connect_host(trust_key=problem.key)


def _connect_and_close(sessions: Any, host: Host, trust_key: Any, replace: bool = False) -> bool:
    """Off the GUI thread: store the confirmed host key (if any), log in, log out."""
    if trust_key is not None:
        if replace:
            sessions.replace_host_key(host, trust_key)
        else:
            sessions.trust_host_key(host, trust_key)
    sessions.connect(host).close()
    return True
