"""An alert's kind from its key and source, what passes quiet hours, and quiet hours themselves."""

from __future__ import annotations

from datetime import datetime, time, timedelta, timezone

import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.notifier import Level, Message
from gpu_companion.core.notify.kinds import (
    DEFAULT_KINDS,
    KINDS,
    QuietHours,
    alert_kind,
    is_money_critical,
    parse_kinds,
)


@pytest.mark.parametrize(
    ("source", "key", "kind"),
    [
        ("spend", "budget:3", "budget"),
        ("spend", "runtime:12", "runtime"),
        ("spend", "overnight:12", "overnight"),
        ("spend", "idle:gpu-a", "idle"),
        ("monitor", "idle:gpu-a", "other"),  # the spend alert with the cost follows it
        ("spend", "spot-sync:12", "spot-sync"),
        ("autorelease", "autorelease:gpu-a", "autorelease"),
        ("autorelease", "unreachable:gpu-a", "unreachable"),
        ("autorelease", "wake:gpu-a", "idle"),
        ("autorelease", "", "autorelease"),
        ("providers", "orphan:1:4242", "orphan"),
        ("providers", "gone:7", "gone"),
        ("providers", "provider-error:vast.ai", "other"),
        ("release", "journal:5", "release"),
        ("release", "release-error", "release"),
        ("release", "", "release"),
        ("monitor", "throttle:gpu-a:0", "other"),
        ("hosts", "", "other"),
        ("", "", "other"),
    ],
)
def test_the_kind_comes_from_the_key_then_the_source(source, key, kind):
    assert alert_kind(Message(Level.WARNING, "text", source, key)) == kind
    assert kind in KINDS


def test_money_critical_alerts_and_errors_pass_quiet_hours():
    def critical(key: str, level: Level = Level.WARNING, source: str = "") -> bool:
        return is_money_critical(Message(level, "t", source, key))

    assert critical("budget:1") and critical("autorelease:a") and critical("orphan:1:2")
    assert critical("unreachable:a")
    assert not critical("idle:a") and not critical("runtime:1") and not critical("gone:3")
    assert critical("", Level.ERROR, "transfers")  # any error passes
    assert not critical("", Level.INFO, "hosts")


def test_kinds_are_parsed_and_refused_in_words():
    assert parse_kinds("budget, idle") == {"budget", "idle"}
    assert parse_kinds("all") == set(KINDS)
    assert parse_kinds("default") == DEFAULT_KINDS and "other" not in DEFAULT_KINDS
    with pytest.raises(ValidationError, match="Unknown alert kind 'money'"):
        parse_kinds("budget,money")
    with pytest.raises(ValidationError):
        parse_kinds(" , ")


def test_quiet_hours_span_midnight():
    quiet = QuietHours.parse("23:00-07:00")
    assert (quiet.start, quiet.end, str(quiet)) == (time(23), time(7), "23:00-07:00")
    at = datetime(2025, 1, 15, tzinfo=timezone.utc)
    inside = [at.replace(hour=23), at.replace(hour=2, minute=30), at.replace(hour=6, minute=59)]
    outside = [at.replace(hour=7), at.replace(hour=12), at.replace(hour=22, minute=59)]
    assert all(quiet.contains(t, timezone.utc) for t in inside)
    assert not any(quiet.contains(t, timezone.utc) for t in outside)


def test_quiet_hours_within_a_day_and_in_another_zone():
    quiet = QuietHours.parse("12:30-14:00")
    tokyo = timezone(timedelta(hours=9))
    noon_utc = datetime(2025, 1, 15, 4, 0, tzinfo=timezone.utc)  # 13:00 in Tokyo
    assert quiet.contains(noon_utc, tokyo)
    assert not quiet.contains(noon_utc, timezone.utc)


@pytest.mark.parametrize("text", ["23-07", "25:00-07:00", "23:00", "07:00-07:00", "ab"])
def test_bad_quiet_hours_are_refused(text):
    with pytest.raises(ValidationError):
        QuietHours.parse(text)
