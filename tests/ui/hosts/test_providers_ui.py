"""Provider accounts on the Hosts page, driven as a user would, against a local server that answers
like vast.ai's API (the real vastai client code talks to it through VAST_URL) and the harness
keyring: the API key goes to the keyring and never to the database; Sync providers imports a
running instance as a metered host and marks one the provider no longer has as gone; a forgotten
instance (billing at vast.ai after its host was released) is alerted, listed with its price and
imported with one click."""

from __future__ import annotations

import uuid
from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from PySide6.QtWidgets import QDialog, QLineEdit, QPushButton, QSystemTrayIcon

from gpu_companion.core.common.notifier import Level, Message
from gpu_companion.core.hosts.registry import Host
from gpu_companion.ui.common import worker
from gpu_companion.ui.shell.tray import notification_for
from tests.harness.fake_vast import FakeVast

pytestmark = pytest.mark.keyring
WAIT = 30_000
KEY = "vast-ui-key-" + uuid.uuid4().hex  # unique, so finding it in a file means it leaked


@pytest.fixture
def vast(monkeypatch):  # type: ignore[no-untyped-def]
    with FakeVast(api_key=KEY) as fake:
        monkeypatch.setenv("VAST_URL", fake.url)
        yield fake


@pytest.fixture
def keyed(ctx, keyring_backend):  # type: ignore[no-untyped-def]
    """The app's services on the harness keyring, under a service name of their own."""
    ctx.vault.backend = keyring_backend
    ctx.vault.service = f"gpu-companion-uitest-{uuid.uuid4().hex[:8]}"
    yield ctx
    for account in ctx.providers.accounts():
        ctx.providers.remove(account)


def hosts_page(window):  # type: ignore[no-untyped-def]
    page = window.navigate("hosts")
    page.refresh()
    return page


def by_instance(ctx, instance_id: str) -> Host | None:  # type: ignore[no-untyped-def]
    return next((h for h in ctx.registry.hosts() if h.instance_id == instance_id), None)


def database_bytes(ctx) -> bytes:  # type: ignore[no-untyped-def]
    """Every byte of the app's sqlite database, its WAL and journal included."""
    path = Path(ctx.store.db.execute("PRAGMA database_list").fetchone()[2])
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


