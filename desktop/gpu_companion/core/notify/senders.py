"""Send one alert through one channel, with its secrets read from the keyring at that moment (a
token changed in the keyring is used by the next delivery). Every failure is a `DeliveryError`."""

from __future__ import annotations

from datetime import datetime

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.notify import formats
from gpu_companion.core.notify.http import post
from gpu_companion.core.notify.model import (
    Alert,
    Channel,
    DeliveryError,
    DesktopConfig,
    EmailConfig,
    NtfyConfig,
    Secrets,
    WebhookConfig,
    secret_name,
)

DEFAULT_TIMEOUT_S = 10.0


class Sender:
    """`send(channel, alert, now)` for every channel type; `timeout_s` bounds each network step."""

    def __init__(self, secrets: Secrets, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.secrets = secrets
        self.timeout_s = timeout_s

    def _secret(self, channel: Channel, slot: str, what: str, required: bool = False) -> str:
        """`what`: the secret's name, marked with N_() by the caller."""
        what, label = _(what), channel.label()
        if slot not in channel.secrets:
            if required:
                raise DeliveryError(
                    _("{channel} has no {secret}: add the channel again.").format(
                        channel=label, secret=what
                    )
                )
            return ""
        try:
            value = self.secrets.secret(secret_name(channel.id, slot))
        except UserError as exc:  # the keyring is locked or gone: said, and tried again later
            raise DeliveryError(
                _("The {secret} of {channel} cannot be read: {error}").format(
                    secret=what, channel=label, error=exc
                )
            ) from exc
        if not value:
            raise DeliveryError(
                _(
                    "The {secret} of {channel} is not in the keyring (removed, or another "
                    "keyring is in use): set it again with gpu-companion notify add."
                ).format(secret=what, channel=label)
            )
        return value

    def send(self, channel: Channel, alert: Alert, now: datetime) -> None:
        config = channel.config
        if isinstance(config, NtfyConfig):
            token = self._secret(channel, "token", N_("ntfy access token"))
            answer = post(
                formats.ntfy_request(config, alert, token),
                timeout_s=self.timeout_s,
                ca_file=config.ca_file,
            )
            formats.check_ntfy(answer)
        elif isinstance(config, WebhookConfig):
            url = self._secret(channel, "url", N_("webhook URL"), required=True)
            secret = self._secret(channel, "secret", N_("webhook secret"))
            request = formats.webhook_request(config, url, alert, now, secret)
            answer = post(request, timeout_s=self.timeout_s, ca_file=config.ca_file)
            formats.check_webhook(config, answer)
        elif isinstance(config, EmailConfig):
            from gpu_companion.core.notify.smtp import email_message, send_email

            password = self._secret(channel, "password", N_("SMTP password")) if config.user else ""
            send_email(config, email_message(config, alert), password, timeout_s=self.timeout_s)
        elif isinstance(config, DesktopConfig):
            from gpu_companion.core.notify.desktop import send_desktop

            send_desktop(alert, timeout_s=self.timeout_s)
        else:  # pragma: no cover - the types are closed
            raise DeliveryError(
                _("{channel} has an unknown type {type}.").format(
                    channel=channel.label(), type=repr(channel.type)
                )
            )
