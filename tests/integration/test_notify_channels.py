"""Off-desk notification channels as shipped: `Services.notify` with its secrets in the harness
keyring, delivering to real servers on 127.0.0.1: an HTTP server that answers like ntfy and the
webhooks, aiosmtpd with AUTH over STARTTLS and SMTPS (a CA of the test's own, given as the
channel's CA file), and a freedesktop notification server on a D-Bus session bus. The CLI runs
through `gpu_companion.cli.main` on the test's isolated home."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpu_companion.cli import main
from gpu_companion.core.common.notifier import Level, Message, Notifier
from tests.conftest import missing_component
from tests.harness.fake_notify import (
    Certs,
    FakeNotificationServer,
    FakeNotify,
    FakeSmtp,
    PrivateBus,
    make_certs,
)
from tests.harness.sshd import ComponentMissing
from tests.harness.util import free_port

pytestmark = pytest.mark.keyring

USER, PASSWORD = "alerts@example.com", "right-password"


@pytest.fixture
def services(app_paths, keyring_backend, manual_clock, monkeypatch) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """The app's Services on the harness keyring (picked again, as a fresh process would)."""
    import keyring.backend
    import keyring.core

    from gpu_companion.services import build_services

    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    monkeypatch.delattr(keyring.backend.get_all_keyring, "saved_result", raising=False)
    s = build_services(app_paths)
    s.clock = manual_clock  # before the first service is made
    yield s
    s.notify.stop()
    for channel in s.notify.channels.all():  # their secrets leave the shared keyring
        s.notify.channels.remove(channel.id)
    s.close()


@pytest.fixture
def certs(tmp_path: Path) -> Certs:
    return make_certs(tmp_path / "certs")


@pytest.fixture
def web() -> Iterator[FakeNotify]:
    with FakeNotify() as server:
        yield server


def _smtp(mode: str, certs: Certs) -> FakeSmtp:
    try:
        return FakeSmtp(mode, certs, USER, PASSWORD).start()
    except ComponentMissing as exc:
        missing_component(str(exc))


@pytest.fixture
def smtp(certs: Certs) -> Iterator[FakeSmtp]:
    server = _smtp("starttls", certs)
    yield server
    server.stop()


@pytest.fixture
def smtps(certs: Certs) -> Iterator[FakeSmtp]:
    server = _smtp("tls", certs)
    yield server
    server.stop()


@pytest.fixture
def desktop(keyring_session) -> Iterator[FakeNotificationServer]:  # type: ignore[no-untyped-def]
    """A notification server on the harness session bus (the keyring's own bus)."""
    server = FakeNotificationServer(keyring_session.env["DBUS_SESSION_BUS_ADDRESS"]).start()
    yield server
    server.stop()


def _email(services: Any, server: FakeSmtp, certs: Certs, password: str = PASSWORD, **kw: Any):  # type: ignore[no-untyped-def]
    return services.notify.channels.add_email(
        "127.0.0.1", server.port, server.mode, USER, ["me@example.com"], user=USER,
        password=password, ca_file=str(certs.ca_file), **kw,
    )  # fmt: skip


BUDGET = Message(Level.ERROR, "Budget month: 100% used — $200.00 of $200.00.", "spend", "budget:1")
IDLE = Message(Level.WARNING, "gpu-a idle for 45 min while billed: $0.31.", "spend", "idle:gpu-a")


