"""The host's everyday doors for every place that shows a host (the Hosts page, the monitor's
fleet row, the tray's rental menu): open a terminal, VS Code, a tunnel, the browser."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QInputDialog,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.hosts.registry import Host
from gpu_companion.ui.common.worker import run_in_thread

if TYPE_CHECKING:
    from gpu_companion.core.access.specs import TunnelSpec
    from gpu_companion.core.access.tunnel import TunnelStatus
    from gpu_companion.services import Services


def is_jupyter(spec: TunnelSpec) -> bool:
    return spec.remote_port == 8888 or "jupyter" in spec.name.lower()


class AccessActions(QObject):
    """Runs the launches and tunnels of core/access for the UI; every outcome is said in
    `message` (and through the notifier), tunnel changes arrive on the GUI thread."""

    status_changed = Signal(object)  # TunnelStatus, re-posted from the tunnel threads
    message = Signal(str)

    def __init__(self, ctx: Services, parent: QWidget) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.parent_widget = parent
        self.last_message = ""
        self.starting: set[tuple[int, str]] = set()
        self.stopping: set[tuple[int, str]] = set()
        self._unsubscribe = ctx.tunnel_changes.subscribe(self.status_changed.emit)
        parent.destroyed.connect(lambda *_: self._unsubscribe())
        self.open_url: Callable[[str], object] = lambda url: QDesktopServices.openUrl(QUrl(url))
        self.ask_path: Callable[[Host, str], str | None] = self._ask_path
        self.browser_failed: NoBrowserDialog | None = None  # the last "no browser" dialog

    def _say(self, text: str, problem: bool = False) -> None:
        self.last_message = text
        self.message.emit(text)
        if problem:
            self.ctx.notifier.warning(text, source="access")
        else:
            self.ctx.notifier.info(text, source="access")

    # --- terminal and VS Code --------------------------------------------------------------

    def open_terminal(self, host: Host, tmux: bool = False) -> None:
        try:
            plan = self.ctx.launcher.plan_terminal(host.alias, tmux=tmux)
            self.ctx.launcher.launch(plan)
        except UserError as exc:
            self._say(str(exc), problem=True)
            return
        self._say(self.tr("Opened {what}.").format(what=plan.what))

    def _ask_path(self, host: Host, default: str) -> str | None:
        text, ok = QInputDialog.getText(
            self.parent_widget,
            self.tr("Open in VS Code"),
            self.tr("Folder on {host} to open in VS Code (Remote - SSH):").format(host=host.alias),
            text=default,
        )
        return text if ok else None

    def open_code(self, host: Host) -> None:
        prefs = self.ctx.launcher.prefs
        assert host.id is not None
        path = self.ask_path(host, prefs.code_path(host.id, host.user))
        if path is None:
            return
        try:
            plan = self.ctx.launcher.plan_code(host.alias, path)
            prefs.set_code_path(host.id, path)
            self.ctx.launcher.launch(plan)
        except UserError as exc:
            self._say(str(exc), problem=True)
            return
        self._say(self.tr("Opened {what}.").format(what=plan.what))

    # --- tunnels ---------------------------------------------------------------------------

    def start_tunnel(self, host: Host, spec: TunnelSpec) -> None:
        """Connect off the GUI thread; the outcome is said when it is known."""
        key = (host.id or 0, spec.name.lower())
        if key in self.starting:
            return
        if key in self.stopping:  # its link may still be closing: start it once it is closed
            self._say(self.tr("The {name} tunnel to {host} is still closing; start it again in a "
                              "moment.").format(name=spec.name, host=host.alias))  # fmt: skip
            return
        self.starting.add(key)

        def done(status: TunnelStatus) -> None:
            self.starting.discard(key)
            if status.message:
                said = self.tr("Tunnel {name} on {host}: {url} {note}")
            else:
                said = self.tr("Tunnel {name} on {host}: {url}")
            self._say(said.format(name=spec.name, host=host.alias, url=status.url,
                                  note=status.message))  # fmt: skip
            self.status_changed.emit(status)

        def failed(exc: Exception) -> None:
            self.starting.discard(key)
            if isinstance(exc, UserError):
                text = str(exc)
            else:
                text = self.tr("Unexpected error: {error}").format(error=exc)
            self._say(self.tr("The {name} tunnel to {host} did not start: {error}").format(
                name=spec.name, host=host.alias, error=text), True)  # fmt: skip
            self.status_changed.emit(None)

        run_in_thread(self.ctx.tunnels.start, host, spec, on_result=done, on_error=failed)

    def stop_tunnel(self, host: Host, name: str) -> None:
        """Close off the GUI thread: the tunnel's threads and its SSH link may take seconds."""
        assert host.id is not None
        key = (host.id, name.lower())
        if key in self.stopping:
            return
        self.stopping.add(key)

        def done(_result: object = None) -> None:
            self.stopping.discard(key)
            self._say(self.tr("Tunnel {name} on {host} closed.").format(name=name, host=host.alias))
            self.status_changed.emit(None)

        def failed(exc: Exception) -> None:
            self.stopping.discard(key)
            self._say(self.tr("The {name} tunnel to {host} did not close cleanly: {error}").format(
                name=name, host=host.alias, error=exc), True)  # fmt: skip
            self.status_changed.emit(None)

        run_in_thread(self.ctx.tunnels.stop, host.id, name, on_result=done, on_error=failed)

    def open_in_browser(self, status: TunnelStatus) -> None:
        """The tunnel's page; for Jupyter the URL with its token, read from the host."""
        tunnel = self.ctx.tunnels.tunnel(status.host_id, status.spec.name)
        client = tunnel.link.client() if tunnel is not None else None
        if client is None or not is_jupyter(status.spec):
            self.browse(status.url)
            return
        from gpu_companion.core.access.jupyter import jupyter_url

        def opened(url: str | None) -> None:
            self.browse(url or status.url)

        run_in_thread(
            jupyter_url,
            client,
            status.spec.remote_port,
            status.local_port,
            on_result=opened,
            on_error=lambda _exc: self.browse(status.url),
        )

    def browse(self, url: str) -> bool:
        """Open `url` in the default browser; when none opens (no browser set, QDesktopServices
        answers False) say so, with the URL to copy and what to set."""
        if self.open_url(url) is not False:
            return True
        self._say(self.tr("No web browser opened for {url}: copy the address into a browser.")
                  .format(url=url), True)  # fmt: skip
        if self.browser_failed is not None:  # one at a time: the newest address
            self.browser_failed.close()
            self.browser_failed.deleteLater()
        self.browser_failed = NoBrowserDialog(url, self.parent_widget)
        self.browser_failed.open()
        return False


