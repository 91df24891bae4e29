"""Hosts page: platforms and hosts, add/edit/remove with field-level messages, ssh config import,
and the provider accounts that sync them (ui/hosts/providers.py, loaded when first used)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
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
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.hosts.registry import CURRENCIES, GRANULARITIES, LOCAL_HOST, Host, Platform
from gpu_companion.core.hosts.ssh_import import ImportCandidate, scan_ssh_config
from gpu_companion.ui.common.access import AccessActions, context_menu_on, fill_open_menu
from gpu_companion.ui.common.flow import button_bar
from gpu_companion.ui.common.models import RowTableModel, row_table
from gpu_companion.ui.common.page import EmptyStatePage, Navigator
from gpu_companion.ui.common.widgets import EmptyState, form_error_label
from gpu_companion.ui.hosts.connection import (
    HostConnection,
    SshOptionsDialog,
    TrustedKeyRow,
)
from gpu_companion.ui.hosts.tunnels import TunnelsPanel

if TYPE_CHECKING:
    from gpu_companion.services import Services
    from gpu_companion.ui.hosts.providers import ProviderActions

# how a host's state shows in the State column (translated where shown)
STATE_WORDS = {
    "active": str(QT_TRANSLATE_NOOP("HostsPage", "active")),
    "released": str(QT_TRANSLATE_NOOP("HostsPage", "released")),
    "stopped": str(QT_TRANSLATE_NOOP("HostsPage", "stopped (disk billed)")),
    "gone": str(QT_TRANSLATE_NOOP("HostsPage", "gone at the provider")),
}
# a platform's billing granularity as the dialog and the table show it (translated where shown)
GRANULARITY_WORDS = {
    "second": str(QT_TRANSLATE_NOOP("HostsPage", "second")),
    "minute": str(QT_TRANSLATE_NOOP("HostsPage", "minute")),
    "hour": str(QT_TRANSLATE_NOOP("HostsPage", "hour")),
}


def granularity_text(value: str) -> str:
    return QCoreApplication.translate("HostsPage", GRANULARITY_WORDS.get(value, value))


W = TypeVar("W", bound=QWidget)

class _FormDialog(QDialog):
    """A form whose save() may raise ValidationError; the message shows next to the right field."""

    def __init__(self, title: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.form = QFormLayout()
        self.error = form_error_label()
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        self.buttons.accepted.connect(self._try_accept)
        self.buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(self.form)
        lay.addWidget(self.error)
        lay.addWidget(self.buttons)
        self.fields: dict[str, QWidget] = {}
        self.result_value: object = None

    def add(self, name: str, label: str, widget: W) -> W:
        self.fields[name] = widget
        widget.setObjectName(name)
        self.form.addRow(label, widget)
        return widget

    def save(self) -> object:
        raise NotImplementedError

    def _try_accept(self) -> None:
        try:
            self.result_value = self.save()
        except ValidationError as exc:
            self.show_error(exc.message, exc.field)
            return
        except UserError as exc:
            self.show_error(str(exc))
            return
        self.accept()

    def show_error(self, text: str, field: str = "") -> None:
        self.error.setText(text)
        self.error.show()
        for name, w in self.fields.items():
            w.setStyleSheet("border: 1px solid #c53030;" if name == field else "")
        if field in self.fields:
            self.fields[field].setFocus()


class PlatformDialog(_FormDialog):
    def __init__(self, ctx: Services, platform: Platform | None, parent: QWidget | None = None):
        super().__init__(self.tr("Edit platform") if platform else self.tr("Add platform"), parent)
        self.ctx = ctx
        self.platform = platform or Platform(name="")
        self.name = self.add("name", self.tr("Name"), QLineEdit(self.platform.name))
        self.name.setPlaceholderText(self.tr("e.g. vast.ai, RunPod, university cluster"))
        self.console_url = self.add(
            "console_url", self.tr("Console URL"), QLineEdit(self.platform.console_url)
        )
        self.granularity = QComboBox()
        for value in GRANULARITIES:  # shown translated, saved as the value
            self.granularity.addItem(granularity_text(value), value)
        self.granularity.setCurrentIndex(
            max(self.granularity.findData(self.platform.billing_granularity), 0)
        )
        self.add("billing_granularity", self.tr("Billed per"), self.granularity)
        self.currency = QComboBox()
        self.currency.addItems(list(CURRENCIES))
        self.currency.setCurrentText(self.platform.currency)
        self.add("currency", self.tr("Currency"), self.currency)

    def save(self) -> Platform:
        return self.ctx.registry.save_platform(
            replace(
                self.platform,
                name=self.name.text(),
                console_url=self.console_url.text(),
                billing_granularity=str(self.granularity.currentData()),
                currency=self.currency.currentText(),
            )
        )


class HostDialog(_FormDialog):
    def __init__(self, ctx: Services, host: Host | None, parent: QWidget | None = None):
        super().__init__(self.tr("Edit host") if host else self.tr("Add host"), parent)
        self.ctx = ctx
        self.host = host or Host(alias="", hostname="")
        self.alias = self.add("alias", self.tr("Alias"), QLineEdit(self.host.alias))
        self.alias.setPlaceholderText(self.tr("short name for `ssh ALIAS`, e.g. gpu1"))
        self.hostname = self.add(
            "hostname", self.tr("Host name or IP"), QLineEdit(self.host.hostname)
        )
        self.port = self.add("port", self.tr("Port"), QLineEdit(str(self.host.port)))
        self.user = self.add("user", self.tr("User"), QLineEdit(self.host.user))
        self.platform = QComboBox()
        self.platform.addItem(self.tr("(none)"), None)
        for p in ctx.registry.platforms():
            self.platform.addItem(p.name, p.id)
        idx = self.platform.findData(self.host.platform_id)
        self.platform.setCurrentIndex(max(idx, 0))
        self.add("platform", self.tr("Platform"), self.platform)
        self.gpu_model = self.add("gpu_model", self.tr("GPU model"), QLineEdit(self.host.gpu_model))
        self.gpu_count = QSpinBox()
        self.gpu_count.setRange(0, 64)
        self.gpu_count.setValue(self.host.gpu_count)
        self.add("gpu_count", self.tr("GPU count"), self.gpu_count)
        self.instance_id = self.add(
            "instance_id", self.tr("Instance id"), QLineEdit(self.host.instance_id)
        )
        self.instance_id.setPlaceholderText(
            self.tr("the provider's id, e.g. 12345678 (release commands)")
        )
        self.notes = QPlainTextEdit(self.host.notes)
        self.notes.setMaximumHeight(70)
        self.add("notes", self.tr("Notes"), self.notes)
        if host is not None and host.id is not None and not host.is_local:
            self.trusted_key = TrustedKeyRow(ctx, host, self)
            self.form.addRow(self.tr("Trusted host key"), self.trusted_key)

    def save(self) -> Host:
        port_text = self.port.text().strip()
        return self.ctx.registry.save_host(
            replace(
                self.host,
                alias=self.alias.text(),
                hostname=self.hostname.text(),
                port=int(port_text) if port_text.lstrip("-").isdigit() else port_text,  # type: ignore[arg-type]
                user=self.user.text(),
                platform_id=self.platform.currentData(),
                gpu_model=self.gpu_model.text(),
                gpu_count=self.gpu_count.value(),
                instance_id=self.instance_id.text(),
                notes=self.notes.toPlainText(),
            )
        )


class ImportDialog(QDialog):
    """Shows what an ~/.ssh/config holds and imports only the ticked, valid, new aliases."""

    def __init__(self, ctx: Services, path: Path, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setWindowTitle(self.tr("Import hosts from ssh config"))
        existing = frozenset(h.alias.lower() for h in ctx.registry.hosts())
        self.candidates = scan_ssh_config(path, existing)
        lay = QVBoxLayout(self)
        lay.addWidget(
            QLabel(
                self.tr(
                    "Hosts found in {path} (wildcard entries are skipped; the file is "
                    "only read, never changed):"
                ).format(path=path)
            )
        )
        self.list = QListWidget()
        for c in self.candidates:
            item = QListWidgetItem(self._describe(c))
            item.setData(Qt.ItemDataRole.UserRole, c)
            if c.host and not c.exists:
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
                item.setCheckState(Qt.CheckState.Checked)
            else:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
            self.list.addItem(item)
        if not self.candidates:
            self.list.addItem(QListWidgetItem(self.tr("No importable Host entries found.")))
        lay.addWidget(self.list)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText(self.tr("Import"))
        buttons.accepted.connect(self.do_import)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.imported: list[Host] = []
        self.resize(560, 360)

    @staticmethod
    def _describe(c: ImportCandidate) -> str:
        if c.host is None:
            return QCoreApplication.translate(
                "ImportDialog", "{alias} — cannot import: {problem}"
            ).format(alias=c.alias, problem=c.problem)
        h = c.host
        text = f"{h.alias} → {h.user}@{h.hostname}:{h.port}"
        if c.exists:
            return QCoreApplication.translate(
                "ImportDialog", "{host}  (already in GPU Companion)"
            ).format(host=text)
        return text

    def checked(self) -> list[Host]:
        out = []
        for i in range(self.list.count()):
            item = self.list.item(i)
            c = item.data(Qt.ItemDataRole.UserRole)
            if (
                isinstance(c, ImportCandidate)
                and c.host
                and item.checkState() == Qt.CheckState.Checked
            ):
                out.append(c.host)
        return out

    def do_import(self) -> None:
        for host in self.checked():
            self.imported.append(self.ctx.registry.save_host(host))
        self.accept()


class HostsPage(EmptyStatePage):
    key, title, icon_name = "hosts", "Hosts", "hosts"  # the sidebar translates its own

    def __init__(self, ctx: Services, nav: Navigator, parent: QWidget | None = None) -> None:
        super().__init__(ctx, nav, parent)
        self.empty = EmptyState(
            "hosts",
            self.tr("No rented hosts yet"),
            self.tr(
                "Add the platform you rent from, then the host it gave you (host name, port and "
                "user from its console). Already use ~/.ssh/config? Import from it. “This "
                "computer” is always listed below for local GPUs. Rent on vast.ai or RunPod? Add "
                "a provider account, then Sync providers imports your instances."
            ),
            [
                (self.tr("Add platform"), self.add_platform),
                (self.tr("Add host"), self.add_host),
                (self.tr("Import from ~/.ssh/config"), self.import_config),
                (self.tr("Provider accounts…"), self.provider_accounts),
            ],
        )
        self.stack.addWidget(self.empty)

        content = QWidget()
        lay = QVBoxLayout(content)
        bar: list[QWidget] = []  # wraps onto a second line in a narrow window
        for label, slot, name in (
            (self.tr("Add platform"), self.add_platform, "addPlatform"),
            (self.tr("Add host"), self.add_host, "addHost"),
            (self.tr("Edit"), self.edit_selected, "edit"),
            (self.tr("Remove"), self.remove_selected, "remove"),
            (self.tr("Import from ~/.ssh/config"), self.import_config, "import"),
            (self.tr("Self-check"), self.self_check_selected, "selfCheck"),
            (self.tr("Test connection"), self.test_connection, "testConnection"),
            (self.tr("SSH options…"), self.ssh_options, "sshOptions"),
        ):
            b = QPushButton(label)
            b.setObjectName(name)
            b.clicked.connect(slot)
            bar.append(b)
        self.access = AccessActions(ctx, self)
        self.open_button = QPushButton(self.tr("Open"))
        self.open_button.setObjectName("open")
        self.open_menu = QMenu(self.open_button)
        self.open_menu.aboutToShow.connect(self._fill_open_menu)
        self.open_button.setMenu(self.open_menu)
        bar.append(self.open_button)
        lay.addWidget(button_bar(*bar))

        split = QSplitter(Qt.Orientation.Vertical)
        self.platform_model: RowTableModel[Platform] = RowTableModel(
            [
                (self.tr("Platform"), lambda p: p.name),
                (self.tr("Billed per"), lambda p: granularity_text(p.billing_granularity)),
                (self.tr("Currency"), lambda p: p.currency),
                (self.tr("Console"), lambda p: p.console_url),
            ]
        )
        self.platform_view = self._table(self.platform_model, "platforms")
        self.host_model: RowTableModel[Host] = RowTableModel(
            [
                (self.tr("Alias"), lambda h: h.alias),
                (self.tr("Address"), self._address),
                (self.tr("Platform"), self._platform_name),
                (self.tr("GPUs"), self._gpus),
                (self.tr("State"), self._state),
                (self.tr("Notes"), lambda h: h.notes),
            ]
        )
        self.host_view = self._table(self.host_model, "hosts")
        self.host_view.doubleClicked.connect(self.edit_selected)
        split.addWidget(self._titled(self.tr("Platforms"), self.platform_view))
        # the provider actions sit on the hosts' title row (the button row above is full)
        provider_buttons = []
        for label, slot, name in (
            (self.tr("Provider accounts…"), self.provider_accounts, "providerAccounts"),
            (self.tr("Sync providers"), self.sync_providers, "syncProviders"),
            (self.tr("Forgotten instances…"), self.forgotten_instances, "orphans"),
        ):
            b = QPushButton(label)
            b.setObjectName(name)
            b.clicked.connect(slot)
            provider_buttons.append(b)
        split.addWidget(self._titled(self.tr("Hosts"), self.host_view, provider_buttons))
        self.tunnels = TunnelsPanel(ctx, self.access)
        split.addWidget(self.tunnels)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 2)
        split.setStretchFactor(2, 2)
        self.host_view.selectionModel().selectionChanged.connect(
            lambda *_: self.tunnels.set_host(self._selected_host())
        )
        context_menu_on(self.host_view, self._host_at, self._fill_menu_for)
        lay.addWidget(split)
        self.connection_status = QLabel()
        self.connection_status.setObjectName("connectionStatus")
        self.connection_status.setTextFormat(Qt.TextFormat.PlainText)  # may quote the host
        self.connection_status.setWordWrap(True)
        lay.addWidget(self.connection_status)
        self.connection = HostConnection(ctx, self, self.connection_status)
        self._providers: ProviderActions | None = None
        self.stack.addWidget(content)
        self._platform_names: dict[int | None, str] = {}
        self._last: tuple[QTableView, RowTableModel] = (self.host_view, self.host_model)  # type: ignore[type-arg]
        for v, m in ((self.host_view, self.host_model), (self.platform_view, self.platform_model)):
            v.clicked.connect(lambda _i, v=v, m=m: setattr(self, "_last", (v, m)))
        self.refresh()

    def _table(self, model: RowTableModel, name: str) -> QTableView:  # type: ignore[type-arg]
        view = row_table(model, name)
        view.setAlternatingRowColors(True)
        return view

    @staticmethod
    def _titled(title: str, widget: QWidget, buttons: list[QPushButton] | None = None) -> QWidget:
        box = QWidget()
        lay = QVBoxLayout(box)
        lay.setContentsMargins(0, 0, 0, 0)
        bold = f"<b>{title}</b>"  # markup around a translated title, no words
        label = QLabel(bold)
        head = QHBoxLayout()
        head.addWidget(label)
        head.addStretch(1)
        for b in buttons or []:
            head.addWidget(b)
        lay.addLayout(head)
        lay.addWidget(widget)
        return box

    def _address(self, h: Host) -> str:
        return self.tr("this computer") if h.is_local else f"{h.user}@{h.hostname}:{h.port}"

    def _platform_name(self, h: Host) -> str:
        return "—" if h.is_local else self._platform_names.get(h.platform_id, "—")

    def _gpus(self, h: Host) -> str:
        if h.is_local:
            return self.tr("local nvidia-smi")
        return f"{h.gpu_count} × {h.gpu_model}" if h.gpu_count else (h.gpu_model or "—")

    @staticmethod
    def _state(h: Host) -> str:
        if h.is_local:
            return QCoreApplication.translate("HostsPage", "built in")
        return QCoreApplication.translate("HostsPage", STATE_WORDS.get(h.state, h.state))

    def refresh(self) -> None:
        platforms = self.ctx.registry.platforms()
        hosts = self.ctx.registry.hosts()
        self._platform_names = {p.id: p.name for p in platforms}
        self.platform_model.set_rows(platforms)
        self.host_model.set_rows([LOCAL_HOST, *hosts])
        shown = self.tunnels.host
        if shown is not None and any(h.id == shown.id for h in hosts):
            self.show_tunnels(next(h for h in hosts if h.id == shown.id))
        else:
            self.tunnels.set_host(None)
        self.stack.setCurrentIndex(1 if (platforms or hosts) else 0)

    def _selected(self) -> Host | Platform | None:
        """The selected row of the table the user touched last."""
        view, model = self._last
        rows = view.selectionModel().selectedRows()
        return model.row(rows[0].row()) if rows else None  # type: ignore[no-any-return]

    def add_platform(self) -> None:
        if PlatformDialog(self.ctx, None, self).exec():
            self.refresh()
            self.ctx.notifier.info(self.tr("Platform added."), source="hosts")

    def add_host(self) -> None:
        if HostDialog(self.ctx, None, self).exec():
            self.refresh()  # the registry asks for the ssh config sync itself
            self.ctx.notifier.info(self.tr("Host added."), source="hosts")

    def edit_selected(self) -> None:
        item = self._selected()
        if isinstance(item, Host) and not item.is_local:
            if HostDialog(self.ctx, item, self).exec():
                self.refresh()
        elif isinstance(item, Platform):
            if PlatformDialog(self.ctx, item, self).exec():
                self.refresh()

    def remove_selected(self) -> None:
        item = self._selected()
        if item is None or (isinstance(item, Host) and item.is_local):
            return
        name = item.alias if isinstance(item, Host) else item.name
        question = self.tr("Remove {name}? Its history is kept.").format(name=repr(name))
        answer = QMessageBox.question(self, self.tr("Remove"), question)
        if answer != QMessageBox.StandardButton.Yes:
            return
        try:
            if isinstance(item, Host):
                assert item.id is not None
                self.ctx.registry.delete_host(item.id)
            else:
                assert item.id is not None
                self.ctx.registry.delete_platform(item.id)
        except UserError as exc:
            QMessageBox.warning(self, self.tr("Cannot remove"), str(exc))
        self.refresh()

    def self_check_selected(self) -> None:
        item = self._selected()
        if isinstance(item, Host) and not item.is_local:
            from gpu_companion.ui.common.selfcheck_view import open_selfcheck

            open_selfcheck(self.ctx, item, self)

    def import_config(self) -> None:
        path = Path.home() / ".ssh" / "config"
        try:
            dialog = ImportDialog(self.ctx, path, self)
        except UserError as exc:
            QMessageBox.warning(self, self.tr("Import"), str(exc))
            return
        if dialog.exec():
            self.refresh()
            n = len(dialog.imported)  # a plain name: lupdate skips a call with a call in it
            self.ctx.notifier.info(
                QCoreApplication.translate(
                    "HostsPage", "Imported %n host(s) from {path}.", None, n
                ).format(path=path),
                source="hosts",
            )

    def _selected_host(self) -> Host | None:
        rows = self.host_view.selectionModel().selectedRows()
        return self.host_model.row(rows[0].row()) if rows else None

    def test_connection(self) -> None:
        host = self._selected_host()
        if host is None:
            self.connection_status.setText(self.tr("Select a host to test."))
            return
        self.connection.test(host)

    def ssh_options(self) -> None:
        host = self._selected_host()
        if host is None or host.is_local:
            self.connection_status.setText(self.tr("Select a rented host first."))
            return
        if SshOptionsDialog(self.ctx, host, self).exec():
            self.ctx.ssh_sync.request()  # per-host options are not announced by the registry

    # --- provider accounts, their sync and the instances they bill the app does not know --------

    def providers(self) -> ProviderActions:
        if self._providers is None:
            from gpu_companion.ui.hosts.providers import ProviderActions

            self._providers = ProviderActions(
                self.ctx, self.nav, self, self.connection_status.setText, self.refresh
            )
        return self._providers

    def provider_accounts(self) -> None:
        self.providers().open_accounts()

    def sync_providers(self) -> None:
        self.providers().sync()

    def forgotten_instances(self) -> None:
        self.providers().open_orphans()

    # --- everyday access: terminal, VS Code, tunnels ------------------------------------------

    def _host_at(self, pos: object) -> Host | None:
        index = self.host_view.indexAt(pos)  # type: ignore[arg-type]
        return self.host_model.row(index.row()) if index.isValid() else None

    def _fill_menu_for(self, menu: QMenu, host: Host) -> None:
        fill_open_menu(menu, self.access, host, self.show_tunnels)

    def _fill_open_menu(self) -> None:
        self.open_menu.clear()
        host = self._selected_host()
        if host is None:
            self.open_menu.addAction(self.tr("Select a host first")).setEnabled(False)
            return
        self._fill_menu_for(self.open_menu, host)

    def show_tunnels(self, host: Host) -> None:
        """Select `host` and show its tunnels (the tray and the fleet row come here)."""
        aliases = [h.alias for h in self.host_model.rows()]
        if host.alias in aliases:
            self.host_view.selectRow(aliases.index(host.alias))
        self.tunnels.set_host(host)