def test_each_channel_delivers_one_message_per_alert(
    services, web, smtp, smtps, certs, desktop
) -> None:
    web.tokens["phone"] = "tk_phone_token_1"
    notify = services.notify
    notify.channels.add_ntfy(web.url, "phone", token="tk_phone_token_1")
    for fmt in ("slack", "discord", "json"):
        notify.channels.add_webhook(f"{web.url}/{fmt if fmt != 'json' else 'hook'}/T1/B2/x",
                                    fmt, secret="hook-bearer" if fmt == "json" else "")  # fmt: skip
    notify.channels.add_webhook(f"{web.url}/feishu/hook/abc", "feishu", secret="feishu-sign")
    notify.channels.add_webhook(f"{web.url}/dingtalk/robot/send?access_token=t0k", "dingtalk",
                                secret="SECding")  # fmt: skip
    _email(services, smtp, certs)
    _email(services, smtps, certs)
    notify.channels.add_desktop()

    notifier = Notifier()
    notify.attach(notifier)
    notify.start()
    for message in (BUDGET, IDLE, BUDGET, IDLE):  # each alert twice: delivered once
        notifier.post(message)
    assert notify.worker.wait_idle(30)

    phone = web.to("/phone")
    seen = [(r.headers["title"], r.headers["priority"], r.headers["tags"], r.text) for r in phone]
    assert seen == [
        ("GPU Companion: Budget", "urgent", "rotating_light,budget", BUDGET.text),
        ("GPU Companion: Idle GPUs", "high", "warning,idle", IDLE.text),
    ]
    assert {r.headers["authorization"] for r in phone} == {"Bearer tk_phone_token_1"}
    assert [r.json()["text"] for r in web.to("/slack")] == [
        f"GPU Companion: Budget\n{BUDGET.text}",
        f"GPU Companion: Idle GPUs\n{IDLE.text}",
    ]
    assert [r.json()["content"].split("\n")[1] for r in web.to("/discord")] == [
        BUDGET.text, IDLE.text]  # fmt: skip
    hook = web.to("/hook")
    fields = [{k: r.json()[k] for k in ("title", "level", "kind", "key")} for r in hook]
    assert fields == [
        {"title": "GPU Companion: Budget", "level": "error", "kind": "budget", "key": "budget:1"},
        {"title": "GPU Companion: Idle GPUs", "level": "warning", "kind": "idle",
         "key": "idle:gpu-a"},
    ]  # fmt: skip
    assert {r.headers["authorization"] for r in hook} == {"Bearer hook-bearer"}
    feishu = web.to("/feishu")
    assert [r.json()["content"]["text"] for r in feishu][0].endswith(BUDGET.text)
    assert all(r.json()["sign"] and r.json()["timestamp"] for r in feishu) and len(feishu) == 2
    ding = web.to("/dingtalk")
    assert len(ding) == 2 and all(r.query["access_token"] == ["t0k"] and r.query["sign"]
                                  for r in ding)  # fmt: skip
    for server in (smtp, smtps):
        assert [m["Subject"] for m in server.messages] == [
            "GPU Companion: Budget", "GPU Companion: Idle GPUs"]  # fmt: skip
        assert server.messages[0].get_payload(decode=True).decode().startswith(BUDGET.text)
        assert server.envelopes[0] == (USER, ["me@example.com"]) and server.logins == [USER] * 2
    assert [(c[3], c[4], c[6]["urgency"][1]) for c in desktop.calls] == [
        ("GPU Companion: Budget", BUDGET.text, 2),
        ("GPU Companion: Idle GPUs", IDLE.text, 1),
    ]
    statuses = notify.statuses().values()
    assert all(s.pending == 0 and s.failed == 0 and s.last_ok_at for s in statuses)


