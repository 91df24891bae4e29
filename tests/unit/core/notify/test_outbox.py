"""The outbox: which alerts a channel gets (kinds, quiet hours, one delivery per alert), retries
with backoff, and claims that no two workers share. Deliveries go to a real local ntfy-like
server; time moves on the manual clock."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from gpu_companion.core.common.clock import to_iso
from gpu_companion.core.common.notifier import Level, Message, Notifier
from gpu_companion.core.notify.kinds import QuietHours
from gpu_companion.core.notify.outbox import MAX_AGE, Outbox


def budget(text: str = "Budget month: 80% used.", level: Level = Level.WARNING) -> Message:
    return Message(level, text, "spend", "budget:1")


def idle(text: str = "gpu-a idle 30 min = $0.20") -> Message:
    return Message(Level.WARNING, text, "spend", "idle:gpu-a")


def test_one_delivery_per_alert_and_a_changed_text_once_per_remind_interval(
    center, http_server, manual_clock
):
    center.channels.add_ntfy(http_server.url, "alerts", remind_minutes=30)
    notifier = Notifier()
    center.attach(notifier)

    notifier.post(budget())
    notifier.post(budget())  # the same alert again: never re-sent
    assert center.deliver_due() == 1
    assert [r.text for r in http_server.to("/alerts")] == ["Budget month: 80% used."]

    manual_clock.advance(minutes=10)
    notifier.post(budget("Budget month: 85% used."))  # changed within 30 min: not yet
    assert center.deliver_due() == 0

    manual_clock.advance(minutes=21)  # 31 min after the first
    notifier.post(budget("Budget month: 90% used."))
    notifier.post(budget("Budget month: 90% used."))
    assert center.deliver_due() == 1
    assert [r.text for r in http_server.to("/alerts")][-1] == "Budget month: 90% used."
    assert len(http_server.requests) == 2


def test_the_remind_interval_is_per_channel(center, http_server, manual_clock):
    center.channels.add_ntfy(http_server.url, "fast", remind_minutes=5)
    center.channels.add_ntfy(http_server.url, "slow", remind_minutes=60)
    center.enqueue(idle())
    manual_clock.advance(minutes=6)
    center.enqueue(idle("gpu-a idle 36 min = $0.24"))
    center.deliver_due()
    assert len(http_server.to("/fast")) == 2 and len(http_server.to("/slow")) == 1


def test_keyless_messages_are_their_own_key(center, http_server):
    center.channels.add_ntfy(http_server.url, "all", kinds=frozenset({"other"}))
    for text in ("Host added.", "Host added.", "Platform added."):
        center.enqueue(Message(Level.INFO, text, "hosts"))
    center.deliver_due()
    assert [r.text for r in http_server.requests] == ["Host added.", "Platform added."]


def test_a_channel_gets_only_its_kinds(center, http_server):
    center.channels.add_ntfy(http_server.url, "money", kinds=frozenset({"budget", "orphan"}))
    center.channels.add_ntfy(http_server.url, "everything")  # the default kinds
    center.enqueue(idle())
    center.enqueue(budget())
    center.enqueue(Message(Level.INFO, "Host added.", "hosts"))  # `other`: nobody by default
    center.deliver_due()
    assert [r.text for r in http_server.to("/money")] == ["Budget month: 80% used."]
    assert len(http_server.to("/everything")) == 2


def test_quiet_hours_drop_a_non_critical_alert_and_pass_a_budget_alert(
    center, http_server, manual_clock
):
    center.channels.add_ntfy(http_server.url, "night", quiet=QuietHours.parse("23:00-07:00"))
    manual_clock.set(datetime(2025, 1, 16, 2, 30, tzinfo=timezone.utc))  # 02:30, quiet (UTC)
    assert center.enqueue(idle()) == []
    released = Message(Level.WARNING, "gpu-a was released", "release", "journal:1")
    assert center.enqueue(released) == []
    assert len(center.enqueue(budget())) == 1
    failed = Message(Level.ERROR, "The release of gpu-a failed.", "release", "release-error")
    assert len(center.enqueue(failed)) == 1  # any error passes
    assert len(center.enqueue(Message(Level.WARNING, "orphan $1.20/h", "providers", "orphan:1:9")))
    center.deliver_due()
    assert [r.headers["title"] for r in http_server.requests] == [
        "GPU Companion: Budget",
        "GPU Companion: Release",
        "GPU Companion: Forgotten instance",
    ]
    manual_clock.set(datetime(2025, 1, 16, 7, 0, tzinfo=timezone.utc))  # quiet hours are over
    assert len(center.enqueue(idle())) == 1  # dropped, not remembered: it goes now


def test_a_failing_channel_is_retried_with_backoff_then_given_up(center, http_server, manual_clock):
    ch = center.channels.add_ntfy(http_server.url, "flaky")
    http_server.fail_next(500, times=10, path="/flaky")
    center.enqueue(budget())
    start = manual_clock.now()
    waits = []
    for _ in range(5):
        assert center.deliver_due() == 1
        status = center.status(ch.id)
        if status.next_try_at is None:
            break
        waits.append((status.next_try_at - manual_clock.now()).total_seconds())
        assert center.deliver_due() == 0  # not due yet
        manual_clock.set(status.next_try_at)
    assert waits == [30, 120, 600, 1800]
    assert len(http_server.to("/flaky")) == 5
    status = center.status(ch.id)
    assert (status.pending, status.failed, status.last_ok_at) == (0, 1, None)
    assert status.last_error.startswith("ntfy answered 500 Internal Server Error")
    assert manual_clock.now() - start == timedelta(seconds=30 + 120 + 600 + 1800)
    assert center.outbox.rows()[0]["state"] == "failed"


def test_a_retry_that_succeeds_clears_the_queue_in_order(center, http_server, manual_clock):
    ch = center.channels.add_ntfy(http_server.url, "later")
    http_server.fail_next(503, times=1, path="/later")
    center.enqueue(budget())
    center.enqueue(idle())
    assert center.deliver_due() == 1  # the first fails; the second waits behind it
    assert center.status(ch.id).pending == 2
    manual_clock.advance(seconds=30)
    assert center.deliver_due() == 2
    assert [r.text for r in http_server.to("/later")][1:] == [
        "Budget month: 80% used.",
        "gpu-a idle 30 min = $0.20",
    ]
    status = center.status(ch.id)
    assert (status.pending, status.failed, status.last_ok_at) == (0, 0, manual_clock.now())
    assert "503" in status.last_error  # kept, and older than the last success


def test_a_claim_is_taken_once_across_two_stores(center, store, app_paths, manual_clock):
    from gpu_companion.core.storage.store import Store

    center.channels.add_desktop()
    center.channels.add_desktop()
    center.enqueue(budget())
    other_store = Store(app_paths.database)
    try:
        first = center.outbox.claim(manual_clock.now())
        second = Outbox(other_store).claim(manual_clock.now())
        assert len(first) == 2 and second == []
    finally:
        other_store.close()


def test_a_row_left_sending_by_a_dead_process_goes_back_to_pending(center, store, manual_clock):
    center.channels.add_desktop()
    center.enqueue(budget())
    dead = Outbox(store, owner="0:999999999:1")  # no such process
    [item] = dead.claim(manual_clock.now())
    [again] = center.outbox.claim(manual_clock.now())  # this process takes it back
    assert again.id == item.id


def test_an_alert_not_sent_within_a_day_is_given_up(center, manual_clock):
    ch = center.channels.add_desktop()
    center.enqueue(budget())
    manual_clock.advance(seconds=MAX_AGE.total_seconds() + 60)
    assert center.outbox.claim(manual_clock.now()) == []
    assert center.status(ch.id).failed == 1
    assert "not sent within a day" in center.outbox.rows()[0]["error"]


def test_old_rows_are_pruned(center, http_server, manual_clock):
    center.channels.add_ntfy(http_server.url, "t")
    center.enqueue(budget())
    center.deliver_due()
    assert center.outbox.prune(manual_clock.now()) == 0
    assert center.outbox.prune(manual_clock.now() + timedelta(days=31)) == 1


def test_next_due_is_the_earliest_pending_row(center, http_server, manual_clock):
    assert center.outbox.next_due() is None
    center.channels.add_ntfy(http_server.url, "x")
    http_server.fail_next(500, path="/x")
    center.enqueue(budget())
    assert center.outbox.next_due() == manual_clock.now()
    center.deliver_due()
    assert to_iso(center.outbox.next_due()) == to_iso(manual_clock.now() + timedelta(seconds=30))
