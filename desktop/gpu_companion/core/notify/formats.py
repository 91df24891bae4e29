"""Each service's own message shape, prepared as data, and how each says it took the message.

ntfy: `POST <server>/<topic>`, the text as the body, `Title`, `Priority` (urgent/high/default by
level) and `Tags` headers, `Authorization: Bearer <token>` for a protected topic (docs.ntfy.sh
"Publishing"); it answers 200 with the message as JSON (`{"id": ...}`).
Webhooks: `json` is our own `{"title","text","level","kind","key","at"}`; `slack` an incoming
webhook's `{"text"}` (answers 200 "ok"); `discord` an execute-webhook `{"content"}` (≤ 2000
characters, answers 204), mentions disabled; `feishu` a custom bot's `{"msg_type": "text",
"content": {"text"}}` with `timestamp`/`sign` when it has a signing secret, answering 200 with
`{"code": 0}` or a non-zero code; `dingtalk` a custom robot's `{"msgtype": "text", "text":
{"content"}}`, signed with `timestamp`/`sign` in the query, answering 200 with `{"errcode": 0}`.
Feishu and DingTalk say "no" inside an HTTP 200: the body is read, not only the status.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import datetime
from typing import Any
from urllib.parse import quote_plus

from gpu_companion.core.common.clock import to_iso
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.common.notifier import Level, Message
from gpu_companion.core.notify.http import HttpAnswer, HttpRequest
from gpu_companion.core.notify.kinds import TITLES, alert_kind
from gpu_companion.core.notify.model import APP, Alert, DeliveryError, NtfyConfig, WebhookConfig

NTFY_PRIORITY = {"error": "urgent", "warning": "high", "info": "default"}
NTFY_TAG = {"error": "rotating_light", "warning": "warning", "info": "information_source"}
NTFY_MAX_BYTES = 4096  # ntfy's default message size limit; more becomes an attachment
DISCORD_MAX = 2000


def alert_of(message: Message, at: datetime) -> Alert:
    kind = alert_kind(message)
    return Alert(
        title=_("{app}: {title}").format(app=APP, title=_(TITLES[kind])),
        text=message.text,
        level=message.level.value,
        kind=kind,
        key=message.key,
        at=at,
        source=message.source,
    )


def probe_alert(channel_label: str, at: datetime) -> Alert:
    return Alert(
        title=_("{app}: test message").format(app=APP),
        text=_(
            "This is a test message from {app} ({channel}). If you can read it, alerts will "
            "reach you here."
        ).format(app=APP, channel=channel_label),
        level=Level.INFO.value,
        kind="other",
        key="notify-test",
        at=at,
        source="notify",
        test=True,
    )


def _header(value: str) -> str:
    """ASCII as is; anything else as one RFC 2047 word (ntfy decodes those in its headers)."""
    if value.isascii():
        return value
    return f"=?UTF-8?B?{base64.b64encode(value.encode()).decode()}?="


def _cut(text: str, max_bytes: int) -> str:
    data = text.encode()
    if len(data) <= max_bytes:
        return text
    return data[: max_bytes - 3].decode("utf-8", "ignore") + "..."


def ntfy_request(config: NtfyConfig, alert: Alert, token: str = "") -> HttpRequest:
    headers = {
        "Title": _header(alert.title),
        "Priority": NTFY_PRIORITY.get(alert.level, "default"),
        "Tags": f"{NTFY_TAG.get(alert.level, 'information_source')},{alert.kind}",
        "Content-Type": "text/plain; charset=utf-8",
    }
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return HttpRequest(config.url, _cut(alert.text, NTFY_MAX_BYTES).encode(), headers)


def _plain(alert: Alert) -> str:
    return f"{alert.title}\n{alert.text}"


def webhook_payload(config: WebhookConfig, alert: Alert) -> dict[str, Any]:
    if config.format == "slack":
        return {"text": _plain(alert)}
    if config.format == "discord":
        return {"content": _plain(alert)[:DISCORD_MAX], "allowed_mentions": {"parse": []}}
    if config.format == "feishu":
        return {"msg_type": "text", "content": {"text": _plain(alert)}}
    if config.format == "dingtalk":
        return {"msgtype": "text", "text": {"content": _plain(alert)}}
    return {
        "title": alert.title,
        "text": alert.text,
        "level": alert.level,
        "kind": alert.kind,
        "key": alert.key,
        "at": to_iso(alert.at),
    }


def feishu_sign(secret: str, timestamp: int) -> str:
    """Feishu's custom-bot signature: HMAC-SHA256 keyed with "<timestamp>\\n<secret>" over
    nothing, base64."""
    key = f"{timestamp}\n{secret}".encode()
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()


def dingtalk_sign(secret: str, timestamp_ms: int) -> str:
    """DingTalk's robot signature: HMAC-SHA256 of "<timestamp>\\n<secret>" keyed with the secret,
    base64, URL-encoded."""
    digest = hmac.new(secret.encode(), f"{timestamp_ms}\n{secret}".encode(), hashlib.sha256)
    return quote_plus(base64.b64encode(digest.digest()).decode())


def webhook_request(
    config: WebhookConfig, url: str, alert: Alert, now: datetime, secret: str = ""
) -> HttpRequest:
    payload = webhook_payload(config, alert)
    headers = {"Content-Type": "application/json; charset=utf-8"}
    if secret and config.format == "feishu":
        stamp = int(now.timestamp())
        payload = {"timestamp": str(stamp), "sign": feishu_sign(secret, stamp), **payload}
    elif secret and config.format == "dingtalk":
        stamp_ms = int(now.timestamp() * 1000)
        sep = "&" if "?" in url else "?"
        url = f"{url}{sep}timestamp={stamp_ms}&sign={dingtalk_sign(secret, stamp_ms)}"
    elif secret:
        header = config.secret_header or "Authorization"
        headers[header] = f"Bearer {secret}" if header.lower() == "authorization" else secret
    body = json.dumps(payload, ensure_ascii=False).encode()
    return HttpRequest(url, body, headers)


# --- what the answer says ---------------------------------------------------------------------

_NTFY_WHY = {
    400: N_("the server did not understand the message"),
    401: N_("the topic needs an access token, or the token is wrong or expired"),
    403: N_("the access token is wrong or lacks write access to the topic"),
    404: N_("no ntfy server at that address: check the server URL"),
    413: N_("the message is larger than the server accepts"),
    429: N_("the server's rate limit was reached"),
    507: N_("the server is out of storage"),
}
_HOOK_WHY = {
    400: N_("the service did not accept the message (wrong --format for this URL?)"),
    401: N_("the secret is wrong or missing"),
    403: N_("the URL's token or the secret is wrong, or the webhook was revoked"),
    404: N_("the webhook does not exist (deleted, or the URL is incomplete)"),
    410: N_("the webhook's channel is gone"),
    413: N_("the message is too large for the service"),
    429: N_("the service's rate limit was reached"),
}


def _json(answer: HttpAnswer) -> Any:
    try:
        return json.loads(answer.body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None


def _status(answer: HttpAnswer) -> str:
    return f"{answer.status} {answer.reason}".strip()


def _why(answer: HttpAnswer, table: dict[int, str]) -> str:
    if answer.status in table:
        return _(table[answer.status])
    if 300 <= answer.status < 400:
        return _("it redirects elsewhere: check the URL (redirects are not followed)")
    if answer.status >= 500:
        return _("the server has a problem right now")
    return _("unexpected answer")


def check_ntfy(answer: HttpAnswer) -> None:
    data = _json(answer)
    if not answer.ok:
        said = (
            _(" (it said: {words})").format(words=data["error"])
            if isinstance(data, dict) and "error" in data
            else ""
        )
        raise DeliveryError(
            _("ntfy answered {status}: {why}{said}.").format(
                status=_status(answer), why=_why(answer, _NTFY_WHY), said=said
            )
        )
    if not (isinstance(data, dict) and data.get("id")):
        raise DeliveryError(
            _(
                "The server answered {status} but not as ntfy does (no message id): is the "
                "server address an ntfy server, not a web page or a login portal?"
            ).format(status=_status(answer))
        )


def check_webhook(config: WebhookConfig, answer: HttpAnswer) -> None:
    service = {"json": _("The webhook"), "slack": "Slack", "discord": "Discord",
               "feishu": _("Feishu"), "dingtalk": _("DingTalk")}[config.format]  # fmt: skip
    if not answer.ok:
        said = _(" (it said: {words})").format(words=answer.text(200)) if answer.body else ""
        raise DeliveryError(
            _("{service} answered {status}: {why}{said}.").format(
                service=service, status=_status(answer), why=_why(answer, _HOOK_WHY), said=said
            )
        )
    data = _json(answer)
    if config.format == "feishu":
        code = data.get("code", data.get("StatusCode")) if isinstance(data, dict) else None
        if code != 0:
            msg = data.get("msg", data.get("StatusMessage", "")) if isinstance(data, dict) else ""
            raise DeliveryError(
                _(
                    "Feishu refused the message (code {code}: {said}): check the bot's signing "
                    "secret, keywords and IP allow-list."
                ).format(code=code, said=msg or answer.text(200))
            )
    elif config.format == "dingtalk":
        code = data.get("errcode") if isinstance(data, dict) else None
        if code != 0:
            msg = data.get("errmsg", "") if isinstance(data, dict) else answer.text(200)
            raise DeliveryError(
                _(
                    "DingTalk refused the message (errcode {code}: {said}): check the robot's "
                    "signing secret (加签), keywords and IP allow-list."
                ).format(code=code, said=msg)
            )
