"""Provider accounts on the Hosts page: which platform talks to vast.ai's or RunPod's API (the API
key goes to the system keyring, never to the database), "Sync providers" (every account's
instances imported or followed), and the forgotten instances a sync found ("orphans": billing at
the provider, unknown to the app), imported with one click. Everything that reads the keyring or
the network runs off the GUI thread."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.providers.accounts import KINDS, Account
from gpu_companion.ui.common.models import RowTableModel, row_table
from gpu_companion.ui.common.widgets import form_error_label
from gpu_companion.ui.common.worker import Worker, run_in_thread

if TYPE_CHECKING:
    from gpu_companion.core.providers.reconcile import Orphan, SyncReport
    from gpu_companion.services import Services
    from gpu_companion.ui.common.page import Navigator

KEY_PAGES = {
    "vast.ai": "https://cloud.vast.ai/manage-keys/",
    "runpod": "https://www.runpod.io/console/user/settings",
}
# translated where shown (context "ProviderActions")
NO_ACCOUNT = str(
    QT_TRANSLATE_NOOP(
        "ProviderActions",
        "No provider account yet: add one with Provider accounts… (vast.ai or RunPod).",
    )
)


def _no_account() -> str:
    return QCoreApplication.translate("ProviderActions", NO_ACCOUNT)


def _plain(label: QLabel) -> QLabel:
    """A label that may quote a provider's answer: shown as text, wrapped."""
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    return label


def sync_summary(accounts: int, report: SyncReport) -> str:
    """One line: what a sync did."""
    if not accounts:
        return _no_account()

    def named(aliases: list[str]) -> str:  # "2 (gpu1, gpu2)": numbers and names, not words
        return f"{len(aliases)}" + (f" ({', '.join(aliases)})" if aliases else "")

    counts = {
        "imported": named(report.imported),
        "updated": len(report.updated),
        "stopped": named(report.stopped),
        "gone": named(report.gone),
        "orphans": len(report.orphans),
    }
    if accounts == 1:
        line = QCoreApplication.translate(
            "ProviderActions",
            "Synced %n provider account: imported {imported}, updated {updated}, "
            "stopped {stopped}, gone {gone}, orphans {orphans}.",
            None,
            accounts,
        ).format(**counts)
    else:
        line = QCoreApplication.translate(
            "ProviderActions",
            "Synced %n provider accounts: imported {imported}, updated {updated}, "
            "stopped {stopped}, gone {gone}, orphans {orphans}.",
            None,
            accounts,
        ).format(**counts)
    if report.errors:
        errors = "; ".join(report.errors)
        n = len(report.errors)
        if n == 1:
            more = QCoreApplication.translate("ProviderActions", "%n error: {errors}", None, n)
        else:
            more = QCoreApplication.translate("ProviderActions", "%n errors: {errors}", None, n)
        line += " " + more.format(errors=errors)
    return line


def _button(bar: QHBoxLayout, label: str, name: str, slot: Callable[[], None]) -> QPushButton:
    b = QPushButton(label)
    b.setObjectName(name)
    b.clicked.connect(lambda: slot())  # not the button's `checked` argument
    bar.addWidget(b)
    return b


T = TypeVar("T")