def test_refusing_channels_are_retried_with_backoff_while_the_others_deliver(
    services, web, smtp, certs, manual_clock
) -> None:
    notify = services.notify
    down = notify.channels.add_ntfy(web.url, "down")
    web.fail_next(500, times=2, path="/down")
    mail = _email(services, smtp, certs, password="wrong-password")
    closed = notify.channels.add_ntfy(f"http://127.0.0.1:{free_port()}", "closed")
    up = notify.channels.add_ntfy(web.url, "up")
    slack = notify.channels.add_webhook(f"{web.url}/slack/T/B/C", "slack")

    notify.enqueue(BUDGET)
    notify.deliver_due()
    assert len(web.to("/up")) == 1 and len(web.to("/slack")) == 1  # the others delivered
    status = notify.statuses()
    assert status[down.id].last_error.startswith("ntfy answered 500 Internal Server Error")
    assert status[mail.id].last_error.startswith("The SMTP server refused the login (535)")
    assert status[closed.id].last_error.startswith("Connection refused by 127.0.0.1:")
    for failing in (down, mail, closed):
        s = status[failing.id]
        assert (s.pending, s.failed, s.last_ok_at) == (1, 0, None)
        assert (s.next_try_at - manual_clock.now()).total_seconds() == 30
    assert status[up.id].last_ok_at == status[slack.id].last_ok_at == manual_clock.now()

    notify.enqueue(IDLE)  # the healthy channels take it at once; the failing ones queue it
    assert notify.deliver_due() == 2
    assert [r.text for r in web.to("/up")] == [BUDGET.text, IDLE.text]

    # the user fixes the password in the keyring: the next try uses it
    services.vault.set_secret(f"notify:{mail.id}:password", PASSWORD)
    manual_clock.advance(seconds=30)
    notify.deliver_due()
    assert len(web.to("/down")) == 2  # second try: 500 again, next wait 2 min
    assert [m["Subject"] for m in smtp.messages] == [
        "GPU Companion: Budget", "GPU Companion: Idle GPUs"]  # fmt: skip
    manual_clock.advance(seconds=120)
    notify.deliver_due()
    assert [r.text for r in web.to("/down")][2:] == [BUDGET.text, IDLE.text]
    status = notify.statuses()
    assert status[down.id].pending == 0 and status[down.id].last_ok_at == manual_clock.now()
    assert status[mail.id].pending == 0
    assert status[closed.id].pending == 2  # still refused: each alert given up after 5 tries
    tries = 3
    while notify.status(closed.id).pending and tries < 20:
        manual_clock.set(notify.status(closed.id).next_try_at or manual_clock.now())
        tries += notify.deliver_due()
    assert (notify.status(closed.id).failed, notify.status(closed.id).pending, tries) == (2, 0, 10)


WORKER = """
import sys
from gpu_companion.services import build_services

services = build_services()
services.notify.worker.idle_s = 0.01  # another process's enqueue does not wake this one
services.notify.start()
print("ready", flush=True)
sys.stdin.read()  # until the test is done
services.notify.stop()
services.close()
"""


def test_two_processes_on_one_store_never_send_an_item_twice(services, web) -> None:
    """A window and a `watch` on one data dir: both deliver, none twice, each channel in order."""
    from gpu_companion.core.common.clock import SystemClock

    services.clock = SystemClock()  # the other process runs on the real clock too
    channels = [services.notify.channels.add_ntfy(web.url, f"c{i}") for i in range(8)]
    web.delay_s = 0.02  # a worker busy sending lets the other claim the next channel's row
    other = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "ready"
        services.notify.worker.idle_s = 0.01
        services.notify.start()
        for n in range(10):
            services.notify.enqueue(Message(Level.WARNING, f"alert {n}", "spend", f"budget:{n}"))
        deadline = time.monotonic() + 60
        while len(web.requests) < 80 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)  # nothing more arrives
        services.notify.stop()
    finally:
        assert other.stdin is not None
        other.stdin.close()
        other.wait(30)
    sent = Counter((r.path, r.text) for r in web.requests)
    assert len(sent) == 80 and set(sent.values()) == {1}
    for channel in channels:  # each channel in order
        assert [r.text for r in web.to(f"/{channel.config.topic}")] == [
            f"alert {n}" for n in range(10)
        ]
    owners = services.store.db.execute(
        "SELECT owner, count(*) FROM notify_outbox WHERE state = 'sent' GROUP BY owner"
    ).fetchall()
    assert len(owners) == 2, owners  # both processes delivered
    assert sum(n for _, n in owners) == 80


