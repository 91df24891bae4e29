"""Drive the Keys page as a user would, against the real harness keyring and ssh-agent."""

from __future__ import annotations

import stat
import subprocess
import uuid

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMessageBox

from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.ui.keys.dialogs import GenerateKeyDialog, ImportKeyDialog

pytestmark = pytest.mark.keyring


@pytest.fixture
def keys_ctx(ctx, keyring_backend):
    ctx.vault.backend = keyring_backend
    ctx.vault.service = f"gpu-companion-uitest-{uuid.uuid4().hex[:8]}"
    p = ctx.registry.save_platform(Platform("vast.ai"))
    ctx.registry.save_platform(Platform("Lambda"))
    ctx.registry.save_host(Host("gpu1", "10.0.0.1", platform_id=p.id))
    yield ctx
    for k in ctx.vault.keys():
        ctx.vault.delete(k.platform)


def select(page, platform):
    page.refresh()
    row = [r.platform for r in page.model.rows()].index(platform)
    page.view.selectRow(row)
    assert page.selected().platform == platform


def wait_idle(qtbot, page):
    qtbot.waitUntil(lambda: not page.busy, timeout=20000)


def test_empty_state_until_a_platform_exists(window):
    page = window.navigate("keys")
    assert page.stack.currentWidget() is page.empty


def test_generate_copy_and_the_table(window, keys_ctx, qtbot):
    page = window.navigate("keys")
    select(page, "vast.ai")
    assert page.buttons["generate"].isEnabled() and not page.buttons["copy"].isEnabled()
    page.start_generate("vast.ai", "ed25519", None)
    assert page.busy and not page.buttons["generate"].isEnabled()  # off the GUI thread
    wait_idle(qtbot, page)
    key = keys_ctx.vault.key("vast.ai")
    row = next(r for r in page.model.rows() if r.platform == "vast.ai")
    assert row.key == key and row.hosts == ["gpu1"]
    cells = [page.model.data(page.model.index(1, c)) for c in range(page.model.columnCount())]
    assert cells[:3] == ["vast.ai", "ed25519 256", key.fingerprint]
    assert cells[4] == "gpu1"
    select(page, "vast.ai")
    page.buttons["copy"].click()
    assert QApplication.clipboard().text() == key.public_line
    assert "copied" in page.status.text()


def test_generate_dialog_checks_the_passphrase_twice(window, qtbot):
    dialog = GenerateKeyDialog("vast.ai", window)
    qtbot.addWidget(dialog)
    dialog.passphrase.setText("a")
    dialog.repeat.setText("b")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    assert "differ" in dialog.error.text() and not dialog.result()
    dialog.repeat.setText("a")
    dialog.kind.setCurrentIndex(1)
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    assert dialog.result() and dialog.values() == ("rsa", "a")


def test_import_from_a_file_and_a_bad_paste(window, keys_ctx, qtbot, tmp_path, monkeypatch):
    path = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)
    dialog = ImportKeyDialog("Lambda", window)
    qtbot.addWidget(dialog)
    dialog.load_file(path)
    assert dialog.values()[0] == path.read_text()
    page = window.navigate("keys")
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    page.start_import("Lambda", "not a key", None, "")
    wait_idle(qtbot, page)
    assert shown and "not a private key" in shown[0]
    assert keys_ctx.vault.key("Lambda") is None
    page.start_import("Lambda", dialog.values()[0], None, "")
    wait_idle(qtbot, page)
    assert keys_ctx.vault.key("Lambda") is not None


def test_rotate_delete_agent_and_export(window, keys_ctx, qtbot, tmp_path, ssh_agent, monkeypatch):
    page = window.navigate("keys")
    keys_ctx.vault.generate("vast.ai")
    select(page, "vast.ai")
    page.start_rotate("vast.ai", "ed25519", None)
    wait_idle(qtbot, page)
    assert "Hosts still set up with the old key: gpu1" in page.status.text()
    select(page, "vast.ai")
    assert page.buttons["forget"].isEnabled()

    page.start_load_into_agent("vast.ai", 120)
    wait_idle(qtbot, page)
    listed = subprocess.run(["ssh-add", "-l"], capture_output=True, text=True).stdout
    assert keys_ctx.vault.key("vast.ai").fingerprint in listed

    # export: the warning comes first, and "Cancel" writes nothing
    out = tmp_path / "exported"
    from gpu_companion.ui.keys import dialogs as key_dialogs

    monkeypatch.setattr(
        key_dialogs.QMessageBox, "warning", lambda *a, **k: QMessageBox.StandardButton.Cancel
    )
    page.export()
    assert not out.exists() and not page.busy
    monkeypatch.setattr(
        key_dialogs.QMessageBox, "warning", lambda *a, **k: QMessageBox.StandardButton.Yes
    )
    monkeypatch.setattr(key_dialogs.QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), ""))
    page.export()
    wait_idle(qtbot, page)
    assert stat.S_IMODE(out.stat().st_mode) == 0o600

    select(page, "vast.ai")
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    page.delete()
    wait_idle(qtbot, page)
    assert keys_ctx.vault.key("vast.ai") is None


def test_a_locked_keyring_shows_what_to_do(window, keys_ctx, qtbot, tmp_path, keyring_backend):
    from tests.harness.keyring_session import KeyringSession

    session = KeyringSession(tmp_path / "locked", password="right").start()
    try:
        keys_ctx.vault.backend = session.backend()
        keys_ctx.vault.check_keyring()
        session.restart_daemon("wrong")
        page = window.navigate("keys")
        select(page, "vast.ai")
        page.start_generate("vast.ai", "ed25519", None)
        wait_idle(qtbot, page)
        assert page.keyring_problem.isVisible()
        assert "locked" in page.keyring_problem.text() and "Unlock" in page.keyring_problem.text()
        assert keys_ctx.vault.key("vast.ai") is None
    finally:
        session.stop()
        keys_ctx.vault.backend = keyring_backend


def test_the_generate_button_opens_the_dialog(window, keys_ctx, qtbot):
    page = window.navigate("keys")
    select(page, "vast.ai")
    seen = []

    def close_dialog():
        dialog = QApplication.activeModalWidget()
        seen.append(type(dialog).__name__)
        dialog.reject()

    QTimer.singleShot(50, close_dialog)
    page.buttons["generate"].click()
    assert seen == ["GenerateKeyDialog"]
    assert keys_ctx.vault.key("vast.ai") is None


def test_keys_model_passes_the_model_tester(window, keys_ctx, qtmodeltester):
    keys_ctx.vault.generate("vast.ai")
    page = window.navigate("keys")
    page.refresh()
    qtmodeltester.check(page.model)
