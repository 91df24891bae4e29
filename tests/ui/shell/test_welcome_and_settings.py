"""First run: the welcome dialog once, its environment check; Settings: start at login, check."""

from __future__ import annotations

import shutil

from keyring.backends import fail

from gpu_companion.core.system.envcheck import OsInfo
from gpu_companion.ui.shell.welcome import WELCOME_SETTING, WelcomeDialog, show_welcome_once
from tests.conftest import missing_component

DEBIAN = OsInfo("linux", ("debian",), "Debian")


def only_ssh_on_path(tmp_path):
    ssh = shutil.which("ssh")
    if ssh is None:
        missing_component("ssh is not installed (Debian: openssh-client)")
    d = tmp_path / "bin"
    d.mkdir()
    (d / "ssh").symlink_to(ssh)
    return str(d)


def test_welcome_shows_once(window, ctx, qtbot):
    first = show_welcome_once(ctx, window)
    assert first is not None and first.isVisible()
    assert ctx.store.get_setting(WELCOME_SETTING) == "1"
    qtbot.waitUntil(lambda: not first.checking, timeout=15000)
    first.reject()
    assert show_welcome_once(ctx, window) is None


def test_check_lists_what_is_missing_and_how_to_install_it(window, ctx, qtbot, tmp_path):
    dialog = WelcomeDialog(
        ctx,
        window,
        check_kwargs={
            "path": only_ssh_on_path(tmp_path),
            "os_info": DEBIAN,
            "backend": fail.Keyring(),
        },
    )
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitUntil(lambda: not dialog.checking, timeout=15000)
    assert set(dialog.results) == {"keyring", "ssh", "ssh-agent", "rsync"}
    assert dialog.results["ssh"].ok
    mark, _name, text = dialog.rows["rsync"]
    assert mark.text() == "✘"
    assert "sudo apt install rsync" in text.text()
    assert "sudo apt install gnome-keyring" in dialog.rows["keyring"][2].text()
    assert dialog.status.text() == (
        "3 things to fix: System keyring, ssh-agent, rsync. The rest of the app works meanwhile."
    )
    # check again reuses the rows
    dialog.recheck_button.click()
    qtbot.waitUntil(lambda: not dialog.checking, timeout=15000)
    assert len(dialog.rows) == 4


def test_wizard_button_opens_the_wizard_and_closes(window, ctx, qtbot, tmp_path):
    window.navigate("settings")
    dialog = WelcomeDialog(ctx, window, check_kwargs={"path": str(tmp_path)})
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.wizard_button.click()
    assert not dialog.isVisible()
    from gpu_companion.ui.wizard import FirstRentalWizard

    assert isinstance(window.wizard, FirstRentalWizard) and window.wizard.isVisible()
    window.wizard.reject()
    assert window.current_key() == "hosts"  # where the wizard's host shows afterwards
    qtbot.waitUntil(lambda: not dialog.checking, timeout=15000)


def test_hosts_button_goes_to_hosts(window, ctx, qtbot, tmp_path):
    window.navigate("settings")
    dialog = WelcomeDialog(ctx, window, check_kwargs={"path": str(tmp_path)})
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.hosts_button.click()
    assert window.current_key() == "hosts" and not dialog.isVisible()
    qtbot.waitUntil(lambda: not dialog.checking, timeout=15000)


def test_start_at_login_writes_and_removes_the_autostart_entry(window, isolated_home):
    page = window.navigate("settings")
    entry = isolated_home / ".config" / "autostart" / "gpu-companion.desktop"
    assert not page.start_at_login.isChecked()
    page.start_at_login.setChecked(True)
    assert entry.exists() and "--background" in entry.read_text()
    assert page.autostart_note.text() == f"Entry: {entry}"
    page.start_at_login.setChecked(False)
    assert not entry.exists()
    assert page.autostart_note.text() == f"Would be written to {entry}"


def test_start_at_login_follows_an_entry_removed_by_hand(window, isolated_home):
    page = window.navigate("settings")
    page.start_at_login.setChecked(True)
    (isolated_home / ".config" / "autostart" / "gpu-companion.desktop").unlink()
    window.navigate("hosts")
    window.navigate("settings")
    assert not page.start_at_login.isChecked()


def test_start_at_login_failure_is_explained_and_nothing_changes(window, isolated_home, qtbot):
    (isolated_home / ".config" / "autostart").write_text("not a folder")  # blocks the entry
    page = window.navigate("settings")
    page.start_at_login.setChecked(True)
    assert not page.start_at_login.isChecked()
    qtbot.waitUntil(lambda: len(window.banners.banners()) == 1)
    text = window.banners.banners()[0].label.text()
    assert text.startswith("Could not change start at login")
    assert (isolated_home / ".config" / "autostart").read_text() == "not a folder"


def test_settings_opens_the_environment_check(window, qtbot):
    page = window.navigate("settings")
    dialog = page.open_check()
    assert dialog.isVisible()
    qtbot.waitUntil(lambda: not dialog.checking, timeout=15000)
    assert {"ssh", "rsync", "ssh-agent", "keyring"} == set(dialog.results)
    dialog.reject()


def test_agent_row_says_what_really_runs(window, ctx, qtbot, monkeypatch):
    """The issue saw ssh-agent ticked as found while SSH_AUTH_SOCK was unset: the row now names
    the app's own agent (started as run_gui starts it) and the session's, as they are."""
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    ctx.start()
    dialog = WelcomeDialog(ctx, window, check_kwargs={"os_info": DEBIAN})
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: not dialog.checking, timeout=15000)
    agent = dialog.results["ssh-agent"]
    assert agent.ok and "GPU Companion's agent runs with 0 key(s)" in agent.detail
    assert "SSH_AUTH_SOCK is not set" in dialog.rows["ssh-agent"][2].text()
    ctx.agent.stop()  # the agent died while the app runs: a problem, said so
    dialog.recheck_button.click()
    qtbot.waitUntil(lambda: not dialog.checking, timeout=15000)
    assert not dialog.results["ssh-agent"].ok
    assert dialog.rows["ssh-agent"][0].text() == "✘"


def test_every_check_text_is_shown_whole(window, ctx, qtbot, monkeypatch):
    """Long wrapped details (a missing keyring's fix, the two agents) are not cut off."""
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)  # the longest ssh-agent text
    # opened as the app opens it, over the window; no keyring: its long fix is shown too
    dialog = WelcomeDialog(ctx, window, window, check_kwargs={"backend": fail.Keyring()})
    dialog.open()
    qtbot.waitUntil(lambda: not dialog.checking, timeout=15000)
    qtbot.wait(50)  # the resize after the last row
    for name, (_mark, _label, text) in dialog.rows.items():
        needed = text.heightForWidth(text.width())
        assert text.height() >= needed, f"{name}: {text.height()} px of {needed}"
        bottom = text.mapTo(dialog, text.rect().bottomLeft()).y()
        assert bottom <= dialog.height(), f"{name}: ends at {bottom} of {dialog.height()} px"
        assert text.visibleRegion().boundingRect().height() >= needed, name
    dialog.reject()