def test_send_test_says_what_went_wrong(services, web, smtp, certs, monkeypatch, tmp_path) -> None:
    notify = services.notify
    notify.sender.timeout_s = 1.0
    web.tokens["locked"] = "tk_right"
    with FakeNotify(certs) as https:
        cases = {
            notify.channels.add_ntfy(web.url, "locked", token="tk_wrong").id:
                "ntfy answered 403 Forbidden: the access token is wrong or lacks write access "
                "to the topic",
            notify.channels.add_ntfy(web.url, "locked").id:
                "ntfy answered 401 Unauthorized: the topic needs an access token",
            notify.channels.add_ntfy(web.url, "busy").id:
                "ntfy answered 500 Internal Server Error: the server has a problem right now",
            notify.channels.add_ntfy(https.url, "tls").id:
                "The certificate of 127.0.0.1 could not be verified",
            notify.channels.add_ntfy(f"http://127.0.0.1:{free_port()}", "x").id:
                "Connection refused by 127.0.0.1:",
            _email(services, smtp, certs, password="nope").id:
                "The SMTP server refused the login (535): check the user and password",
            notify.channels.add_webhook(f"{web.url}/feishu/x", "feishu").id:
                "Feishu refused the message (code 19021: sign match fail)",
        }  # fmt: skip
        web.fail_next(500, path="/busy")
        web.fail_next(200, {"code": 19021, "msg": "sign match fail"}, path="/feishu")
        for channel_id, expected in cases.items():
            result = notify.send_test(channel_id)
            assert not result.ok and expected in result.text, (channel_id, result.text)

        slow = notify.channels.add_ntfy(web.url, "slow")
        web.hang = threading.Event()  # a server that never answers
        try:
            result = notify.send_test(slow.id)
        finally:
            web.hang.set()
            web.hang = None
        assert not result.ok and result.text.startswith("No answer from 127.0.0.1:")
        assert "within 1 s" in result.text

        ok = notify.channels.add_ntfy(https.url, "tls", ca_file=str(certs.ca_file))
        result = notify.send_test(ok.id)
        assert result.ok and result.text == f"Delivered to {https.url}/tls."
        assert https.to("/tls")[-1].headers["title"] == "GPU Companion: test message"
    assert notify.outbox.rows() == []  # tests go direct, never through the outbox


def test_desktop_without_a_bus_or_a_notification_server_is_a_failure_not_an_error(
    services, monkeypatch
) -> None:
    channel = services.notify.channels.add_desktop()
    bus = PrivateBus()
    try:
        bus.start()
    except ComponentMissing as exc:
        missing_component(str(exc))
    try:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
        result = services.notify.send_test(channel.id)
        assert not result.ok
        assert result.text.startswith("No notification server answers on the desktop session bus")
        monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS")
        result = services.notify.send_test(channel.id)
        assert result.text.startswith("No desktop session bus here")
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        result = services.notify.send_test(channel.id)
        assert result.text.startswith("The desktop session bus cannot be reached")
        services.notify.enqueue(BUDGET)  # through the outbox: a failed row, never an exception
        assert services.notify.deliver_due() == 1
        assert services.notify.status(channel.id).pending == 1
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus.address)
        server = FakeNotificationServer(bus.address).start()
        try:
            assert services.notify.send_test(channel.id).ok
            assert server.calls[-1][3] == "GPU Companion: test message"
        finally:
            server.stop()
    finally:
        bus.stop()


# --- the CLI ---------------------------------------------------------------------------------


