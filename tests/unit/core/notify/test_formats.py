"""Each service's message shape, prepared as data, and what each service's answer means."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import datetime, timezone
from urllib.parse import parse_qs, unquote_plus, urlsplit

import pytest

from gpu_companion.core.common.notifier import Level, Message
from gpu_companion.core.notify.formats import (
    alert_of,
    check_ntfy,
    check_webhook,
    ntfy_request,
    webhook_request,
)
from gpu_companion.core.notify.http import HttpAnswer
from gpu_companion.core.notify.model import DeliveryError, NtfyConfig, WebhookConfig
from gpu_companion.core.notify.smtp import email_message
from gpu_companion.core.notify.validate import display_url

AT = datetime(2025, 1, 15, 9, 0, tzinfo=timezone.utc)


def alert(level: Level = Level.WARNING, text: str = "Budget month: 80% used."):  # type: ignore[no-untyped-def]
    return alert_of(Message(level, text, "spend", "budget:1", AT), AT)


@pytest.mark.parametrize(
    ("level", "priority", "tag"),
    [(Level.ERROR, "urgent", "rotating_light"), (Level.WARNING, "high", "warning"),
     (Level.INFO, "default", "information_source")],
)  # fmt: skip
def test_ntfy_posts_the_text_with_title_priority_and_tags(level, priority, tag):
    req = ntfy_request(NtfyConfig("https://ntfy.example", "gpu-alerts"), alert(level), "tk_1")
    assert (req.method, req.url) == ("POST", "https://ntfy.example/gpu-alerts")
    assert req.body.decode() == "Budget month: 80% used."
    assert req.headers["Title"] == "GPU Companion: Budget"
    assert req.headers["Priority"] == priority
    assert req.headers["Tags"] == f"{tag},budget"
    assert req.headers["Authorization"] == "Bearer tk_1"
    assert req.without_secrets().headers["Authorization"] == "***"


def test_ntfy_without_a_token_sends_no_authorization_and_caps_the_body():
    req = ntfy_request(NtfyConfig("https://ntfy.sh", "t"), alert(text="é" * 5000))
    assert "Authorization" not in req.headers
    assert len(req.body) <= 4096 and req.body.decode().endswith("...")


def test_a_non_ascii_title_header_is_rfc2047_encoded():
    from gpu_companion.core.notify.formats import _header

    encoded = _header("Budget — 80 %")
    assert encoded.startswith("=?UTF-8?B?") and encoded.isascii()
    assert base64.b64decode(encoded[10:-2]).decode() == "Budget — 80 %"


def _payload(fmt: str, secret: str = "", url: str = "https://hooks.example/x"):  # type: ignore[no-untyped-def]
    req = webhook_request(WebhookConfig(fmt, display_url(url)), url, alert(), AT, secret)
    assert req.headers["Content-Type"].startswith("application/json")
    return req, json.loads(req.body)


def test_webhook_payload_shapes():
    text = "GPU Companion: Budget\nBudget month: 80% used."
    assert _payload("slack")[1] == {"text": text}
    assert _payload("discord")[1] == {"content": text, "allowed_mentions": {"parse": []}}
    assert _payload("feishu")[1] == {"msg_type": "text", "content": {"text": text}}
    assert _payload("dingtalk")[1] == {"msgtype": "text", "text": {"content": text}}
    assert _payload("json")[1] == {
        "title": "GPU Companion: Budget",
        "text": "Budget month: 80% used.",
        "level": "warning",
        "kind": "budget",
        "key": "budget:1",
        "at": "2025-01-15T09:00:00+00:00",
    }


def test_a_json_webhook_secret_is_a_bearer_header_or_the_named_header():
    req, _ = _payload("json", secret="s3cret")
    assert req.headers["Authorization"] == "Bearer s3cret"
    url = "https://hooks.example/x"
    cfg = WebhookConfig("json", display_url(url), secret_header="X-Token")
    req = webhook_request(cfg, url, alert(), AT, "s3cret")
    assert req.headers["X-Token"] == "s3cret" and "Authorization" not in req.headers


def test_feishu_signs_in_the_body_as_its_docs_say():
    req, body = _payload("feishu", secret="feishu-secret")
    stamp = int(AT.timestamp())
    key = f"{stamp}\nfeishu-secret".encode()
    expected = base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()
    assert body["timestamp"] == str(stamp) and body["sign"] == expected
    assert "Authorization" not in req.headers


def test_dingtalk_signs_in_the_query_as_its_docs_say():
    url = "https://oapi.dingtalk.example/robot/send?access_token=abc"
    req, _ = _payload("dingtalk", secret="SECabc", url=url)
    query = parse_qs(urlsplit(req.url).query)
    stamp = int(AT.timestamp() * 1000)
    digest = hmac.new(b"SECabc", f"{stamp}\nSECabc".encode(), hashlib.sha256).digest()
    assert query["access_token"] == ["abc"] and query["timestamp"] == [str(stamp)]
    assert query["sign"] == [base64.b64encode(digest).decode()]  # parse_qs undid the quoting
    raw = urlsplit(req.url).query.split("sign=")[1]
    assert unquote_plus(raw) == base64.b64encode(digest).decode()


def test_ntfy_answers():
    check_ntfy(HttpAnswer(200, "OK", b'{"id":"abc","event":"message"}'))
    with pytest.raises(DeliveryError, match="403 Forbidden: the access token is wrong or lacks"):
        check_ntfy(HttpAnswer(403, "Forbidden", b'{"code":40301,"error":"forbidden"}'))
    with pytest.raises(DeliveryError, match="500 Internal Server Error: the server has a problem"):
        check_ntfy(HttpAnswer(500, "Internal Server Error", b""))
    with pytest.raises(DeliveryError, match="not as ntfy does"):  # a login portal, say
        check_ntfy(HttpAnswer(200, "OK", b"<html>Sign in</html>"))
    with pytest.raises(DeliveryError, match="redirects elsewhere"):
        check_ntfy(HttpAnswer(302, "Found", b""))


def test_feishu_and_dingtalk_refusals_inside_a_200_are_failures():
    feishu = WebhookConfig("feishu", "")
    check_webhook(feishu, HttpAnswer(200, "OK", b'{"code":0,"msg":"success"}'))
    with pytest.raises(DeliveryError, match="Feishu refused the message \\(code 19021"):
        check_webhook(feishu, HttpAnswer(200, "OK", b'{"code":19021,"msg":"sign match fail"}'))
    ding = WebhookConfig("dingtalk", "")
    check_webhook(ding, HttpAnswer(200, "OK", b'{"errcode":0,"errmsg":"ok"}'))
    with pytest.raises(DeliveryError, match="errcode 310000"):
        check_webhook(ding, HttpAnswer(200, "OK", b'{"errcode":310000,"errmsg":"sign not match"}'))
    with pytest.raises(DeliveryError, match="Slack answered 404 Not Found: the webhook does not"):
        check_webhook(WebhookConfig("slack", ""), HttpAnswer(404, "Not Found", b"no_service"))
    check_webhook(WebhookConfig("discord", ""), HttpAnswer(204, "No Content", b""))


def test_the_mail_has_subject_addresses_and_the_text():
    from gpu_companion.core.notify.model import EmailConfig

    cfg = EmailConfig("smtp.example", 587, "starttls", "gc@example.com",
                      ("me@example.com", "you@example.com"))  # fmt: skip
    msg = email_message(cfg, alert(Level.ERROR))
    assert msg["Subject"] == "GPU Companion: Budget"
    assert (msg["From"], msg["To"]) == ("gc@example.com", "me@example.com, you@example.com")
    assert msg["X-Priority"] == "1"
    assert msg.get_content().startswith("Budget month: 80% used.\n")


def test_a_webhook_url_is_shown_without_its_token():
    shown = display_url("https://hooks.slack.com/services/T000/B000/XXXXSECRET")
    assert shown == "https://hooks.slack.com/services/…" and "XXXX" not in shown
    shown = display_url("https://oapi.dingtalk.com/robot/send?access_token=abcdef")
    assert "abcdef" not in shown
