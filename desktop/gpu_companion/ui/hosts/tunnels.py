"""The Tunnels panel of the Hosts page: the selected host's named tunnels with their state (up /
down / blocked / port in use), start, stop, open in browser, add and remove."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.hosts.registry import Host
from gpu_companion.ui.common.access import AccessActions
from gpu_companion.ui.common.models import RowTableModel, row_table
from gpu_companion.ui.common.widgets import form_error_label

if TYPE_CHECKING:  # the tunnel code (socket, json) loads with the first tunnel shown
    from gpu_companion.core.access.specs import TunnelSpec
    from gpu_companion.core.access.tunnel import TunnelStatus
    from gpu_companion.services import Services

# a tunnel's link states (core.access.tunnel), translated where the State column shows them
LINK_STATES = (
    QT_TRANSLATE_NOOP("TunnelsPanel", "up"),
    QT_TRANSLATE_NOOP("TunnelsPanel", "down"),
    QT_TRANSLATE_NOOP("TunnelsPanel", "blocked"),
)


@dataclass(frozen=True)
class TunnelRow:
    spec: TunnelSpec
    status: TunnelStatus | None
    starting: bool = False
    stopping: bool = False

    @property
    def state(self) -> str:
        """In English (tests and code compare it); `TunnelsPanel` translates it where shown."""
        if self.starting:
            return str(QT_TRANSLATE_NOOP("TunnelsPanel", "connecting…"))
        if self.stopping:
            return str(QT_TRANSLATE_NOOP("TunnelsPanel", "closing…"))
        if self.status is None or self.status.state == "stopped":
            return str(QT_TRANSLATE_NOOP("TunnelsPanel", "off"))
        if self.status.state == "up" and self.status.answers is False:
            return str(QT_TRANSLATE_NOOP("TunnelsPanel", "up, nothing answers"))
        return self.status.state

    @property
    def local(self) -> str:
        if self.status is None or self.status.state == "stopped":
            return str(self.spec.wanted_local)
        return f"127.0.0.1:{self.status.local_port}"

    @property
    def removable(self) -> bool:
        """One the user added: the presets always stay."""
        from gpu_companion.core.access.specs import PRESETS

        return self.spec not in PRESETS


class TunnelDialog(QDialog):
    """A custom tunnel: a name, the port on the host, and optionally a local port."""

    def __init__(self, ctx: Services, host: Host, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("New tunnel to {alias}").format(alias=host.alias))
        self.ctx, self.host = ctx, host
        form = QFormLayout()
        self.name = QLineEdit()
        self.name.setObjectName("tunnelName")
        self.name.setPlaceholderText(self.tr("e.g. Gradio"))
        self.remote = QLineEdit()
        self.remote.setObjectName("tunnelRemote")
        self.remote.setPlaceholderText(self.tr("port on the host, e.g. 7860"))
        self.local = QLineEdit()
        self.local.setObjectName("tunnelLocal")
        self.local.setPlaceholderText(self.tr("empty: the same port, or the next free one"))
        form.addRow(self.tr("Name"), self.name)
        form.addRow(self.tr("Remote port"), self.remote)
        form.addRow(self.tr("Local port"), self.local)
        self.error = form_error_label()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(self.error)
        lay.addWidget(buttons)
        self.saved: TunnelSpec | None = None

    def save(self) -> None:
        try:
            remote = self.remote.text().strip()
            local = self.local.text().strip()
            if not remote.isdigit() or (local and not local.isdigit()):
                raise ValidationError("port", self.tr("Ports are numbers from 1 to 65535."))
            assert self.host.id is not None
            from gpu_companion.core.access.specs import TunnelSpec

            spec = TunnelSpec(self.name.text(), int(remote), int(local or 0))
            self.saved = self.ctx.tunnels.book.save(self.host.id, spec)
        except ValidationError as exc:
            self.error.setText(exc.message)
            self.error.show()
            return
        self.accept()


class TunnelsPanel(QWidget):
    """Shows one host's tunnels; `set_host(None)` empties it."""

    def __init__(self, ctx: Services, actions: AccessActions, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("tunnelsPanel")
        self.ctx = ctx
        self.access = actions
        self.host: Host | None = None
        self.title = QLabel(self.tr("<b>Tunnels</b>"))
        self.model: RowTableModel[TunnelRow] = RowTableModel(
            [
                (self.tr("Tunnel"), lambda r: r.spec.name),
                (self.tr("Port on host"), lambda r: r.spec.remote_port),
                (self.tr("Local"), lambda r: r.local),
                (self.tr("State"), lambda r: QCoreApplication.translate("TunnelsPanel", r.state)),
                (self.tr("Note"), lambda r: r.status.message if r.status else ""),
            ],
            self,
        )
        self.view = row_table(self.model, "tunnels")
        self.view.doubleClicked.connect(lambda _i: self.start_or_open())
        self.buttons: dict[str, QPushButton] = {}
        bar = QHBoxLayout()
        for name, label, slot in (
            ("start", self.tr("Start"), self.start_selected),
            ("stop", self.tr("Stop"), self.stop_selected),
            ("browse", self.tr("Open in browser"), self.browse_selected),
            ("add", self.tr("Add tunnel…"), self.add_tunnel),
            ("removeTunnel", self.tr("Remove"), self.remove_selected),
        ):
            b = QPushButton(label)
            b.setObjectName(name)
            b.clicked.connect(slot)
            bar.addWidget(b)
            self.buttons[name] = b
        bar.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.title)
        lay.addWidget(self.view)
        lay.addLayout(bar)
        # tunnel threads emit it: queued, so the table is only touched on the GUI thread
        actions.status_changed.connect(self._on_status, Qt.ConnectionType.QueuedConnection)
        self.view.selectionModel().selectionChanged.connect(lambda *_: self._enable())
        self.set_host(None)

    def _on_status(self, _status: object) -> None:
        self.refresh()

    def set_host(self, host: Host | None) -> None:
        self.host = None if host is None or host.is_local else host
        if self.host is None:
            self.title.setText(self.tr("<b>Tunnels</b> — select a rented host"))
        else:
            self.title.setText(
                self.tr(
                    "<b>Tunnels of {alias}</b> — over the app's verified connection; "
                    "double-click to start or open"
                ).format(alias=self.host.alias)
            )
        self.refresh()

    def refresh(self) -> None:
        selected = self.selected()
        rows: list[TunnelRow] = []
        if self.host is not None and self.host.id is not None:
            statuses = {s.spec.name.lower(): s for s in self.ctx.tunnels.statuses(self.host.id)}
            for spec in self.ctx.tunnels.book.specs(self.host.id):
                key = spec.name.lower()
                row_key = (self.host.id, key)
                rows.append(TunnelRow(spec, statuses.pop(key, None),
                                      starting=row_key in self.access.starting,
                                      stopping=row_key in self.access.stopping))  # fmt: skip
            rows += [TunnelRow(s.spec, s) for s in statuses.values()]  # started from the CLI
        self.model.set_rows(rows)
        if selected is not None:
            names = [r.spec.name for r in rows]
            if selected.spec.name in names:
                self.view.selectRow(names.index(selected.spec.name))
        self._enable()

    def selected(self) -> TunnelRow | None:
        rows = self.view.selectionModel().selectedRows()
        return self.model.row(rows[0].row()) if rows else None

    def select(self, name: str) -> None:
        names = [r.spec.name.lower() for r in self.model.rows()]
        self.view.selectRow(names.index(name.lower()))

    def _enable(self) -> None:
        row = self.selected()
        status = row.status if row is not None else None
        running = status is not None and status.state != "stopped"
        again = running and status is not None and status.state == "blocked"  # key accepted
        idle = row is not None and not row.starting and not row.stopping
        self.buttons["start"].setEnabled(idle and (not running or again))
        self.buttons["stop"].setEnabled(running and idle)
        self.buttons["browse"].setEnabled(running and status is not None and status.answers is True)
        self.buttons["add"].setEnabled(self.host is not None)
        self.buttons["removeTunnel"].setEnabled(
            idle and row is not None and row.removable and not running
        )

    def start_or_open(self) -> None:
        row = self.selected()
        if row is None or row.starting or row.stopping:
            return
        if row.status is not None and row.status.state == "up":
            self.browse_selected()
        else:
            self.start_selected()

    def start_selected(self) -> None:
        row = self.selected()
        if row is not None and self.host is not None:
            self.access.start_tunnel(self.host, row.spec)
            self.refresh()

    def stop_selected(self) -> None:
        row = self.selected()
        if row is not None and self.host is not None:
            self.access.stop_tunnel(self.host, row.spec.name)
            self.refresh()

    def browse_selected(self) -> None:
        row = self.selected()
        if row is not None and row.status is not None:
            self.access.open_in_browser(row.status)

    def add_tunnel(self) -> TunnelDialog | None:
        if self.host is None:
            return None
        dialog = TunnelDialog(self.ctx, self.host, self)
        dialog.accepted.connect(self.refresh)
        dialog.open()
        return dialog

    def remove_selected(self) -> None:
        row = self.selected()
        if row is not None and self.host is not None and self.host.id is not None:
            self.ctx.tunnels.book.remove(self.host.id, row.spec.name)
            self.refresh()