def test_an_account_added_in_the_dialog_keeps_its_key_in_the_keyring_only(
    window, keyed, vast, qtbot, monkeypatch
):
    ctx = keyed
    vast.add_instance(7001, label="sweep")
    page = hosts_page(window)
    assert page.stack.currentWidget() is page.empty  # a fresh install: start from an account
    assert page.findChild(QPushButton, "providerAccounts") is not None
    [offer] = [b for b in page.empty.buttons if b.text() == "Provider accounts…"]
    offer.click()
    dialog = page.providers().accounts_dialog
    assert dialog is not None and dialog.model.rowCount() == 0
    assert "No provider account yet" in dialog.status.text()

    dialog.add_btn.click()
    add = dialog.add_dialog
    assert add.api_key.echoMode() is QLineEdit.EchoMode.Password
    assert add.platform.text() == "vast.ai"  # the provider's name by default
    add.kind.setCurrentIndex(add.kind.findData("runpod"))
    assert add.platform.text() == "RunPod"
    add.kind.setCurrentIndex(add.kind.findData("vast.ai"))
    assert add.platform.text() == "vast.ai"

    add.api_key.setText("short")  # refused, next to the field, nothing stored
    add.save_btn.click()
    qtbot.waitUntil(lambda: not add.busy(), timeout=WAIT)
    assert add.isVisible() and "8 to 512 visible characters" in add.error.text()
    assert "c53030" in add.api_key.styleSheet()
    assert ctx.providers.accounts() == []

    add.api_key.setText(KEY)
    add.save_btn.click()
    qtbot.waitUntil(lambda: add.result() == QDialog.DialogCode.Accepted, timeout=WAIT)
    [account] = ctx.providers.accounts()
    assert (account.kind, account.platform_name) == ("vast.ai", "vast.ai")
    assert dialog.model.rowCount() == 1
    assert [dialog.model.index(0, c).data() for c in range(3)] == [
        "vast.ai", "vast.ai", "the provider's own",
    ]  # fmt: skip
    assert add.api_key.text() == ""  # no widget keeps the key
    # the key is in the keyring, and nowhere in the database file
    assert ctx.vault.secret(f"provider-api-key:{account.id}") == KEY
    assert KEY.encode() not in database_bytes(ctx)
    assert ctx.registry.platform(account.platform_id) is not None  # made for the account

    dialog.test_btn.click()  # lists the instances through the API, off the GUI thread
    qtbot.waitUntil(lambda: not dialog.busy(), timeout=WAIT)
    assert dialog.status.text() == "vast.ai answered for vast.ai: 1 instance in the account."
    assert ("GET", "/api/v1/instances/") in vast.requests

    # a key vast.ai refuses: the provider's refusal in words
    ctx.providers.add("vast.ai", "wrong-key-0123456789", platform="vast.ai team")
    dialog.refresh()
    dialog.view.selectRow([a.platform_name for a in dialog.model.rows()].index("vast.ai team"))
    dialog.test_btn.click()
    qtbot.waitUntil(lambda: not dialog.busy(), timeout=WAIT)
    assert "vast.ai refused the API key (HTTP 401)" in dialog.status.text()
    assert "wrong-key" not in dialog.status.text()

    asked: list[str] = []
    monkeypatch.setattr(dialog, "ask", lambda title, text: asked.append(text) or True)
    team = dialog.selected()
    dialog.remove_btn.click()
    qtbot.waitUntil(lambda: not dialog.busy(), timeout=WAIT)
    assert "delete its API key from the keyring" in asked[0]
    assert [a.platform_name for a in ctx.providers.accounts()] == ["vast.ai"]
    assert ctx.vault.secret(f"provider-api-key:{team.id}") is None
    dialog.reject()
    assert page.stack.currentIndex() == 1  # the platforms made for the accounts show
    assert "vast.ai team" in [p.name for p in page.platform_model.rows()]
    worker.wait_all()


def test_sync_providers_imports_a_running_instance_as_a_metered_host_then_marks_it_gone(
    window, keyed, vast, qtbot
):
    ctx = keyed
    vast.add_instance(7101, label="llm-run", gpu_name="RTX 4090", num_gpus=2, dph_total=0.62)
    ctx.providers.add("vast.ai", KEY)
    page = hosts_page(window)
    page.findChild(QPushButton, "syncProviders").click()
    qtbot.waitUntil(lambda: not page.providers().busy(), timeout=WAIT)

    host = by_instance(ctx, "7101")
    assert host is not None and host.alias == "llm-run" and host.state == "active"
    assert (host.hostname, host.port) == ("203.0.113.7", 41022)  # the direct ssh port
    assert (host.gpu_model, host.gpu_count) == ("RTX 4090", 2)
    rental = ctx.ledger.running_for_host(host.id)
    assert rental is not None and rental.hourly_rate() == Decimal("0.62")
    assert page.connection_status.text() == (
        "Synced 1 provider account: imported 1 (llm-run), updated 0, stopped 0, gone 0, orphans 0."
    )
    row = [h.alias for h in page.host_model.rows()].index("llm-run")
    assert page.host_model.index(row, 4).data() == "active"

    del vast.instances[7101]  # destroyed in vast.ai's console: the provider no longer has it
    page.findChild(QPushButton, "syncProviders").click()
    qtbot.waitUntil(lambda: not page.providers().busy(), timeout=WAIT)
    assert ctx.registry.host("llm-run").state == "gone"
    assert ctx.ledger.running_for_host(host.id) is None
    assert ctx.ledger.rental(rental.id).end_reason == "gone"
    assert "gone 1 (llm-run)" in page.connection_status.text()
    row = [h.alias for h in page.host_model.rows()].index("llm-run")
    assert page.host_model.index(row, 4).data() == "gone at the provider"
    worker.wait_all()


def test_a_sync_without_accounts_says_how_to_add_one(window, ctx, qtbot):
    page = hosts_page(window)
    page.findChild(QPushButton, "syncProviders").click()
    qtbot.waitUntil(lambda: not page.providers().busy(), timeout=WAIT)
    assert page.connection_status.text().startswith("No provider account yet")


