"""The host's doors in the window: the Hosts page's Open menu and Tunnels panel, the monitor's
fleet row menu and the tray's rental menu, with recording stand-ins for the terminal and VS Code
and, for tunnels, the harness sshd and a real HTTP server on the host."""

from __future__ import annotations

import urllib.request
import uuid
from datetime import timezone

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QMenu

from gpu_companion.core.access.specs import TunnelBook, TunnelSpec
from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.core.ssh.connection import ConnectionProblem
from gpu_companion.core.ssh.managed import entries_from_registry
from gpu_companion.ui.shell.build import _fill_host_menu
from gpu_companion.ui.shell.tray import Tray
from gpu_companion.ui.shell.tray_model import TrayModel
from tests.harness.launchers import RecordingLaunchers
from tests.harness.util import free_port, port_open, wait_for


@pytest.fixture
def launchers(tmp_path, monkeypatch):
    stand_ins = RecordingLaunchers(tmp_path / "launchers")
    for k, v in stand_ins.env.items():
        monkeypatch.setenv(k, v)
    return stand_ins


@pytest.fixture
def gpu1(ctx):
    p = ctx.registry.save_platform(Platform("vast.ai", "", "second", "USD"))
    return ctx.registry.save_host(Host("gpu1", "203.0.113.7", 41022, "root", p.id))


def write_ssh_config(ctx):
    ctx.ssh_config.write(entries_from_registry(ctx.registry, ctx.vault))


def menu_actions(menu: QMenu) -> dict[str, object]:
    return {a.objectName(): a for a in menu.actions() if a.objectName()}


def hosts_page(window, alias):
    page = window.navigate("hosts")
    page.refresh()
    page.host_view.selectRow([h.alias for h in page.host_model.rows()].index(alias))
    return page


def test_open_menu_without_the_ssh_config_says_how_and_launches_nothing(
    window, ctx, gpu1, launchers
):
    page = hosts_page(window, "gpu1")
    page.open_menu.aboutToShow.emit()
    actions = menu_actions(page.open_menu)
    assert list(actions)[:3] == ["openTerminal", "openTmux", "openCode"]
    actions["openTerminal"].trigger()
    assert "`ssh gpu1` does not work in a terminal yet" in page.access.last_message
    assert "gpu-companion ssh-config --write" in page.access.last_message
    assert launchers.launches() == []


def test_open_menu_launches_terminal_tmux_and_code(window, ctx, gpu1, launchers):
    write_ssh_config(ctx)
    ctx.launcher.prefs.tmux_session = "train"
    page = hosts_page(window, "gpu1")
    page.open_menu.aboutToShow.emit()
    actions = menu_actions(page.open_menu)
    assert actions["openTmux"].text() == "Open terminal in tmux “train”"
    actions["openTerminal"].trigger()
    terminal = str(launchers.bin_dir / "x-terminal-emulator")
    assert launchers.wait(1)[0] == [terminal, "-e", "ssh", "gpu1"]
    actions["openTmux"].trigger()
    assert launchers.wait(2)[1][:5] == [terminal, "-e", "ssh", "-t", "gpu1"]
    assert "tmux new-session -A -s train;" in launchers.launches()[1][5]

    asked = []
    page.access.ask_path = lambda host, default: asked.append(default) or "/workspace/run 1"
    actions["openCode"].trigger()
    code = str(launchers.bin_dir / "code")
    assert launchers.wait(3)[2] == [code, "--remote", "ssh-remote+gpu1", "/workspace/run 1"]
    assert asked == ["/root"]
    assert ctx.launcher.prefs.code_path(gpu1.id, "root") == "/workspace/run 1"  # remembered
    assert page.access.last_message == "Opened VS Code on gpu1:/workspace/run 1."


def test_the_chosen_terminal_setting_is_used(window, ctx, gpu1, launchers):
    write_ssh_config(ctx)
    launchers.add("konsole")
    settings = window.navigate("settings")
    settings.terminal.setCurrentIndex(settings.terminal.findData("konsole"))
    assert ctx.launcher.prefs.terminal == "konsole"
    settings.tmux_session.setText("bad name")
    settings.tmux_session.editingFinished.emit()
    assert "Not saved" in settings.tmux_note.text() and ctx.launcher.prefs.tmux_session == "main"
    page = hosts_page(window, "gpu1")
    page.access.open_terminal(gpu1)
    assert launchers.wait(1)[0] == [str(launchers.bin_dir / "konsole"), "-e", "ssh", "gpu1"]