class AddAccountDialog(QDialog):
    """Provider, platform name, API key (hidden as typed) and an optional API address; the
    account is added (the key written to the keyring and read back) off the GUI thread."""

    def __init__(self, ctx: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setWindowTitle(self.tr("Add a provider account"))
        self.setMinimumWidth(520)
        self.account: Account | None = None
        self.worker: Worker | None = None
        self.kind = QComboBox()
        self.kind.setObjectName("providerKind")
        for key, kind in KINDS.items():
            self.kind.addItem(kind.name, key)
        self.platform = QLineEdit(self._default())
        self.platform.setObjectName("platformName")
        self.api_key = QLineEdit()
        self.api_key.setObjectName("apiKey")
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText(self.tr("paste the key from the provider's console"))
        self.api_base = QLineEdit()
        self.api_base.setObjectName("apiBase")
        self.api_base.setPlaceholderText(self.tr("optional: the provider's own address is used"))
        self.fields: dict[str, QWidget] = {
            "kind": self.kind,
            "platform": self.platform,
            "api_key": self.api_key,
            "api_base": self.api_base,
        }
        form = QFormLayout()
        form.addRow(self.tr("Provider"), self.kind)
        form.addRow(self.tr("Platform"), self.platform)
        form.addRow(self.tr("API key"), self.api_key)
        form.addRow(self.tr("API address"), self.api_base)
        self.hint = _plain(QLabel())
        self.error = _plain(form_error_label())
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.save_btn = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_btn.setText(self.tr("Add"))
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.hint)
        lay.addWidget(self.error)
        lay.addWidget(self.buttons)
        self._shown_default = self.platform.text()
        self.kind.currentIndexChanged.connect(self._kind_changed)
        self._kind_changed()

    def _key(self) -> str:
        return str(self.kind.currentData())

    def _default(self) -> str:
        return KINDS[self._key()].name

    def _kind_changed(self) -> None:
        if self.platform.text().strip() in ("", self._shown_default):
            self.platform.setText(self._default())
        self._shown_default = self._default()
        self.hint.setText(
            self.tr(
                "Create the key at {page}. It is kept in the system keyring, never in GPU "
                "Companion's database, and sent only to the provider's API."
            ).format(page=KEY_PAGES[self._key()])
            if self._key() in KEY_PAGES
            else self.tr(
                "Create the key at the provider console. It is kept in the system keyring, never "
                "in GPU Companion's database, and sent only to the provider's API."
            )
        )

    def busy(self) -> bool:
        return self.worker is not None

    def save(self) -> None:
        if self.busy():
            return
        self.error.hide()
        for w in self.fields.values():
            w.setStyleSheet("")
        add = functools.partial(self.ctx.providers.add, self._key(), self.api_key.text(),
                                platform=self.platform.text(), api_base=self.api_base.text())
        self.save_btn.setEnabled(False)
        self.worker = run_in_thread(
            add, on_result=self._added, on_error=self._failed, on_finished=self._finished,
        )  # fmt: skip

    def _added(self, account: Account) -> None:
        self.account = account
        self.api_key.clear()  # the key is in the keyring now; no widget keeps it
        self.accept()

    def _failed(self, exc: Exception) -> None:
        field = exc.field if isinstance(exc, ValidationError) else ""
        text = (
            str(exc)
            if isinstance(exc, UserError)
            else self.tr("The account was not added: {error}").format(error=exc)
        )
        self.error.setText(text)
        self.error.show()
        if field in self.fields:
            self.fields[field].setStyleSheet("border: 1px solid #c53030;")
            self.fields[field].setFocus()

    def _finished(self) -> None:
        self.worker = None
        self.save_btn.setEnabled(True)