@pytest.mark.qt_log_ignore("This plugin does not support raise")  # offscreen: bring_forward
def test_a_forgotten_instance_is_alerted_listed_with_its_price_and_imported(
    window, keyed, vast, qtbot
):
    ctx = keyed
    account = ctx.providers.add("vast.ai", KEY)
    old = ctx.registry.save_host(
        Host("old-run", "ssh7.vast.ai", 31000, "root", account.platform_id, instance_id="7200")
    )
    ctx.registry.save_host(replace(old, state="released"))
    # after the release, an instance bills at vast.ai that the app does not meter
    vast.add_instance(7201, label="forgotten", dph_total=0.62)
    vast.add_instance(7202, label="second", dph_total=1.5)

    page = hosts_page(window)
    page.findChild(QPushButton, "orphans").click()
    dialog = page.providers().orphans_dialog
    assert dialog.model.rowCount() == 0 and "found none" in dialog.status.text()
    dialog.again_btn.click()  # what the always-on loop does: read, alert, import nothing
    qtbot.waitUntil(lambda: not dialog.busy(), timeout=WAIT)
    assert by_instance(ctx, "7201") is None  # nothing imported by looking
    assert dialog.model.rowCount() == 2
    assert "Looked again: 2 forgotten instances." == dialog.status.text()
    rows = {o.instance.id: i for i, o in enumerate(dialog.model.rows())}
    price, platform, text = (dialog.model.index(rows["7201"], c).data() for c in range(3))
    assert (price, platform) == ("$0.62/h", "vast.ai")
    assert text.startswith("vast.ai instance 7201 (forgotten) is running (1× RTX 4090, $0.62/h)")
    assert "GPU Companion does not know it" in text

    # the alert: a warning with the orphan's key, shown as a banner where no tray exists
    key = f"orphan:{account.id}:7201"
    qtbot.waitUntil(lambda: window.banners.with_key(key) is not None, timeout=WAIT)
    banner = window.banners.with_key(key)
    assert "$0.62/h" in banner.message.text
    dialog.close()
    banner.button("Review…").click()  # one click from the alert to the forgotten instances
    review = page.providers().orphans_dialog
    assert review is not dialog and review.isVisible()
    qtbot.waitUntil(lambda: review.model.rowCount() == 2, timeout=WAIT)
    review.close()
    dialog.show()

    dialog.view.selectRow(rows["7201"])
    dialog.import_btn.click()
    qtbot.waitUntil(lambda: not dialog.busy(), timeout=WAIT)
    host = by_instance(ctx, "7201")
    assert host is not None and host.alias == "forgotten" and host.state == "active"
    rental = ctx.ledger.running_for_host(host.id)
    assert rental is not None and rental.hourly_rate() == Decimal("0.62")
    assert [o.instance.id for o in dialog.model.rows()] == ["7202"]
    assert dialog.status.text() == (
        "vast.ai instance 7201 imported as forgotten: metered from now at $0.62/h."
    )
    assert "forgotten" in [h.alias for h in page.host_model.rows()]  # the page re-read
    assert ctx.registry.host("old-run").state == "released"  # the released host stays so

    # Import and release…: imported, then its release checklist opens
    dialog.view.selectRow(0)
    dialog.release_btn.click()
    qtbot.waitUntil(lambda: by_instance(ctx, "7202") is not None, timeout=WAIT)
    qtbot.waitUntil(lambda: window.current_key() == "release", timeout=WAIT)
    assert window.pages["release"].host_box.currentData() == "second"
    assert ctx.ledger.running_for_host(by_instance(ctx, "7202").id) is not None
    assert not dialog.isVisible()
    worker.wait_all()


def test_an_orphan_alert_is_a_forgotten_instance_balloon():
    msg = Message(Level.WARNING, "vast.ai instance 1 is running", source="providers",
                  key="orphan:1:1")  # fmt: skip
    title, text, kind = notification_for(msg)
    assert title == "GPU Companion — forgotten instance"
    assert kind is QSystemTrayIcon.MessageIcon.Warning and text == msg.text
    other = Message(Level.WARNING, "x", source="providers", key="gone:3")
    assert notification_for(other)[0] == "GPU Companion"
