"""The connecting half of the wizard: create the instance (checklist and this platform's key), enter
or paste its connection details, and the first connection with host-key confirmation."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.core.ssh.command import parse_ssh_command
from gpu_companion.ui.common.worker import run_in_thread
from gpu_companion.ui.wizard.plan_pages import WizardPage
from gpu_companion.ui.wizard.services import NOT_YET

CHECKLIST = (
    ("image", "A pre-built CUDA + PyTorch image (e.g. “PyTorch 2.x, CUDA 12.x”), not a bare OS"),
    ("key", "This platform's SSH public key (below) pasted into its console — no password login"),
    (
        "disks",
        "A separate data disk or volume for datasets and checkpoints, apart from the system disk",
    ),
    ("ports", "No open ports beyond SSH: reach Jupyter or TensorBoard through an SSH tunnel"),
)


class CreateInstancePage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle("Create the instance on the platform")
        self.setSubTitle(
            "In the provider's console, create an on-demand instance with the card "
            "you chose, and tick each point as you set it."
        )
        lay = QVBoxLayout(self)
        form = QFormLayout()
        self.platform = QComboBox()
        self.platform.setObjectName("platform")
        self.platform.setEditable(True)
        typed = self.platform.lineEdit()  # editable: it has one
        if typed is not None:
            typed.setPlaceholderText("e.g. vast.ai, RunPod, AutoDL")
        self.platform.currentTextChanged.connect(lambda _t: self.completeChanged.emit())
        form.addRow("Platform", self.platform)
        lay.addLayout(form)
        self.checks: dict[str, QCheckBox] = {}
        for key, text in CHECKLIST:
            box = QCheckBox(text)
            box.setObjectName(f"check_{key}")
            box.toggled.connect(lambda _on: self.completeChanged.emit())
            self.checks[key] = box
            lay.addWidget(box)
        row = QHBoxLayout()
        self.generate = QPushButton("Generate this platform's key")
        self.generate.setObjectName("generateKey")
        self.generate.clicked.connect(self.generate_key)
        self.copy = QPushButton("Copy public key")
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
            self.key_status.setText(NOT_YET["keys"])

    def generate_key(self) -> None:
        keys = self.wiz().services.keys
        name = self.platform.currentText().strip()
        if keys is None:
            return
        if not name:
            self.key_status.setText("Name the platform first: the key is made for it.")
            return
        self.generate.setEnabled(False)
        self.key_status.setText(f"Generating the key for {name}…")
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
        self.key_status.setText(
            f"Key for {name}: {stored.fingerprint}. The private key stays in the OS keyring."
        )
        self.copy.setEnabled(True)

    def _key_failed(self, exc: Exception) -> None:
        self.generate.setEnabled(True)
        hint = getattr(exc, "hint", "")
        self.key_status.setText(f"No key was made: {exc}" + (f" {hint}" if hint else ""))

    def copy_key(self) -> None:
        QGuiApplication.clipboard().setText(self.public_key.toPlainText())
        self.key_status.setText(self.key_status.text().split(" Copied")[0] + " Copied.")

    def isComplete(self) -> bool:  # noqa: N802
        return bool(self.platform.currentText().strip()) and all(
            b.isChecked() for b in self.checks.values()
        )

    def blocked_reason(self) -> str:
        if not self.platform.currentText().strip():
            return "name the platform you rent from."
        left = sum(not b.isChecked() for b in self.checks.values())
        return f"tick each point of the checklist once it is done ({left} left)."

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
            return "Enter the SSH port (22 unless the console shows another)."
        if not text.isdigit() or not 1 <= int(text) <= 65535:
            return f"Port {text!r} is not a port number: ports go from 1 to 65535."
        return ""

    def value(self) -> int:
        return 0 if self.problem() else int(self.text().strip())

    def setValue(self, port: int) -> None:  # noqa: N802 - the spin box's name
        self.setText(str(port))


class ConnectionPage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle("Connection details")
        self.setSubTitle("Paste the ssh command the console shows, or fill the fields.")
        self.pasted_forwards: tuple[str, ...] = ()  # its -L forwards, made tunnels on Next
        lay = QVBoxLayout(self)
        self.paste = QLineEdit()
        self.paste.setObjectName("sshCommand")
        self.paste.setPlaceholderText("ssh -p 41234 root@1.2.3.4")
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
        self.alias.setPlaceholderText("short name for `ssh ALIAS`, e.g. gpu1")
        self.gpu_count = QSpinBox()
        self.gpu_count.setObjectName("gpuCount")
        self.gpu_count.setRange(1, 64)
        form.addRow("Host name or IP", self.hostname)
        form.addRow("Port", self.port)
        form.addRow("User", self.user)
        form.addRow("Alias", self.alias)
        form.addRow("GPUs rented", self.gpu_count)
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
            self.paste_note.setText(f"Not understood yet: {exc.message}")
            return
        self.pasted_forwards = target.forwards
        self.hostname.setText(target.hostname)
        self.port.setValue(target.port)
        self.user.setText(target.user)
        self.paste_note.setText(
            f"Read: {target.user}@{target.hostname}, port {target.port}."
            + "".join(f" Note: {n}." for n in target.notes)
        )

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
        self.setTitle("First connection")
        self.setSubTitle(
            "The host's key is shown once, on first contact: compare its "
            "fingerprint with the provider's console before you trust it."
        )
        lay = QVBoxLayout(self)
        self.status = self.note(name="connectStatus")
        row = QHBoxLayout()
        self.connect_button = QPushButton("Connect")
        self.connect_button.setObjectName("connect")
        self.connect_button.clicked.connect(lambda: self.connect_host())
        self.trust_button = QPushButton("Trust this host key")
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
        self.pending_is_change = False
        self.connecting = False

    def isComplete(self) -> bool:  # noqa: N802
        """The self-check needs a trusted, working connection: no Next before it."""
        return self.wiz().services.sessions is None or self.wiz().state.connected

    def blocked_reason(self) -> str:
        if self.connecting:
            return "connecting to the host…"
        if self.pending_key is not None:
            return (
                "the host key is not trusted yet: compare its fingerprint with the provider's "
                "console, then press the trust button."
            )
        return "connect to the host first (press Connect)."

    def initializePage(self) -> None:  # noqa: N802
        state = self.wiz().state
        if self.wiz().services.sessions is None:
            self.connect_button.setEnabled(False)
            self.status.setText(NOT_YET["sessions"])
        elif state.connected:
            self.status.setText("Connected: the host key is trusted.")
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
        self.status.setText(f"Connecting to {host.user}@{host.hostname}:{host.port}…")
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
        self.status.setText("Connected: the host key is trusted and the login works.")
        self.completeChanged.emit()

    def _problem(self, exc: Exception) -> None:
        self.connect_button.setEnabled(True)
        self.connecting = False
        kind = getattr(exc, "kind", "")
        if kind in ("host_key_unknown", "host_key_changed"):
            self.pending_key = getattr(exc, "key", None)
            self.pending_is_change = kind == "host_key_changed"
            fingerprint = getattr(exc, "fingerprint", "?")
            if self.pending_is_change:
                self.status.setText(
                    f"{exc}\nTrusted before: {getattr(exc, 'known_fingerprint', '?')}\n"
                    f"Offered now: {fingerprint}\n{getattr(exc, 'hint', '')}".rstrip()
                )
                self.trust_button.setText("This is a new instance: trust the new key")
            else:
                self.status.setText(
                    "First contact with this host. Its key fingerprint is:\n"
                    f"{fingerprint}\nIf the provider's console shows the same, trust it."
                )
                self.trust_button.setText("Trust this host key")
            self.trust_button.show()
        else:
            hint = getattr(exc, "hint", "")
            self.status.setText(f"Could not connect: {exc}" + (f"\n{hint}" if hint else ""))
        self.completeChanged.emit()

    def trust(self) -> None:
        key, self.pending_key = self.pending_key, None
        self.connect_host(trust_key=key)


def _connect_and_close(sessions: Any, host: Host, trust_key: Any, replace: bool = False) -> bool:
    """Off the GUI thread: store the confirmed host key (if any), log in, log out."""
    if trust_key is not None:
        if replace:
            sessions.replace_host_key(host, trust_key)
        else:
            sessions.trust_host_key(host, trust_key)
    sessions.connect(host).close()
    return True
