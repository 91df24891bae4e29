"""Keys page: one SSH key per platform, kept in the system keyring; every keyring or ssh-agent call
runs off the GUI thread."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.ssh.keyring_errors import KeyringUnavailable
from gpu_companion.core.ssh.vault import RotateResult, StoredKey
from gpu_companion.ui.common.models import RowTableModel, row_table
from gpu_companion.ui.common.page import EmptyStatePage, Navigator
from gpu_companion.ui.common.widgets import EmptyState
from gpu_companion.ui.common.worker import run_in_thread
from gpu_companion.ui.keys.dialogs import GenerateKeyDialog, ImportKeyDialog, confirm_export

if TYPE_CHECKING:
    from gpu_companion.services import Services


@dataclass(frozen=True)
class KeyRow:
    platform: str
    key: StoredKey | None
    hosts: list[str] = field(default_factory=list)
    shared_with: list[str] = field(default_factory=list)


def _notes(r: KeyRow) -> str:
    notes = []
    if r.key is None:
        notes.append(QCoreApplication.translate("KeysPage", "no key yet: generate or import one"))
    else:
        if r.shared_with:
            notes.append(
                QCoreApplication.translate("KeysPage", "same key as {platforms}").format(
                    platforms=", ".join(r.shared_with)
                )
            )
        if r.key.has_previous:
            notes.append(
                QCoreApplication.translate("KeysPage", "old key kept until you forget it")
            )
        if r.key.encrypted:
            notes.append(QCoreApplication.translate("KeysPage", "passphrase"))
    return "; ".join(notes)


class KeysPage(EmptyStatePage):
    key, title, icon_name = "keys", "Keys", "keys"  # the sidebar translates its own

    def __init__(self, ctx: Services, nav: Navigator, parent: QWidget | None = None) -> None:
        super().__init__(ctx, nav, parent)
        self.empty = EmptyState(
            "keys",
            self.tr("No platforms yet"),
            self.tr(
                "Each platform you rent from gets its own SSH key, kept in your system keyring "
                "and never in a plain file. Add a platform on the Hosts page first."
            ),
            [(self.tr("Add a platform"), lambda: nav.navigate("hosts"))],
        )
        self.stack.addWidget(self.empty)
        content = QWidget()
        lay = QVBoxLayout(content)
        self.keyring_problem = QLabel()
        self.keyring_problem.setObjectName("keyringProblem")
        self.keyring_problem.setWordWrap(True)
        self.keyring_problem.setStyleSheet(
            "background: #fff4d6; color: #6b4b00; padding: 8px; border-radius: 4px;"
        )
        self.keyring_problem.hide()
        lay.addWidget(self.keyring_problem)
        intro = QLabel(
            self.tr(
                "One key per platform. Private keys live only in your system keyring; paste the "
                "public key into the platform's console, then test the connection on the Hosts "
                "page."
            )
        )
        intro.setWordWrap(True)
        lay.addWidget(intro)
        self.buttons: dict[str, QPushButton] = {}
        rows = [
            [
                ("generate", self.tr("Generate…"), self.generate),
                ("import", self.tr("Import…"), self.import_key),
                ("copy", self.tr("Copy public key"), self.copy_public_key),
                ("agent", self.tr("Load into ssh-agent…"), self.load_into_agent),
            ],
            [
                ("rotate", self.tr("Rotate…"), self.rotate),
                ("forget", self.tr("Forget old key"), self.forget_previous),
                ("delete", self.tr("Delete…"), self.delete),
                ("export", self.tr("Export private key…"), self.export),
                ("sshconfig", self.tr("Set up `ssh ALIAS`"), self.write_ssh_config),
            ],
        ]
        for row in rows:
            bar = QHBoxLayout()
            for name, label, slot in row:
                b = QPushButton(label)
                b.setObjectName(name)
                b.clicked.connect(slot)
                bar.addWidget(b)
                self.buttons[name] = b
            bar.addStretch(1)
            lay.addLayout(bar)
        self.model: RowTableModel[KeyRow] = RowTableModel(
            [
                (self.tr("Platform"), lambda r: r.platform),
                (self.tr("Type"), lambda r: f"{r.key.kind} {r.key.bits}" if r.key else "—"),
                (self.tr("Fingerprint (SHA256)"), lambda r: r.key.fingerprint if r.key else "—"),
                (self.tr("Created"), lambda r: r.key.created[:10] if r.key else "—"),
                (self.tr("Hosts"), lambda r: ", ".join(r.hosts) or "—"),
                (self.tr("Notes"), _notes),
            ]
        )
        self.view = row_table(self.model, "keys")
        self.view.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        lay.addWidget(self.view)
        self.status = QLabel()
        self.status.setObjectName("keysStatus")
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        self.stack.addWidget(content)
        self.busy = False
        self.refresh()

    # --- state --------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Reads the store only: the keyring is touched when an action needs the key."""
        keys = {k.platform: k for k in self.ctx.vault.keys()}
        shared = self.ctx.vault.shared_public_keys()
        names = [p.name for p in self.ctx.registry.platforms()]
        names += sorted(set(keys) - set(names))
        rows = []
        for name in names:
            k = keys.get(name)
            others = [p for p in shared.get(k.fingerprint, []) if p != name] if k else []
            rows.append(KeyRow(name, k, self.ctx.vault.hosts_using(name), others))
        selected = self.selected()
        self.model.set_rows(rows)
        if selected is not None:
            for i, r in enumerate(rows):
                if r.platform == selected.platform:
                    self.view.selectRow(i)
        if shared:
            groups = "; ".join(
                self.tr("{platforms} share one key").format(platforms=", ".join(p))
                for p in shared.values()
            )
            self.status.setText(
                self.tr(
                    "Warning: {groups}. One leaked key would open all of them: rotate one of them."
                ).format(groups=groups)
            )
        self.stack.setCurrentIndex(1 if rows else 0)
        self._update_buttons()

    def selected(self) -> KeyRow | None:
        rows = self.view.selectionModel().selectedRows()
        return self.model.row(rows[0].row()) if rows else None

    def _update_buttons(self) -> None:
        r = self.selected()
        has = r is not None and r.key is not None
        enabled = {
            "generate": r is not None and r.key is None,
            "import": r is not None and r.key is None,
            "copy": has,
            "agent": has,
            "rotate": has,
            "delete": has,
            "export": has,
            "forget": has and r is not None and r.key is not None and r.key.has_previous,
            "sshconfig": True,
        }
        for name, b in self.buttons.items():
            b.setEnabled(enabled[name] and not self.busy)

    def _run(
        self, what: str, fn: Callable[..., Any], *args: Any, done: Callable[[Any], None]
    ) -> None:
        """Run a vault call off the GUI thread with the buttons disabled meanwhile."""
        self.busy = True
        self.status.setText(what)
        self._update_buttons()
        run_in_thread(fn, *args, on_result=done, on_error=self._failed, on_finished=self._finished)

    def _finished(self) -> None:
        self.busy = False
        self.refresh()
        self.ctx.ssh_sync.request()  # a new or deleted key changes IdentityFile lines

    def _failed(self, exc: Exception) -> None:
        if isinstance(exc, KeyringUnavailable):
            shown = f"<b>{escape(exc.message)}</b><br>{escape(exc.hint)}"  # markup, no words
            self.keyring_problem.setText(shown)
            self.keyring_problem.show()
            self.status.setText("")
            self.ctx.notifier.warning(exc.message, source="keys", key="keyring")
        elif isinstance(exc, UserError):
            self.status.setText(str(exc))
            QMessageBox.warning(self, self.tr("Keys"), str(exc))
        else:
            raise exc

    def _ok(self, text: str) -> Callable[[Any], None]:
        def show(_result: Any) -> None:
            self.keyring_problem.hide()
            self.status.setText(text)
            self.ctx.notifier.info(text, source="keys")

        return show

    # --- actions ------------------------------------------------------------------------------

    def generate(self) -> None:
        r = self.selected()
        if r is None:
            return
        dialog = GenerateKeyDialog(r.platform, self)
        if dialog.exec():
            self.start_generate(r.platform, *dialog.values())

    def start_generate(self, platform: str, kind: str, passphrase: str | None) -> None:
        self._run(
            self.tr("Generating a {kind} key for {platform}…").format(kind=kind, platform=platform),
            self.ctx.vault.generate,
            platform,
            kind,
            passphrase,
            done=self._ok(
                self.tr(
                    "New {kind} key for {platform}: copy its public key into the platform's "
                    "console."
                ).format(kind=kind, platform=platform)
            ),
        )

    def import_key(self) -> None:
        r = self.selected()
        if r is None:
            return
        dialog = ImportKeyDialog(r.platform, self)
        if dialog.exec():
            self.start_import(r.platform, *dialog.values())

    def start_import(
        self, platform: str, text: str, passphrase: str | None, keep: str | None
    ) -> None:
        self._run(
            self.tr("Importing the key of {platform}…").format(platform=platform),
            self.ctx.vault.import_private_key,
            platform,
            text,
            passphrase,
            keep,
            done=self._ok(self.tr("Key imported for {platform}.").format(platform=platform)),
        )

    def copy_public_key(self) -> None:
        r = self.selected()
        if r is None or r.key is None:
            return
        QGuiApplication.clipboard().setText(r.key.public_line)
        self._ok(
            self.tr(
                "Public key of {platform} copied: paste it into the platform's SSH keys page."
            ).format(platform=r.platform)
        )(None)

    def _passphrase(self, r: KeyRow) -> tuple[bool, str | None]:
        """(go on?, passphrase) — asks once per session for passphrase-protected keys."""
        if r.key is None or not r.key.encrypted:
            return True, None
        known = self.ctx.key_passphrases.get(r.platform)
        if known:
            return True, known
        text, ok = QInputDialog.getText(
            self,
            self.tr("Passphrase"),
            self.tr("Passphrase of the {platform} key").format(platform=r.platform),
            QLineEdit.EchoMode.Password,
        )
        if ok and text:
            self.ctx.key_passphrases[r.platform] = text
        return bool(ok and text), text or None

    def load_into_agent(self) -> None:
        r = self.selected()
        if r is None or r.key is None:
            return
        minutes, ok = QInputDialog.getInt(
            self,
            self.tr("Load into ssh-agent"),
            self.tr("Keep the key in ssh-agent for how many minutes? (0 = until the agent stops)"),
            60,
            0,
            7 * 24 * 60,
        )
        if not ok:
            return
        go, passphrase = self._passphrase(r)
        if go:
            self.start_load_into_agent(r.platform, minutes * 60 or None, passphrase)

    def start_load_into_agent(
        self, platform: str, lifetime_s: int | None, passphrase: str | None = None
    ) -> None:
        def done(message: str) -> None:
            self._ok(
                self.tr(
                    "{message} Your own tools can use it through your session's agent; `ssh "
                    "ALIAS` for a managed host uses GPU Companion's agent while the app runs."
                ).format(message=message)
            )(None)

        self._run(
            self.tr("Loading the {platform} key into ssh-agent…").format(platform=platform),
            self.ctx.vault.load_into_agent,
            platform,
            lifetime_s,
            passphrase,
            done=done,
        )

    def rotate(self) -> None:
        r = self.selected()
        if r is None or r.key is None:
            return
        dialog = GenerateKeyDialog(r.platform, self, rotate=True)
        if dialog.exec():
            kind, passphrase = dialog.values()
            self.start_rotate(r.platform, kind, passphrase)

    def start_rotate(self, platform: str, kind: str, passphrase: str | None) -> None:
        def done(result: RotateResult) -> None:
            hosts = ", ".join(result.hosts_on_old_key) or self.tr("none")
            self._ok(
                self.tr(
                    "New key for {platform} ({fingerprint}). Hosts still set up with the old "
                    "key: {hosts}. Paste the new public key into the platform's console; the old "
                    "key keeps working here until you click 'Forget old key'."
                ).format(platform=platform, fingerprint=result.new.fingerprint, hosts=hosts)
            )(None)

        self._run(
            self.tr("Rotating the key of {platform}…").format(platform=platform),
            self.ctx.vault.rotate,
            platform,
            kind,
            passphrase,
            done=done,
        )

    def forget_previous(self) -> None:
        r = self.selected()
        if r is None or r.key is None:
            return
        self._run(
            self.tr("Forgetting the old key…"),
            self.ctx.vault.forget_previous,
            r.platform,
            done=self._ok(
                self.tr("The old key of {platform} is gone from the keyring.").format(
                    platform=r.platform
                )
            ),
        )

    def delete(self) -> None:
        r = self.selected()
        if r is None or r.key is None:
            return
        hosts = ", ".join(r.hosts)
        if hosts:
            question = self.tr(
                "Delete the key of {platform} from your keyring?\n\n"
                "GPU Companion will no longer reach: {hosts}."
            ).format(platform=r.platform, hosts=hosts)
        else:
            question = self.tr("Delete the key of {platform} from your keyring?").format(
                platform=r.platform
            )
        answer = QMessageBox.question(self, self.tr("Delete key"), question)
        if answer == QMessageBox.StandardButton.Yes:
            self._run(
                self.tr("Deleting the key of {platform}…").format(platform=r.platform),
                self.ctx.vault.delete,
                r.platform,
                done=self._ok(
                    self.tr("The key of {platform} was deleted.").format(platform=r.platform)
                ),
            )

    def export(self) -> None:
        r = self.selected()
        if r is None or r.key is None:
            return
        path = confirm_export(self, r.platform)
        if path is not None:
            self._run(
                self.tr("Exporting…"),
                self.ctx.vault.export_private_key,
                r.platform,
                path,
                done=self._ok(
                    self.tr(
                        "Private key written to {path} (mode 0600). Delete it once it has been "
                        "moved."
                    ).format(path=path)
                ),
            )

    def write_ssh_config(self) -> None:
        """The GUI side of `gpu-companion ssh-config --write`."""

        def work() -> str:
            return self.ctx.ssh_config.write(self.ctx.managed_ssh.entries()).summary()

        self._run(
            self.tr("Writing the ssh config…"),
            work,
            done=lambda text: self._ok(
                self.tr(
                    "ssh config ready: `ssh ALIAS` works in a terminal while GPU Companion runs "
                    "(its own ssh-agent holds the keys).\n{summary}"
                ).format(summary=text)
            )(None),
        )