class ProviderAccountsDialog(QDialog):
    """The accounts (platform, provider, API address), Add, Remove and Test."""

    def __init__(self, ctx: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setWindowTitle(self.tr("Provider accounts"))
        self.worker: Worker | None = None
        self.add_dialog: AddAccountDialog | None = None
        self.changed = False  # an account (and maybe its platform) was added or removed
        own = self.tr("the provider's own")
        self.model: RowTableModel[Account] = RowTableModel(
            [
                (self.tr("Platform"), lambda a: a.platform_name),
                (self.tr("Provider"), lambda a: a.provider_name),
                (self.tr("API address"), lambda a: a.api_base or own),
            ]
        )
        self.view = row_table(self.model, "accounts")
        self.view.selectionModel().selectionChanged.connect(lambda *_: self._sync())
        intro = _plain(
            QLabel(
                self.tr(
                    "A platform with an account is released, stopped and synced through the "
                    "provider's API: the instance is read back until the provider confirms. API "
                    "keys stay in the system keyring."
                )
            )
        )
        self.status = _plain(QLabel())
        self.status.setObjectName("accountStatus")
        bar = QHBoxLayout()
        self.add_btn = _button(bar, self.tr("Add…"), "addAccount", self.add)
        self.remove_btn = _button(bar, self.tr("Remove"), "removeAccount", self.remove_selected)
        self.test_btn = _button(bar, self.tr("Test"), "testAccount", self.test_selected)
        bar.addStretch(1)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        bar.addWidget(close)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addWidget(self.view)
        lay.addWidget(self.status)
        lay.addLayout(bar)
        self.resize(640, 320)
        self.refresh()

    def refresh(self) -> None:
        self.model.set_rows(self.ctx.providers.accounts())
        if self.model.rowCount():
            self.view.selectRow(0)
        elif not self.busy():
            self.status.setText(_no_account())
        self._sync()

    def selected(self) -> Account | None:
        rows = self.view.selectionModel().selectedRows()
        return self.model.row(rows[0].row()) if rows else None

    def busy(self) -> bool:
        return self.worker is not None

    def _sync(self) -> None:
        chosen = self.selected() is not None and not self.busy()
        self.remove_btn.setEnabled(chosen)
        self.test_btn.setEnabled(chosen)
        self.add_btn.setEnabled(not self.busy())

    def _run(self, fn: Callable[..., T], *args: object, done: Callable[[T], object]) -> None:
        self.worker = run_in_thread(
            fn, *args, on_result=done, on_error=self._failed, on_finished=self._finished
        )
        self._sync()

    def _failed(self, exc: Exception) -> None:
        self.status.setText(
            str(exc) if isinstance(exc, UserError) else self.tr("Failed: {error}").format(error=exc)
        )

    def _finished(self) -> None:
        self.worker = None
        self._sync()

    # --- the buttons -------------------------------------------------------------------------
    def add(self) -> None:
        self.add_dialog = AddAccountDialog(self.ctx, self)
        self.add_dialog.accepted.connect(self._added)
        self.add_dialog.open()

    def _added(self) -> None:
        account = self.add_dialog.account if self.add_dialog is not None else None
        self.changed = True
        self.refresh()
        if account is not None:
            self.status.setText(
                self.tr(
                    "{platform} now talks to the {provider} API; its key is in the system "
                    "keyring. Test it, then Sync providers."
                ).format(platform=account.platform_name, provider=account.provider_name)
            )
            self.ctx.notifier.info(
                self.tr("Provider account added: {platform} ({provider}).").format(
                    platform=account.platform_name, provider=account.provider_name
                ),
                source="hosts",
            )

    def remove_selected(self) -> None:
        account = self.selected()
        if account is None or self.busy():
            return
        if not self.ask(
            self.tr("Remove the provider account"),
            self.tr(
                "Remove {platform}'s {provider} account and delete its API key from the keyring? "
                "Its hosts stay; nothing changes at the provider, but releases then need the "
                "provider's console."
            ).format(platform=account.platform_name, provider=account.provider_name),
        ):
            return
        self.status.setText(
            self.tr("Removing {platform}'s account …").format(platform=account.platform_name)
        )
        self._run(self.ctx.providers.remove, account, done=lambda _none: self._removed(account))

    def _removed(self, account: Account) -> None:
        self.changed = True
        self.refresh()
        self.status.setText(
            self.tr("{platform}'s {provider} account removed, its key deleted.").format(
                platform=account.platform_name, provider=account.provider_name
            )
        )

    def test_selected(self) -> None:
        account = self.selected()
        if account is None or self.busy():
            return
        self.status.setText(
            self.tr("Asking {provider} for {platform}'s instances …").format(
                provider=account.provider_name, platform=account.platform_name
            )
        )
        providers = self.ctx.providers

        def count() -> int:
            return len(providers.provider(account).instances())

        self._run(count, done=lambda n: self._tested(account, n))

    def _tested(self, account: Account, n: int) -> None:
        if n == 1:
            text = QCoreApplication.translate(
                "ProviderAccountsDialog",
                "{provider} answered for {platform}: %n instance in the account.",
                None,
                n,
            )
        else:
            text = QCoreApplication.translate(
                "ProviderAccountsDialog",
                "{provider} answered for {platform}: %n instances in the account.",
                None,
                n,
            )
        self.status.setText(
            text.format(provider=account.provider_name, platform=account.platform_name)
        )

    def ask(self, title: str, text: str) -> bool:
        """A yes/no question (a method so tests can answer it)."""
        box = QMessageBox(QMessageBox.Icon.Question, title, text, parent=self)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No)
        return box.exec() == QMessageBox.StandardButton.Yes


