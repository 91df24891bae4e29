"""What a channel is (its type, settings, filters) and what it delivers (an `Alert`).

Settings are stored as JSON in `notify_channels.config` and never hold a secret: an ntfy access
token, a webhook's URL and signing secret, an SMTP password live in the OS keyring under
`notify:<channel id>:<slot>`; the row only lists which slots are filled.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.notify.kinds import QuietHours

CHANNEL_TYPES: tuple[str, ...] = ("ntfy", "webhook", "email", "desktop")
WEBHOOK_FORMATS: tuple[str, ...] = ("json", "slack", "discord", "feishu", "dingtalk")
SECURITY: tuple[str, ...] = ("starttls", "tls", "none")
DEFAULT_REMIND_MINUTES = 30
APP = "GPU Companion"


class Secrets(Protocol):
    """The OS keyring (the key vault's `secret`/`set_secret`/`delete_secret`)."""

    def secret(self, name: str) -> str | None: ...

    def set_secret(self, name: str, value: str) -> None: ...

    def delete_secret(self, name: str) -> None: ...


def secret_name(channel_id: int, slot: str) -> str:
    return f"notify:{channel_id}:{slot}"


class DeliveryError(UserError):
    """A channel did not take a message; the text says why in the user's words."""


@dataclass(frozen=True)
class NtfyConfig:
    server: str  # https://ntfy.sh or a self-hosted base URL (no trailing slash)
    topic: str
    ca_file: str = ""  # a CA bundle for a self-hosted server's own certificate authority
    allow_http: bool = False  # plain http to a host other than this computer

    @property
    def url(self) -> str:
        return f"{self.server}/{self.topic}"


@dataclass(frozen=True)
class WebhookConfig:
    format: str  # one of WEBHOOK_FORMATS
    url_display: str  # scheme, host and the start of the path: the URL itself is a secret
    secret_header: str = ""  # json/slack/discord: the header that carries the secret
    ca_file: str = ""
    allow_http: bool = False


@dataclass(frozen=True)
class EmailConfig:
    host: str
    port: int
    security: str  # one of SECURITY
    sender: str
    recipients: tuple[str, ...]
    user: str = ""
    ca_file: str = ""


@dataclass(frozen=True)
class DesktopConfig:
    """The freedesktop notification server of the session this process runs in."""


Config = NtfyConfig | WebhookConfig | EmailConfig | DesktopConfig


def config_to_json(config: Config) -> dict[str, Any]:
    if isinstance(config, EmailConfig):
        return {
            "host": config.host,
            "port": config.port,
            "security": config.security,
            "from": config.sender,
            "to": list(config.recipients),
            "user": config.user,
            "ca_file": config.ca_file,
        }
    return {k: v for k, v in vars(config).items()}


def config_from_json(channel_type: str, data: dict[str, Any]) -> Config:
    if channel_type == "ntfy":
        return NtfyConfig(
            str(data["server"]), str(data["topic"]), str(data.get("ca_file", "")),
            bool(data.get("allow_http", False)),
        )  # fmt: skip
    if channel_type == "webhook":
        return WebhookConfig(
            str(data["format"]), str(data.get("url_display", "")),
            str(data.get("secret_header", "")), str(data.get("ca_file", "")),
            bool(data.get("allow_http", False)),
        )  # fmt: skip
    if channel_type == "email":
        return EmailConfig(
            str(data["host"]), int(data["port"]), str(data["security"]), str(data["from"]),
            tuple(str(a) for a in data.get("to", [])), str(data.get("user", "")),
            str(data.get("ca_file", "")),
        )  # fmt: skip
    if channel_type == "desktop":
        return DesktopConfig()
    raise ValueError(f"unknown channel type {channel_type!r}")


@dataclass(frozen=True)
class Channel:
    id: int
    type: str
    name: str
    config: Config
    kinds: frozenset[str]
    quiet: QuietHours | None = None
    remind_minutes: int = DEFAULT_REMIND_MINUTES
    enabled: bool = True
    secrets: frozenset[str] = frozenset()  # the keyring slots this channel filled

    def target(self) -> str:
        """Where it delivers, without any secret."""
        c = self.config
        if isinstance(c, NtfyConfig):
            return c.url
        if isinstance(c, WebhookConfig):
            return f"{c.format} {c.url_display}"
        if isinstance(c, EmailConfig):
            return _("{recipients} via {server} ({security})").format(
                recipients=", ".join(c.recipients), server=f"{c.host}:{c.port}", security=c.security
            )
        return _("this desktop session")

    def label(self) -> str:
        return f"#{self.id} {self.name or self.type}"


@dataclass(frozen=True)
class Alert:
    """One message as a channel sends it."""

    title: str
    text: str
    level: str  # info | warning | error
    kind: str
    key: str
    at: datetime
    source: str = ""
    test: bool = False


@dataclass(frozen=True)
class ChannelStatus:
    """What the Settings page shows per channel."""

    channel_id: int
    last_ok_at: datetime | None
    last_error: str
    last_error_at: datetime | None
    pending: int
    failed: int
    next_try_at: datetime | None = None


@dataclass(frozen=True)
class SendResult:
    """What a test message did: `text` is "Delivered ..." or why not, in plain words."""

    channel_id: int
    ok: bool
    text: str
