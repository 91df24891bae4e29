"""The delivery thread and the notifier's listener: posting only enqueues (fast, never raising,
whatever the thread or the channel does); the thread sends, survives failures, stops cleanly."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

from gpu_companion.core.common.notifier import Level, Message, Notifier

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "schema"


def budget(n: int = 1) -> Message:
    return Message(Level.WARNING, f"Budget {n}: 80% used.", "spend", f"budget:{n}")


def test_the_thread_sends_what_is_posted(center, http_server):
    center.channels.add_ntfy(http_server.url, "live")
    notifier = Notifier()
    unsubscribe = center.attach(notifier)
    center.start()
    try:
        notifier.post(budget())
        assert center.worker.wait_idle(10)
        assert [r.text for r in http_server.to("/live")] == ["Budget 1: 80% used."]
    finally:
        center.stop()
        unsubscribe()
    assert not center.worker.running
    notifier.post(budget(2))  # unsubscribed: not even queued
    assert len(center.outbox.rows()) == 1


def test_posting_is_fast_while_the_worker_is_stopped_and_keeps_everything(center, http_server):
    center.channels.add_ntfy(http_server.url, "later")
    notifier = Notifier()
    center.attach(notifier)
    started = time.monotonic()
    for n in range(50):
        notifier.post(budget(n))
    per_post = (time.monotonic() - started) / 50
    assert per_post < 0.05, per_post  # a few inserts, no network
    assert len(center.outbox.rows()) == 50 and http_server.requests == []
    center.start()  # what was queued goes out once the thread runs
    assert center.worker.wait_idle(20)
    assert len(http_server.to("/later")) == 50


def test_posting_does_not_wait_for_a_hanging_channel(center, http_server):
    center.channels.add_ntfy(http_server.url, "stuck")
    http_server.hang = threading.Event()
    notifier = Notifier()
    center.attach(notifier)
    center.start()
    notifier.post(budget(1))
    time.sleep(0.2)  # the thread is now inside the POST, waiting for an answer
    started = time.monotonic()
    notifier.post(budget(2))
    assert time.monotonic() - started < 0.5
    http_server.hang.set()
    assert center.worker.wait_idle(20)


def test_the_listener_never_raises_into_the_poster(center, store, caplog):
    center.channels.add_desktop()
    seen: list[Message] = []
    notifier = Notifier()
    center.attach(notifier)
    notifier.subscribe(seen.append)  # a listener after ours still gets the message
    store.db.execute("DROP TABLE notify_outbox")  # the store refuses every insert now
    notifier.post(budget())
    assert len(seen) == 1
    assert "queueing an alert" in caplog.text


def test_a_bug_in_one_send_fails_only_that_row(center, http_server, monkeypatch):
    bad = center.channels.add_ntfy(http_server.url, "bad")
    center.channels.add_ntfy(http_server.url, "good")
    real = center.sender.send

    def send(channel, alert, now):  # type: ignore[no-untyped-def]
        if channel.id == bad.id:
            raise KeyError("boom")
        real(channel, alert, now)

    monkeypatch.setattr(center.worker, "send", send)
    center.enqueue(budget())
    center.deliver_due()
    assert len(http_server.to("/good")) == 1
    assert center.status(bad.id).last_error == "Unexpected error: KeyError: 'boom'"


def test_stop_is_idempotent_and_start_again_works(center, http_server):
    center.channels.add_ntfy(http_server.url, "again")
    center.stop()
    center.start()
    center.start()
    center.stop()
    center.start()
    center.enqueue(budget())
    assert center.worker.wait_idle(10)
    center.stop()
    assert len(http_server.requests) == 1 and not center.worker.running


def test_a_v11_database_keeps_its_channel(tmp_path, secrets, manual_clock):
    from gpu_companion.core.notify.center import NotifyCenter
    from gpu_companion.core.storage.store import Store

    path = tmp_path / "companion.sqlite3"
    shutil.copyfile(FIXTURES / "v11.sqlite3", path)
    store = Store(path)
    try:
        [channel] = NotifyCenter(store, secrets, manual_clock).channels.all()
        assert (channel.name, channel.target(), str(channel.quiet)) == (
            "phone", "https://ntfy.sh/fixture-alerts", "23:00-07:00")  # fmt: skip
        assert channel.kinds == {"budget", "autorelease", "orphan"}
        assert channel.secrets == {"token"}
    finally:
        store.close()