def cli(capsys, monkeypatch, *argv: str, stdin: str = "") -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(["notify", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def fresh_keyring(keyring_backend, monkeypatch):  # type: ignore[no-untyped-def]
    import keyring.backend
    import keyring.core

    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    monkeypatch.delattr(keyring.backend.get_all_keyring, "saved_result", raising=False)
    return keyring_backend


def test_cli_round_trip(capsys, monkeypatch, fresh_keyring, web, smtp, certs, app_paths) -> None:
    web.tokens["gpu-alerts"] = "tk_cli_token_42"
    code, out, err = cli(capsys, monkeypatch, "add", "ntfy", "--server", web.url, "--topic",
                         "gpu-alerts", "--token-stdin", stdin="tk_cli_token_42\n")  # fmt: skip
    assert code == 0, err
    assert "Added channel #1" in out and "token in the keyring" in out
    assert "tk_cli_token_42" not in out

    code, out, err = cli(capsys, monkeypatch, "add", "webhook", "--url-stdin", "--format", "slack",
                         stdin=f"{web.url}/slack/T0/B0/SECRETPATH\n")  # fmt: skip
    assert code == 0, err
    code, out, err = cli(capsys, monkeypatch, "add", "email", "--host", "127.0.0.1", "--port",
                         str(smtp.port), "--security", "starttls", "--user", USER,
                         "--password-stdin", "--from", USER, "--to", "me@example.com",
                         "--ca-file", str(certs.ca_file), stdin=f"{PASSWORD}\n")  # fmt: skip
    assert code == 0, err

    code, out, _ = cli(capsys, monkeypatch, "list")
    assert code == 0 and "gpu-alerts" in out and "#3" in out
    for secret in ("tk_cli_token_42", "SECRETPATH", PASSWORD):
        assert secret not in out
    code, out, _ = cli(capsys, monkeypatch, "list", "--json")
    rows = json.loads(out)
    assert [r["secrets_in_keyring"] for r in rows] == [["token"], ["url"], ["password"]]
    assert not any(s in out for s in ("tk_cli_token_42", "SECRETPATH", PASSWORD))

    code, out, err = cli(capsys, monkeypatch, "test")
    assert code == 0, out + err
    assert out.count("Delivered to") == 3
    assert web.to("/gpu-alerts")[-1].headers["authorization"] == "Bearer tk_cli_token_42"
    assert len(smtp.messages) == 1

    web.tokens["gpu-alerts"] = "tk_rotated"  # the server no longer takes our token
    code, out, _ = cli(capsys, monkeypatch, "test", "1")
    assert code == 1
    assert "#1 ntfy: not delivered: ntfy answered 403 Forbidden" in out

    code, out, err = cli(capsys, monkeypatch, "set", "1", "--kinds", "budget,orphan", "--quiet",
                         "23:00-07:00", "--remind-minutes", "45", "--disable")  # fmt: skip
    assert code == 0, err
    assert "kinds=budget,orphan" in out and "quiet=23:00-07:00" in out and "disabled" in out
    code, out, _ = cli(capsys, monkeypatch, "test")  # the disabled channel is not tested
    assert code == 0 and "#1" not in out

    code, _, err = cli(capsys, monkeypatch, "add", "ntfy", "--server", "http://example.com",
                       "--topic", "t")  # fmt: skip
    assert code == 1 and "refused (server)" in err and "Nothing was changed" in err
    code, _, err = cli(capsys, monkeypatch, "set", "9", "--enable")
    assert code == 1 and "No notification channel #9" in err

    code, out, _ = cli(capsys, monkeypatch, "remove", "1")
    assert code == 0 and "Removed channel #1" in out
    from gpu_companion.services import build_services

    s = build_services(app_paths)
    try:
        assert s.vault.secret("notify:1:token") is None
        assert s.vault.secret("notify:2:url") == f"{web.url}/slack/T0/B0/SECRETPATH"
        for channel in s.notify.channels.all():
            s.notify.channels.remove(channel.id)
    finally:
        s.close()


def test_cli_test_with_no_channels_fails(capsys, monkeypatch, fresh_keyring) -> None:
    code, _, err = cli(capsys, monkeypatch, "test")
    assert code == 1 and "no enabled channels" in err
