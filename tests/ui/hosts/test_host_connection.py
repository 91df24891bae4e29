"""Test connection on the Hosts page against the real sshd: first contact, a changed host key
(refused until confirmed twice), and the per-host ssh options."""

from __future__ import annotations

import uuid

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMessageBox, QPushButton

from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.core.ssh.managed import get_options
from gpu_companion.ui.hosts.connection import SshOptionsDialog
from gpu_companion.ui.hosts.page import HostDialog

pytestmark = [pytest.mark.sshd, pytest.mark.keyring]


@pytest.fixture
def rented(ctx, keyring_backend, sshd):
    ctx.vault.backend = keyring_backend
    ctx.vault.service = f"gpu-companion-uitest-{uuid.uuid4().hex[:8]}"
    p = ctx.registry.save_platform(Platform("vast.ai"))
    host = ctx.registry.save_host(Host("gpu1", "127.0.0.1", sshd.port, sshd.user, platform_id=p.id))
    sshd.authorize(ctx.vault.generate("vast.ai").public_line)
    yield host
    for k in ctx.vault.keys():
        ctx.vault.delete(k.platform)


class Answers:
    """Answers the decision boxes in order by clicking the named button; records what was shown."""

    def __init__(self, *names):
        self.names = list(names)
        self.shown = []

    def __call__(self, box: QMessageBox):
        self.shown.append((box.objectName(), box.text()))
        name = self.names.pop(0)
        for b in box.buttons():
            cancel = box.standardButton(b) == QMessageBox.StandardButton.Cancel
            if b.objectName() == name or (name == "cancel" and cancel):
                return name
        raise AssertionError(f"no button {name} in {box.objectName()}")


def click_test(page, qtbot, host):
    page.host_view.selectRow([h.alias for h in page.host_model.rows()].index(host.alias))
    page.findChild(QPushButton, "testConnection").click()
    qtbot.waitUntil(lambda: not page.connection.busy, timeout=20000)


def test_first_contact_then_round_trip(window, ctx, rented, qtbot, monkeypatch):
    page = window.navigate("hosts")
    page.refresh()
    answers = Answers("cancel")
    monkeypatch.setattr(page.connection, "ask", answers)
    click_test(page, qtbot, rented)
    name, text = answers.shown[0]
    fp = ctx.sessions.known_keys(rented)  # nothing trusted after "Cancel"
    assert name == "hostKeyUnknown" and "SHA256:" in text and fp == {}

    answers = Answers("trust")
    monkeypatch.setattr(page.connection, "ask", answers)
    click_test(page, qtbot, rented)
    qtbot.waitUntil(lambda: "round trip" in page.connection_status.text(), timeout=20000)
    assert list(ctx.sessions.known_keys(rented)) == ["ssh-ed25519"]


def test_changed_key_needs_two_explicit_confirmations(
    window, ctx, rented, sshd, qtbot, monkeypatch
):
    page = window.navigate("hosts")
    page.refresh()
    monkeypatch.setattr(page.connection, "ask", Answers("trust"))
    click_test(page, qtbot, rented)
    qtbot.waitUntil(lambda: "round trip" in page.connection_status.text(), timeout=20000)
    before = ctx.sessions.known_keys(rented)["ssh-ed25519"].fingerprint
    sshd.regenerate_host_key()

    # "This is a new instance", then backing out at the confirmation: nothing changes
    answers = Answers("newInstance", "cancel")
    monkeypatch.setattr(page.connection, "ask", answers)
    click_test(page, qtbot, rented)
    assert [n for n, _ in answers.shown] == ["hostKeyChanged", "confirmReplace"]
    assert "new instance behind a recycled address" in answers.shown[0][1]
    assert before in answers.shown[0][1]
    assert "has changed" in page.connection_status.text()
    assert ctx.sessions.known_keys(rented)["ssh-ed25519"].fingerprint == before

    answers = Answers("newInstance", "replace")
    monkeypatch.setattr(page.connection, "ask", answers)
    click_test(page, qtbot, rented)
    qtbot.waitUntil(lambda: "round trip" in page.connection_status.text(), timeout=20000)
    assert ctx.sessions.known_keys(rented)["ssh-ed25519"].fingerprint != before


def test_a_missing_key_is_explained(window, ctx, qtbot, monkeypatch):
    host = ctx.registry.save_host(Host("orphan", "127.0.0.1", 22, "root"))
    page = window.navigate("hosts")
    page.refresh()
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    click_test(page, qtbot, host)
    assert shown and "no SSH key" in shown[0] and "Keys page" in page.connection_status.text()