class NoBrowserDialog(QDialog):
    """Says that no browser opened, with the address to copy and how to set a default one."""

    def __init__(self, url: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("noBrowserDialog")
        self.setWindowTitle(self.tr("No web browser opened"))
        text = QLabel(
            self.tr(
                "The system did not open a web browser: no default browser seems to be set. Copy "
                "the address below into a browser, or set a default web browser in your "
                "desktop's settings (on Linux for example <code>xdg-settings set "
                "default-web-browser firefox.desktop</code>) and try again."
            )
        )
        text.setWordWrap(True)
        text.setTextFormat(Qt.TextFormat.RichText)
        self.url = QLineEdit(url)
        self.url.setObjectName("browserUrl")
        self.url.setReadOnly(True)
        self.url.selectAll()
        self.copy = QPushButton(self.tr("Copy"))
        self.copy.setObjectName("copyUrl")
        self.copy.clicked.connect(self.copy_url)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.copy, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(text)
        lay.addWidget(self.url)
        lay.addWidget(buttons)

    def copy_url(self) -> None:
        QGuiApplication.clipboard().setText(self.url.text())
        self.copy.setText(self.tr("Copied"))


def fill_open_menu(
    menu: QMenu,
    actions: AccessActions,
    host: Host,
    show_tunnels: Callable[[Host], None] | None = None,
) -> None:
    """Terminal, tmux terminal, VS Code, one entry per tunnel (start or open), and the panel."""
    menu.setObjectName(f"openMenu-{host.alias}")
    if host.is_local:
        menu.addAction(
            QCoreApplication.translate("AccessMenu", "Nothing to open on this computer")
        ).setEnabled(False)
        return
    ctx = actions.ctx
    tmux = ctx.launcher.prefs.tmux_session
    add = _adder(menu)
    add(
        QCoreApplication.translate("AccessMenu", "Open terminal"),
        "openTerminal",
        lambda: actions.open_terminal(host),
    )
    add(
        QCoreApplication.translate("AccessMenu", "Open terminal in tmux “{session}”").format(
            session=tmux
        ),
        "openTmux",
        lambda: actions.open_terminal(host, True),
    )
    add(
        QCoreApplication.translate("AccessMenu", "Open in VS Code…"),
        "openCode",
        lambda: actions.open_code(host),
    )
    menu.addSeparator()
    assert host.id is not None
    running = {s.spec.name.lower(): s for s in ctx.tunnels.statuses(host.id)}
    for spec in ctx.tunnels.book.specs(host.id):
        status = running.get(spec.name.lower())
        if (host.id, spec.name.lower()) in actions.stopping:
            menu.addAction(
                QCoreApplication.translate("AccessMenu", "{name}: tunnel closing…").format(
                    name=spec.name
                )
            ).setEnabled(False)
        elif status is not None and status.state == "up" and status.answers is not True:
            menu.addAction(
                QCoreApplication.translate(
                    "AccessMenu",
                    "{name}: tunnel up on 127.0.0.1:{local}, nothing answers on {remote} yet",
                ).format(name=spec.name, local=status.local_port, remote=spec.remote_port)
            ).setEnabled(False)
        elif status is not None and status.state == "up":
            add(
                QCoreApplication.translate(
                    "AccessMenu", "Open {name} in browser (127.0.0.1:{local})"
                ).format(name=spec.name, local=status.local_port),
                f"browse-{spec.remote_port}",
                functools.partial(actions.open_in_browser, status),
            )
        else:
            add(
                QCoreApplication.translate("AccessMenu", "Tunnel {tunnel}").format(
                    tunnel=spec.describe()
                ),
                f"tunnel-{spec.remote_port}",
                functools.partial(actions.start_tunnel, host, spec),
            )
    if show_tunnels is not None:
        menu.addSeparator()
        add(
            QCoreApplication.translate("AccessMenu", "Tunnels…"),
            "showTunnels",
            lambda: show_tunnels(host),
        )


def _adder(menu: QMenu) -> Callable[[str, str, Callable[[], Any]], None]:
    def add(text: str, name: str, slot: Callable[[], Any]) -> None:
        action = menu.addAction(text)
        action.setObjectName(name)
        action.triggered.connect(lambda _checked=False: slot())

    return add


def context_menu_on(view: QWidget, host_at: Callable[[Any], Host | None], fill: Callable) -> None:  # type: ignore[type-arg]
    """A right-click menu on a table row: `host_at(pos)` finds the row's host."""
    view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)

    def show(pos: Any) -> None:
        host = host_at(pos)
        if host is None:
            return
        menu = QMenu(view)
        fill(menu, host)
        view.last_menu = menu  # type: ignore[attr-defined]  # tests read what it offered
        menu.popup(view.mapToGlobal(pos))

    view.customContextMenuRequested.connect(show)
