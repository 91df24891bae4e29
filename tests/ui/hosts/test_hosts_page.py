"""Drive the Hosts page as a user would: dialogs, field messages, import from ~/.ssh/config."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialog, QDialogButtonBox, QLineEdit, QMessageBox

from gpu_companion.ui.hosts.page import HostDialog, ImportDialog, PlatformDialog


def fill(dialog, **values):
    for name, value in values.items():
        widget = dialog.fields[name]
        if isinstance(widget, QLineEdit):
            widget.setText(value)
        else:
            widget.setCurrentText(value)


def press_save(qtbot, dialog):
    qtbot.mouseClick(
        dialog.buttons.button(QDialogButtonBox.StandardButton.Save), Qt.MouseButton.LeftButton
    )


def test_empty_state_offers_the_next_actions(window):
    page = window.navigate("hosts")
    assert page.stack.currentWidget() is page.empty
    labels = [b.text() for b in page.empty.buttons]
    assert labels == [
        "Add platform",
        "Add host",
        "Import from ~/.ssh/config",
        "Provider accounts…",
    ]


def test_add_a_platform_and_a_host(window, ctx, qtbot):
    page = window.navigate("hosts")
    pd = PlatformDialog(ctx, None, page)
    qtbot.addWidget(pd)
    fill(pd, name="vast.ai", console_url="https://cloud.vast.ai", currency="USD")
    press_save(qtbot, pd)
    assert pd.result() == QDialog.DialogCode.Accepted
    page.refresh()
    assert [p.name for p in page.platform_model.rows()] == ["vast.ai"]

    hd = HostDialog(ctx, None, page)
    qtbot.addWidget(hd)
    fill(
        hd,
        alias="gpu1",
        hostname="ssh4.vast.ai",
        port="41022",
        user="root",
        platform="vast.ai",
        gpu_model="RTX 4090",
    )
    hd.gpu_count.setValue(2)
    press_save(qtbot, hd)
    assert hd.result() == QDialog.DialogCode.Accepted, hd.error.text()
    page.refresh()
    rows = page.host_model.rows()
    assert [h.alias for h in rows] == ["local", "gpu1"]
    assert page.host_model.data(page.host_model.index(1, 1)) == "root@ssh4.vast.ai:41022"
    assert page.host_model.data(page.host_model.index(1, 2)) == "vast.ai"
    assert page.host_model.data(page.host_model.index(1, 3)) == "2 × RTX 4090"
    assert page.stack.currentIndex() == 1


def test_a_bad_port_is_refused_with_a_message_on_the_field(window, ctx, qtbot):
    hd = HostDialog(ctx, None, window)
    qtbot.addWidget(hd)
    fill(hd, alias="gpu1", hostname="10.0.0.5", port="70000", user="root")
    press_save(qtbot, hd)
    assert hd.result() != QDialog.DialogCode.Accepted
    assert hd.isVisible() or not hd.error.isHidden()
    assert "between 1 and 65535" in hd.error.text()
    assert "c53030" in hd.fields["port"].styleSheet()
    assert ctx.registry.hosts() == []


def test_an_alias_with_a_space_is_refused(window, ctx, qtbot):
    hd = HostDialog(ctx, None, window)
    qtbot.addWidget(hd)
    fill(hd, alias="my gpu", hostname="10.0.0.5", port="22", user="root")
    press_save(qtbot, hd)
    assert hd.result() != QDialog.DialogCode.Accepted
    assert "spaces" in hd.error.text()
    assert "c53030" in hd.fields["alias"].styleSheet()
    fill(hd, alias="my-gpu")
    press_save(qtbot, hd)
    assert hd.result() == QDialog.DialogCode.Accepted
    assert [h.alias for h in ctx.registry.hosts()] == ["my-gpu"]


def test_import_two_hosts_from_the_users_ssh_config(window, ctx, qtbot, isolated_home):
    config = isolated_home / ".ssh" / "config"
    text = (
        "Host *\n  ServerAliveInterval 20\n\n"
        "Host lambda-a100\n  HostName 192.0.2.10\n  User ubuntu\n\n"
        "Host runpod-4090\n  HostName 198.51.100.4\n  Port 22122\n  User root\n"
        "  IdentityFile ~/.ssh/id_ed25519\n"
    )
    config.write_text(text)
    page = window.navigate("hosts")
    dialog = ImportDialog(ctx, config, page)
    qtbot.addWidget(dialog)
    shown = [dialog.list.item(i).text() for i in range(dialog.list.count())]
    assert shown == ["lambda-a100 → ubuntu@192.0.2.10:22", "runpod-4090 → root@198.51.100.4:22122"]
    assert ctx.registry.hosts() == []  # nothing imported before the user confirms
    dialog.do_import()
    page.refresh()
    assert [(h.alias, h.hostname, h.port, h.user) for h in ctx.registry.hosts()] == [
        ("lambda-a100", "192.0.2.10", 22, "ubuntu"),
        ("runpod-4090", "198.51.100.4", 22122, "root"),
    ]
    assert config.read_text() == text
    again = ImportDialog(ctx, config, page)
    qtbot.addWidget(again)
    assert again.checked() == []  # both already present


def test_remove_asks_first_and_keeps_the_builtin_local_host(window, ctx, qtbot, monkeypatch):
    from gpu_companion.core.hosts.registry import Host

    ctx.registry.save_host(Host("gpu1", "10.0.0.1"))
    page = window.navigate("hosts")
    page.refresh()
    page.host_view.selectRow(1)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    page.remove_selected()
    assert ctx.registry.hosts() == []
    page.host_view.selectRow(0)  # "This computer" cannot be removed
    page.remove_selected()
    assert [h.alias for h in page.host_model.rows()] == ["local"]


def test_hosts_model_passes_the_model_tester(window, ctx, qtmodeltester):
    from gpu_companion.core.hosts.registry import Host

    ctx.registry.save_host(Host("gpu1", "10.0.0.1"))
    page = window.navigate("hosts")
    page.refresh()
    qtmodeltester.check(page.host_model)
    qtmodeltester.check(page.platform_model)


def test_add_host_button_opens_the_dialog(window, qtbot):
    page = window.navigate("hosts")
    seen = []

    def close_dialog():
        dialog = QApplication.activeModalWidget()
        seen.append(type(dialog).__name__)
        dialog.reject()

    QTimer.singleShot(50, close_dialog)
    page.empty.buttons[1].click()
    assert seen == ["HostDialog"]