@pytest.mark.qt_log_ignore("This plugin does not support")  # the popup, offscreen
def test_fleet_row_menu_offers_the_same_doors(window, ctx, gpu1, launchers, qtbot):
    write_ssh_config(ctx)
    page = window.navigate("monitor")
    page.fleet_model.set_aliases(["local", "gpu1"])
    page.fleet_model.flush()
    view = page.fleet_view
    view.customContextMenuRequested.emit(view.visualRect(page.fleet_model.index(1, 0)).center())
    actions = menu_actions(view.last_menu)
    assert {"openTerminal", "openTmux", "openCode", "tunnel-8888", "showTunnels"} <= set(actions)
    actions["openTerminal"].trigger()
    assert launchers.wait(1)[0][-2:] == ["ssh", "gpu1"]
    view.last_menu.close()
    actions["showTunnels"].trigger()
    assert window.current_key() == "hosts"
    assert window.pages["hosts"].tunnels.host.alias == "gpu1"
    view.customContextMenuRequested.emit(QPoint(-5, -5))  # not on a row: no menu


@pytest.mark.qt_log_ignore("This plugin does not support raise")  # bring_forward, offscreen
def test_tray_rental_menu_has_the_host_doors(window, ctx, gpu1, launchers, manual_clock, qtbot):
    write_ssh_config(ctx)
    ctx.ledger.clock = manual_clock
    ctx.ledger.tz = timezone.utc
    ctx.ledger.start_rental(gpu1.platform_id, "2.40", host_id=gpu1.id)
    tray = Tray(
        lambda: None,
        lambda: None,
        lambda m: None,
        available=False,
        model=TrayModel(ctx.ledger, ctx.budgets),
        fill_host_menu=lambda menu, alias: _fill_host_menu(window, menu, alias),
    )
    try:
        qtbot.waitUntil(lambda: not tray.busy(), timeout=10000)  # read off the GUI thread
        texts = [a.text() for a in tray.actions() if a.text()]
        assert texts[2:4] == ["Open the monitor", "Release checklist"]
        assert texts[4:7] == ["Open terminal", "Open terminal in tmux “main”", "Open in VS Code…"]
        assert "Tunnel Jupyter (8888)" in texts and "Tunnels…" in texts
        {a.text(): a for a in tray.actions()}["Open terminal"].trigger()
        assert launchers.wait(1)[0][-2:] == ["ssh", "gpu1"]
        {a.text(): a for a in tray.actions()}["Tunnels…"].trigger()
        assert window.current_key() == "hosts"
    finally:
        tray.hide()


def test_pasted_forwards_become_the_hosts_tunnels(ctx, qtbot):
    from gpu_companion.ui.wizard.services import WizardServices
    from tests.ui.wizard.test_wizard import _walk_to_connection, _wizard

    wizard = _wizard(ctx, qtbot, WizardServices())
    _walk_to_connection(
        wizard, qtbot, "ssh -p 2222 root@1.2.3.4 -L 8080:localhost:8080 -L 16006:localhost:6006"
    )
    note = wizard.connection_page.paste_note.text()
    assert "the -L port forwards become this host's tunnels" in note
    host = ctx.registry.host("gpu1")
    assert TunnelBook(ctx.store).saved(host.id) == [
        TunnelSpec("Port 8080", 8080),
        TunnelSpec("Port 6006", 6006, 16006),
    ]


# --- tunnels against the harness host ------------------------------------------------------


@pytest.fixture
def rented(ctx, keyring_backend, sshd):
    ctx.vault.backend = keyring_backend
    ctx.vault.service = f"gpu-companion-uitest-{uuid.uuid4().hex[:8]}"
    p = ctx.registry.save_platform(Platform("vast.ai"))
    host = ctx.registry.save_host(Host("gpu1", "127.0.0.1", sshd.port, sshd.user, platform_id=p.id))
    sshd.authorize(ctx.vault.generate("vast.ai").public_line)
    with pytest.raises(ConnectionProblem) as first:
        ctx.sessions.connect(host)
    ctx.sessions.trust_host_key(host, first.value.key)
    yield host
    for k in ctx.vault.keys():
        ctx.vault.delete(k.platform)


@pytest.fixture
def web(tmp_path):
    import subprocess
    import sys

    root = tmp_path / "served"
    root.mkdir()
    (root / "index.html").write_text("hello from the host\n")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_for(lambda: port_open(port), 15, "http.server")
    yield port
    proc.terminate()
    proc.wait(10)


