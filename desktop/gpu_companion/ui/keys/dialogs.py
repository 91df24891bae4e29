"""Dialogs of the Keys page: generate, import, and the warned export."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.ui.common.widgets import form_error_label

# the placeholder of the key field: the first line of a key file, the same in every language
KEY_SAMPLE = "-----BEGIN OPENSSH PRIVATE KEY-----\n..."


def _password_field() -> QLineEdit:
    field = QLineEdit()
    field.setEchoMode(QLineEdit.EchoMode.Password)
    return field


class _Dialog(QDialog):
    def __init__(self, title: str, parent: QWidget | None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.form = QFormLayout()
        self.error = form_error_label()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self._try_accept)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        self.intro = QLabel()
        self.intro.setWordWrap(True)
        lay.addWidget(self.intro)
        lay.addLayout(self.form)
        lay.addWidget(self.error)
        lay.addWidget(self.buttons)

    def problem(self) -> str:
        return ""

    def _try_accept(self) -> None:
        text = self.problem()
        if text:
            self.error.setText(text)
            self.error.show()
            return
        self.accept()


class GenerateKeyDialog(_Dialog):
    """Key type (ed25519 by default) and an optional passphrase typed twice."""

    def __init__(self, platform: str, parent: QWidget | None = None, rotate: bool = False) -> None:
        title = self.tr("New key for {platform}")
        if rotate:
            title = self.tr("Rotate key for {platform}")
        super().__init__(title.format(platform=platform), parent)
        self.intro.setText(
            self.tr(
                "The private key goes into your system keyring only. A passphrase is optional: the "
                "keyring already protects it, but a passphrase is asked again each session."
            )
        )
        self.kind = QComboBox()
        self.kind.addItem(self.tr("ed25519 (recommended)"), userData="ed25519")
        self.kind.addItem(self.tr("RSA 4096 (for old servers)"), userData="rsa")
        self.form.addRow(self.tr("Key type"), self.kind)
        self.passphrase = _password_field()
        self.repeat = _password_field()
        self.form.addRow(self.tr("Passphrase (optional)"), self.passphrase)
        self.form.addRow(self.tr("Repeat passphrase"), self.repeat)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(
            self.tr("Rotate") if rotate else self.tr("Generate")
        )

    def problem(self) -> str:
        if self.passphrase.text() != self.repeat.text():
            return self.tr("The two passphrases differ.")
        return ""

    def values(self) -> tuple[str, str | None]:
        return str(self.kind.currentData()), self.passphrase.text() or None


class ImportKeyDialog(_Dialog):
    """Paste a private key or read one from a file; the key's passphrase when it has one."""

    def __init__(self, platform: str, parent: QWidget | None = None) -> None:
        super().__init__(self.tr("Import a key for {platform}").format(platform=platform), parent)
        self.intro.setText(
            self.tr(
                "Paste a private key (OpenSSH or PEM) or choose its file. It is copied into your "
                "system keyring; the file you chose is not changed. Consider deleting other copies."
            )
        )
        self.text = QPlainTextEdit()
        self.text.setObjectName("keyText")
        self.text.setPlaceholderText(KEY_SAMPLE)
        self.text.setMinimumHeight(140)
        self.form.addRow(self.tr("Private key"), self.text)
        choose = QPushButton(self.tr("Choose file…"))
        choose.clicked.connect(self.choose_file)
        self.form.addRow("", choose)
        self.passphrase = _password_field()
        self.form.addRow(self.tr("Its passphrase (if any)"), self.passphrase)
        self.keep = QCheckBox(self.tr("Keep the passphrase (asked each session)"))
        self.form.addRow("", self.keep)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(self.tr("Import"))

    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, self.tr("Private key file"), str(Path.home() / ".ssh"), self.tr("All files (*)")
        )
        if path:
            self.load_file(Path(path))

    def load_file(self, path: Path) -> None:
        try:
            if path.stat().st_size > 64 * 1024:
                raise ValueError(self.tr("the file is too large to be an SSH key"))
            self.text.setPlainText(path.read_text(encoding="utf-8", errors="replace"))
        except (OSError, ValueError) as exc:
            self.error.setText(
                self.tr("Could not read {path}: {error}.").format(path=path, error=exc)
            )
            self.error.show()

    def problem(self) -> str:
        return "" if self.text.toPlainText().strip() else self.tr("Paste a key or choose its file.")

    def values(self) -> tuple[str, str | None, str | None]:
        """(key text, its passphrase, the passphrase to store it with: '' = none)."""
        pw = self.passphrase.text() or None
        return self.text.toPlainText(), pw, (pw if self.keep.isChecked() else "")


def confirm_export(parent: QWidget, platform: str) -> Path | None:
    """The warning first, then the file name; None when the user backs out."""
    answer = QMessageBox.warning(
        parent,
        QCoreApplication.translate("confirm_export", "Export private key"),
        QCoreApplication.translate(
            "confirm_export",
            "This writes the private key of {platform} into a plain file (mode 0600).\n\n"
            "Anyone who can read that file can log in to every host of this platform. Only do "
            "this to move the key to another computer, and delete the file afterwards.",
        ).format(platform=platform),
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
        QMessageBox.StandardButton.Cancel,
    )
    if answer != QMessageBox.StandardButton.Yes:
        return None
    path, _ = QFileDialog.getSaveFileName(
        parent,
        QCoreApplication.translate("confirm_export", "Export private key to"),
        str(Path.home() / f"{platform}-key"),
        QCoreApplication.translate("confirm_export", "All files (*)"),
    )
    return Path(path) if path else None
