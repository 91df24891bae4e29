"""Channels as rows with their secrets in the keyring: checked before they are stored, changed,
removed with everything that belongs to them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.notify.kinds import DEFAULT_KINDS, QuietHours


def test_an_ntfy_channel_keeps_its_token_in_the_keyring_only(center, secrets, store):
    ch = center.channels.add_ntfy("ntfy.sh", "gpu-alerts-7f3", token="tk_abcdef123")
    assert ch.target() == "https://ntfy.sh/gpu-alerts-7f3"
    assert ch.kinds == DEFAULT_KINDS and ch.quiet is None and ch.remind_minutes == 30
    assert secrets.values == {f"notify:{ch.id}:token": "tk_abcdef123"}
    row = store.db.execute("SELECT config, secrets FROM notify_channels").fetchone()
    assert "tk_abcdef123" not in row[0] and row[1] == "token"
    assert json.loads(row[0]) == {"server": "https://ntfy.sh", "topic": "gpu-alerts-7f3",
                                  "ca_file": "", "allow_http": False}  # fmt: skip


def test_a_webhook_url_is_a_secret(center, secrets, store):
    url = "https://hooks.slack.com/services/T000/B000/XXXXSECRET"
    ch = center.channels.add_webhook(url, "slack")
    assert secrets.values[f"notify:{ch.id}:url"] == url
    dump = " ".join(str(v) for v in store.db.execute("SELECT * FROM notify_channels").fetchone())
    assert "XXXXSECRET" not in dump and "XXXXSECRET" not in ch.target()


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda c: c.add_ntfy("http://ntfy.example.com", "t"), "server"),
        (lambda c: c.add_ntfy("https://user:pw@ntfy.example.com", "t"), "server"),
        (lambda c: c.add_ntfy("ftp://ntfy.example.com", "t"), "server"),
        (lambda c: c.add_ntfy("https://ntfy.sh", "bad topic"), "topic"),
        (lambda c: c.add_ntfy("https://ntfy.sh", "t", token="has space"), "token"),
        (lambda c: c.add_webhook("https://x.example/h", "teams"), "format"),
        (lambda c: c.add_webhook("http://10.0.0.5/hook", "json"), "url"),
        (lambda c: c.add_webhook("https://x.example/h", "feishu", secret_header="X-A"),
         "secret_header"),
        (lambda c: c.add_email("smtp.example.com", 25, "none", "a@example.com", ["b@example.com"]),
         "security"),
        (lambda c: c.add_email("smtp.example.com", 587, "starttls", "a@example.com", []), "to"),
        (lambda c: c.add_email("smtp.example.com", 587, "starttls", "not-an-address",
                               ["b@example.com"]), "from"),
        (lambda c: c.add_email("smtp.example.com", 587, "starttls", "a@example.com",
                               ["b@example.com"], user="a@example.com"), "password"),
        (lambda c: c.add_ntfy("https://ntfy.sh", "t", ca_file="/nonexistent/ca.pem"), "ca_file"),
        (lambda c: c.add_desktop(remind_minutes=0), "remind_minutes"),
    ],
)  # fmt: skip
def test_bad_values_are_refused_before_anything_is_stored(center, secrets, store, call, field):
    with pytest.raises(ValidationError) as refused:
        call(center.channels)
    assert refused.value.field == field
    assert center.channels.all() == [] and secrets.values == {}


def test_plain_http_is_fine_to_this_computer_or_when_allowed(center):
    assert center.channels.add_ntfy("http://127.0.0.1:8080", "t").target().startswith("http://")
    assert center.channels.add_ntfy("http://localhost", "t")
    lan = center.channels.add_webhook("http://10.0.0.5/hook", "json", allow_http=True)
    assert lan.config.allow_http
    local = center.channels.add_email("127.0.0.1", 25, "none", "a@example.com", ["b@example.com"])
    assert local.target() == "b@example.com via 127.0.0.1:25 (none)"


def test_a_keyring_that_refuses_leaves_no_channel(center, secrets):
    secrets.fail_set = True
    with pytest.raises(UserError, match="locked"):
        center.channels.add_ntfy("https://ntfy.sh", "t", token="tk_123456")
    assert center.channels.all() == []


def test_filters_change_and_a_disabled_channel_drops_what_it_had_to_send(center, store):
    ch = center.channels.add_desktop(name="laptop")
    quiet = QuietHours.parse("22:00-06:30")
    changed = center.channels.update(ch.id, kinds=frozenset({"budget"}), quiet=quiet,
                                     remind_minutes=90)  # fmt: skip
    assert (changed.kinds, str(changed.quiet), changed.remind_minutes) == (
        {"budget"}, "22:00-06:30", 90)  # fmt: skip
    assert center.channels.update(ch.id, quiet=None).quiet is None
    center.enqueue(_budget())  # queued, not sent (no worker runs)
    assert [r["state"] for r in center.outbox.rows()] == ["pending"]
    assert center.channels.update(ch.id, enabled=False).enabled is False
    assert [r["state"] for r in center.outbox.rows()] == ["dropped"]
    assert center.enqueue(_budget("changed")) == []  # a disabled channel gets nothing


def _budget(text: str = "Budget month: 80% used."):  # type: ignore[no-untyped-def]
    from gpu_companion.core.common.notifier import Level, Message

    return Message(Level.WARNING, text, "spend", "budget:1")


def test_removing_a_channel_removes_its_secrets_outbox_and_memory(center, secrets, store):
    ch = center.channels.add_webhook("https://x.example/h", "json", secret="s3cret-token")
    center.enqueue(_budget())
    assert len(secrets.values) == 2 and len(center.outbox.rows()) == 1
    center.channels.remove(ch.id)
    assert secrets.values == {} and center.outbox.rows() == []
    assert store.db.execute("SELECT count(*) FROM notify_sent").fetchone()[0] == 0
    with pytest.raises(UserError, match="No notification channel #1"):
        center.channels.require(ch.id)


def test_the_ca_file_is_kept_as_an_absolute_path(center, tmp_path: Path, monkeypatch):
    (tmp_path / "ca.pem").write_text("not checked until used")
    monkeypatch.chdir(tmp_path)
    ch = center.channels.add_ntfy("https://ntfy.example", "t", ca_file="ca.pem")
    assert ch.config.ca_file == str(tmp_path / "ca.pem")