def test_ssh_options_are_validated_and_stored(window, ctx, qtbot):
    host = ctx.registry.save_host(Host("gpu9", "10.0.0.9"))
    dialog = SshOptionsDialog(ctx, host, window)
    qtbot.addWidget(dialog)
    dialog.proxy_jump.setText("bastion\nProxyCommand id")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert not dialog.result() and "line breaks" in dialog.error.text()
    assert get_options(ctx.store, host.id).proxy_jump == ""
    dialog.proxy_jump.setText("me@bastion.example:2222")
    dialog.forwards[8888].setChecked(True)
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert dialog.result()
    opts = get_options(ctx.store, host.id)
    assert (opts.proxy_jump, opts.forwards) == ("me@bastion.example:2222", (8888,))


def click_in_modal_boxes(names: list[str], shown: list[str]) -> QTimer:
    """Clicks the named buttons of the real modal boxes as they open (no patched `ask`)."""
    timer = QTimer()

    def tick() -> None:
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox) or not names:
            return
        for b in box.buttons():
            cancel = box.standardButton(b) == QMessageBox.StandardButton.Cancel
            if b.objectName() == names[0] or (names[0] == "cancel" and cancel):
                shown.append(box.objectName())
                names.pop(0)
                b.click()
                return

    timer.timeout.connect(tick)
    timer.start(30)
    return timer


def test_new_instance_through_the_real_dialogs_reconnects(window, ctx, rented, sshd, qtbot):
    """The boxes as a user meets them: the clicked button used to be read after its box was
    deleted ("Internal C++ object (QPushButton) already deleted") and nothing was replaced."""
    page = window.navigate("hosts")
    page.refresh()
    shown: list[str] = []
    names = ["trust"]
    timer = click_in_modal_boxes(names, shown)
    click_test(page, qtbot, rented)
    qtbot.waitUntil(lambda: "round trip" in page.connection_status.text(), timeout=20000)
    before = ctx.sessions.known_keys(rented)["ssh-ed25519"].fingerprint
    sshd.regenerate_host_key()

    names += ["newInstance", "replace"]
    click_test(page, qtbot, rented)
    qtbot.waitUntil(lambda: "round trip" in page.connection_status.text(), timeout=20000)
    timer.stop()
    assert shown == ["hostKeyUnknown", "hostKeyChanged", "confirmReplace"]
    after = ctx.sessions.known_keys(rented)["ssh-ed25519"].fingerprint
    assert after != before and names == []


def test_edit_host_shows_and_forgets_the_trusted_key(window, ctx, rented, sshd, qtbot, monkeypatch):
    page = window.navigate("hosts")
    page.refresh()
    dialog = HostDialog(ctx, rented, page)
    qtbot.addWidget(dialog)
    assert (
        "None yet" in dialog.trusted_key.label.text() and not dialog.trusted_key.forget.isEnabled()
    )

    monkeypatch.setattr(page.connection, "ask", Answers("trust"))
    click_test(page, qtbot, rented)
    qtbot.waitUntil(lambda: "round trip" in page.connection_status.text(), timeout=20000)
    trusted = ctx.sessions.known_keys(rented)["ssh-ed25519"].fingerprint
    dialog = HostDialog(ctx, rented, page)
    qtbot.addWidget(dialog)
    assert dialog.trusted_key.label.text() == f"ssh-ed25519 {trusted}"
    assert dialog.trusted_key.forget.isEnabled()

    # a new instance behind the same address: forget the key in Edit host, then reconnect
    sshd.regenerate_host_key()
    answers = [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes]
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: answers.pop(0))
    dialog.trusted_key.forget.click()  # "No": nothing changes
    assert ctx.sessions.known_keys(rented)["ssh-ed25519"].fingerprint == trusted
    dialog.trusted_key.forget.click()
    assert ctx.sessions.known_keys(rented) == {}
    assert (
        "None yet" in dialog.trusted_key.label.text() and not dialog.trusted_key.forget.isEnabled()
    )

    answers_box = Answers("trust")
    monkeypatch.setattr(page.connection, "ask", answers_box)
    click_test(page, qtbot, rented)
    qtbot.waitUntil(lambda: "round trip" in page.connection_status.text(), timeout=20000)
    assert answers_box.shown[0][0] == "hostKeyUnknown"  # a first contact, with the new key
    new = ctx.sessions.known_keys(rented)["ssh-ed25519"].fingerprint
    assert new != trusted and new in answers_box.shown[0][1]


def test_the_local_host_and_a_new_host_have_no_key_row(ctx, qtbot):
    dialog = HostDialog(ctx, None)
    qtbot.addWidget(dialog)
    assert not hasattr(dialog, "trusted_key")
