"""Settings → "When you are away": a channel added as a user would (the dialog, a token typed
into a password field and kept in the harness keyring), Send test against a local server that
answers like ntfy, a refusal said in words, and the status column showing a failing delivery."""

from __future__ import annotations

import pytest

from gpu_companion.core.common.notifier import Level, Message
from gpu_companion.ui.common import worker
from gpu_companion.ui.settings.notify_section import ChannelDialog, NotifySection
from tests.harness.fake_notify import FakeNotify

pytestmark = pytest.mark.keyring
WAIT = 20_000
TOKEN = "tk_settings0123456789abcdef"


@pytest.fixture
def section(ctx, keyring_backend, qtbot, monkeypatch):  # type: ignore[no-untyped-def]
    import keyring.backend
    import keyring.core

    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    monkeypatch.delattr(keyring.backend.get_all_keyring, "saved_result", raising=False)
    widget = NotifySection(ctx)
    qtbot.addWidget(widget)
    widget.show()
    yield widget
    worker.wait_all()
    for channel in ctx.notify.channels.all():  # their secrets leave the shared keyring
        ctx.notify.channels.remove(channel.id)


def _answer(monkeypatch, section, **typed):  # type: ignore[no-untyped-def]
    """The Add/Edit dialog, filled in as a user would, then Save."""
    seen: list[ChannelDialog] = []

    def fill(dialog: ChannelDialog) -> bool:
        seen.append(dialog)
        for key, value in typed.items():
            if key == "quiet":
                dialog.quiet.setText(value)
            elif key == "no_kinds":
                for check in dialog.kinds.values():
                    check.setChecked(False)
            else:
                dialog.fields[key].setText(value)  # type: ignore[union-attr]
        dialog.save()
        return dialog.result() == ChannelDialog.DialogCode.Accepted

    monkeypatch.setattr(section, "ask", fill)
    return seen


def test_add_ntfy_send_test_and_see_a_failing_delivery(section, ctx, qtbot, monkeypatch):
    with FakeNotify() as ntfy:
        ntfy.tokens["gpu-7fk2q9"] = TOKEN
        _answer(monkeypatch, section, server=ntfy.url, topic="gpu-7fk2q9", token=TOKEN,
                quiet="23:00-07:00")  # fmt: skip
        section.add("ntfy")
        qtbot.waitUntil(lambda: section.table.rowCount() == 1, timeout=WAIT)
        assert "press Send test" in section.result.text()
        assert section.table.item(0, 1).text() == f"{ntfy.url}/gpu-7fk2q9"
        assert section.table.item(0, 2).text() == "23:00-07:00"
        [channel] = ctx.notify.channels.all()
        assert TOKEN not in repr(channel) and ctx.vault.secret(f"notify:{channel.id}:token")

        section.table.selectRow(0)
        section.test_btn.click()
        qtbot.waitUntil(lambda: "Delivered to" in section.result.text(), timeout=WAIT)
        [sent] = ntfy.to("/gpu-7fk2q9")
        assert sent.headers["authorization"] == f"Bearer {TOKEN}"

        ntfy.tokens["gpu-7fk2q9"] = "tk_changed-on-the-server"  # the token no longer works
        section.test_btn.click()
        qtbot.waitUntil(lambda: "failed" in section.result.text(), timeout=WAIT)
        assert "403" in section.result.text()

        # a real alert that cannot be delivered: the status column says why and that it retries
        ctx.notify.enqueue(Message(Level.ERROR, "Daily budget: 100% used", "spend", "budget:1"))
        ctx.notify.deliver_due()
        section.refresh()
        qtbot.waitUntil(lambda: section.table.item(0, 3).text().startswith("failing:"),
                        timeout=WAIT)  # fmt: skip
        assert "403" in section.table.item(0, 3).text()
        assert "next try" in section.table.item(0, 3).text()


def test_a_mistake_keeps_the_dialog_and_what_was_typed(section, ctx, qtbot, monkeypatch):
    seen = _answer(monkeypatch, section, server="ftp://example.com", topic="gpu-alerts")
    section.add("ntfy")
    dialog = seen[0]
    assert dialog.result() != ChannelDialog.DialogCode.Accepted  # still open
    assert dialog.error.text() and dialog.fields["topic"].text() == "gpu-alerts"
    seen = _answer(monkeypatch, section, server="https://ntfy.sh", topic="gpu-alerts",
                   no_kinds=True)  # fmt: skip
    section.add("ntfy")
    assert "at least one kind" in seen[0].error.text()
    worker.wait_all()
    assert ctx.notify.channels.all() == []