@pytest.mark.sshd
@pytest.mark.keyring
def test_tunnels_panel_adds_starts_opens_and_stops(window, ctx, rented, web, qtbot):
    page = hosts_page(window, "gpu1")
    panel = page.tunnels
    assert [r.spec.name for r in panel.model.rows()] == [
        "Jupyter",
        "TensorBoard",
        "vLLM / OpenAI API",
    ]
    dialog = panel.add_tunnel()
    dialog.name.setText("Web")
    dialog.remote.setText("x")
    dialog.save()
    assert dialog.error.text() == "Ports are numbers from 1 to 65535." and dialog.isVisible()
    dialog.remote.setText(str(web))
    dialog.save()
    assert not dialog.isVisible()
    panel.select("Web")
    assert panel.buttons["start"].isEnabled() and not panel.buttons["browse"].isEnabled()
    panel.buttons["start"].click()
    qtbot.waitUntil(lambda: panel.selected().state == "up", timeout=20000)
    row = panel.selected()
    # the server holds the same port number locally (the harness host is this machine)
    assert row.status.local_port != web and "is in use; using" in row.status.message
    with urllib.request.urlopen(row.status.url, timeout=20) as r:
        assert r.read().decode() == "hello from the host\n"
    qtbot.waitUntil(lambda: panel.buttons["browse"].isEnabled(), timeout=20000)
    opened = []
    page.access.open_url = opened.append
    panel.buttons["browse"].click()
    assert opened == [row.status.url]
    page.open_menu.aboutToShow.emit()
    assert f"browse-{web}" in menu_actions(page.open_menu)  # the menu now opens it
    panel.buttons["stop"].click()  # closes off the GUI thread
    assert panel.selected().state == "closing…" and not panel.buttons["start"].isEnabled()
    page.open_menu.aboutToShow.emit()
    closing = [a for a in page.open_menu.actions() if a.text() == "Web: tunnel closing…"]
    assert len(closing) == 1 and not closing[0].isEnabled()
    page.access.start_tunnel(ctx.registry.host("gpu1"), row.spec)  # e.g. from the tray, meanwhile
    assert "still closing" in page.access.last_message
    qtbot.waitUntil(lambda: panel.selected().state == "off", timeout=10000)
    assert not port_open(row.status.local_port) and "Tunnel Web on gpu1 closed." in (
        page.access.last_message
    )
    panel.buttons["removeTunnel"].click()
    assert "Web" not in [r.spec.name for r in panel.model.rows()]


@pytest.mark.sshd
@pytest.mark.keyring
def test_a_changed_host_key_is_said_in_the_panel(window, ctx, rented, web, sshd, qtbot):
    sshd.regenerate_host_key()
    page = hosts_page(window, "gpu1")
    page.open_menu.aboutToShow.emit()
    menu_actions(page.open_menu)["tunnel-8888"].trigger()
    qtbot.waitUntil(lambda: "did not start" in page.access.last_message, timeout=20000)
    assert "The host key of gpu1" in page.access.last_message
    assert "new instance behind a recycled address" in page.access.last_message
    assert page.tunnels.model.rows()[0].state == "off"
    assert ctx.tunnels.statuses() == []


@pytest.mark.sshd
@pytest.mark.keyring
def test_open_in_browser_gives_jupyter_its_token_from_the_host(
    window, ctx, rented, web, standin, qtbot
):
    fake = standin.bin_dir / "jupyter"  # first on the sessions' PATH, where a real one would be
    fake.write_text(f'#!/bin/sh\necho \'{{"port": {web}, "token": "s3cr3t", "base_url": "/"}}\'\n')
    fake.chmod(0o755)
    ctx.tunnels.book.save(rented.id, TunnelSpec("Jupyter", web, free_port()))
    page = hosts_page(window, "gpu1")
    panel = page.tunnels
    assert [r.spec.name for r in panel.model.rows()].count("Jupyter") == 1
    panel.select("Jupyter")
    panel.buttons["start"].click()
    qtbot.waitUntil(lambda: panel.buttons["browse"].isEnabled(), timeout=20000)
    opened = []
    page.access.open_url = opened.append
    panel.buttons["browse"].click()
    qtbot.waitUntil(lambda: bool(opened), timeout=20000)
    local = panel.selected().status.local_port
    assert opened == [f"http://127.0.0.1:{local}/?token=s3cr3t"]