class OrphansDialog(QDialog):
    """The instances the last sync found billing at a provider but unknown to the app (or
    believed released): Import meters one as a host; Import and release… then opens its
    release checklist; Look again syncs without importing."""

    def __init__(
        self,
        ctx: Services,
        nav: Navigator | None = None,
        parent: QWidget | None = None,
        on_import: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.ctx, self.nav, self.on_import = ctx, nav, on_import
        self.setWindowTitle(self.tr("Forgotten instances"))
        self.worker: Worker | None = None
        self.imported: list[str] = []
        self.model: RowTableModel[Orphan] = RowTableModel(
            [
                (self.tr("Price"), lambda o: o.price),
                (self.tr("Account"), lambda o: o.account.platform_name),
                (self.tr("Instance"), lambda o: o.text()),
            ]
        )
        self.view = row_table(self.model, "orphans")
        self.view.setWordWrap(True)
        self.view.selectionModel().selectionChanged.connect(lambda *_: self._sync())
        intro = _plain(
            QLabel(
                self.tr(
                    "These instances run (and bill) at the provider, but GPU Companion does not "
                    "meter them. Import one to meter it as a host, or import it and release it."
                )
            )
        )
        self.status = _plain(QLabel())
        self.status.setObjectName("orphanStatus")
        bar = QHBoxLayout()
        self.import_btn = _button(bar, self.tr("Import"), "importOrphan", self.import_selected)
        self.release_btn = _button(
            bar, self.tr("Import and release…"), "importAndRelease", self.import_and_release
        )
        self.again_btn = _button(bar, self.tr("Look again"), "lookAgain", self.look_again)
        bar.addStretch(1)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        close.rejected.connect(self.reject)
        bar.addWidget(close)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.status)
        lay.addLayout(bar)
        self.resize(820, 340)
        self.refresh()

    def refresh(self) -> None:
        self.model.set_rows(self.ctx.provider_sync.orphans)
        self.view.resizeRowsToContents()
        if self.model.rowCount():
            self.view.selectRow(0)
        elif not self.busy():
            self.status.setText(
                self.tr("No forgotten instance: the last provider sync found none.")
            )
        self._sync()

    def selected(self) -> Orphan | None:
        rows = self.view.selectionModel().selectedRows()
        return self.model.row(rows[0].row()) if rows else None

    def busy(self) -> bool:
        return self.worker is not None

    def _sync(self) -> None:
        chosen = self.selected() is not None and not self.busy()
        self.import_btn.setEnabled(chosen)
        self.release_btn.setEnabled(chosen and self.nav is not None)
        self.again_btn.setEnabled(not self.busy())

    def import_selected(self, then_release: bool = False) -> None:
        orphan = self.selected()
        if orphan is None or self.busy():
            return
        self.status.setText(
            self.tr("Importing {provider} instance {id} …").format(
                provider=orphan.account.provider_name, id=orphan.instance.id
            )
        )
        self.worker = run_in_thread(
            self.ctx.provider_sync.import_instance, orphan.account, orphan.instance.id,
            on_result=lambda alias: self._imported(orphan, str(alias), then_release),
            on_error=self._failed, on_finished=self._finished,
        )  # fmt: skip
        self._sync()

    def import_and_release(self) -> None:
        self.import_selected(then_release=True)

    def _imported(self, orphan: Orphan, alias: str, then_release: bool) -> None:
        self.imported.append(alias)
        text = self.tr(
            "{provider} instance {id} imported as {alias}: metered from now at {price}."
        ).format(
            provider=orphan.account.provider_name,
            id=orphan.instance.id,
            alias=alias,
            price=orphan.price,
        )
        self.ctx.notifier.info(text, source="hosts")
        if self.on_import is not None:
            self.on_import(alias)
        if self.nav is not None:
            self.nav.refresh_tray()  # a new rental is metered
        self.refresh()
        self.status.setText(text)
        if then_release and alias and self.nav is not None:
            self.accept()
            self.nav.open_release(alias)

    def look_again(self) -> None:
        if self.busy():
            return
        self.status.setText(self.tr("Reading the provider accounts …"))
        self.worker = run_in_thread(
            self.ctx.provider_sync.sync, False,
            on_result=self._looked, on_error=self._failed, on_finished=self._finished,
        )  # fmt: skip
        self._sync()

    def _looked(self, report: SyncReport) -> None:
        self.refresh()
        n = len(report.orphans)
        if n == 1:
            found = QCoreApplication.translate(
                "OrphansDialog", "Looked again: %n forgotten instance.", None, n
            )
        else:
            found = QCoreApplication.translate(
                "OrphansDialog", "Looked again: %n forgotten instances.", None, n
            )
        errors = f" {'; '.join(report.errors)}" if report.errors else ""
        self.status.setText(found + errors)

    def _failed(self, exc: Exception) -> None:
        self.status.setText(
            str(exc) if isinstance(exc, UserError) else self.tr("Failed: {error}").format(error=exc)
        )

    def _finished(self) -> None:
        self.worker = None
        self._sync()


class ProviderActions:
    """What the Hosts page's provider buttons do; `say` shows one line on the page."""

    def __init__(
        self,
        ctx: Services,
        nav: Navigator,
        parent: QWidget,
        say: Callable[[str], None],
        refresh: Callable[[], None],
    ) -> None:
        self.ctx, self.nav, self.parent = ctx, nav, parent
        self.say, self.refresh = say, refresh
        self.worker: Worker | None = None
        self.accounts_dialog: ProviderAccountsDialog | None = None
        self.orphans_dialog: OrphansDialog | None = None
        self.last: SyncReport | None = None

    def open_accounts(self) -> ProviderAccountsDialog:
        self.accounts_dialog = ProviderAccountsDialog(self.ctx, self.parent)
        self.accounts_dialog.finished.connect(self._accounts_closed)
        self.accounts_dialog.open()
        return self.accounts_dialog

    def _accounts_closed(self) -> None:
        if self.accounts_dialog is not None and self.accounts_dialog.changed:
            self.refresh()  # a platform may have been made for the account

    def open_orphans(self) -> OrphansDialog:
        self.orphans_dialog = OrphansDialog(
            self.ctx, self.nav, self.parent, on_import=lambda _alias: self.refresh()
        )
        self.orphans_dialog.open()
        return self.orphans_dialog

    def busy(self) -> bool:
        return self.worker is not None

    def sync(self) -> None:
        """Every account read, every orphan imported as a metered host, off the GUI thread."""
        if self.busy():
            return
        self.say(QCoreApplication.translate("ProviderActions", "Syncing the provider accounts …"))
        ctx = self.ctx

        def work() -> tuple[int, SyncReport]:
            accounts = len(ctx.providers.accounts())
            return accounts, ctx.provider_sync.sync(import_all=True)

        self.worker = run_in_thread(
            work, on_result=self._synced, on_error=self._failed, on_finished=self._finished
        )

    def _synced(self, result: tuple[int, SyncReport]) -> None:
        accounts, report = result
        self.last = report
        line = sync_summary(accounts, report)
        self.say(line)
        if accounts:
            self.ctx.notifier.info(line, source="hosts")
        self.refresh()
        self.nav.refresh_tray()  # imported, stopped or gone: the rentals changed

    def _failed(self, exc: Exception) -> None:
        text = (
            str(exc)
            if isinstance(exc, UserError)
            else QCoreApplication.translate("ProviderActions", "The sync failed: {error}").format(
                error=exc
            )
        )
        self.say(text)
        self.ctx.notifier.warning(text, source="hosts")

    def _finished(self) -> None:
        self.worker = None
