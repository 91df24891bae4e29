"""E-mail through the user's SMTP server: STARTTLS (587), TLS from the start (SMTPS, 465) or, only
to this computer, plain SMTP (a local relay). The certificate is verified against the system's
CAs plus an optional CA file; the password comes from the keyring and is sent only encrypted
(or to this computer)."""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

from gpu_companion.core.common.i18n import _
from gpu_companion.core.notify.http import explain_network, tls_context
from gpu_companion.core.notify.model import APP, Alert, DeliveryError, EmailConfig


def email_message(config: EmailConfig, alert: Alert) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = alert.title
    msg["From"] = config.sender
    msg["To"] = ", ".join(config.recipients)
    msg["Date"] = format_datetime(alert.at)
    msg["Message-ID"] = make_msgid(domain=config.sender.rsplit("@", 1)[-1])
    msg["X-Priority"] = {"error": "1", "warning": "2"}.get(alert.level, "3")
    if alert.test:
        sent = _("Sent by {app}").format(app=APP)
    else:
        sent = _("Sent by {app} (alert kind: {kind})").format(app=APP, kind=alert.kind)
    footer = f"\n\n-- \n{sent}"
    msg.set_content(alert.text + footer)
    return msg


def _code_text(exc: smtplib.SMTPResponseException) -> str:
    said = exc.smtp_error.decode("utf-8", "replace") if isinstance(exc.smtp_error, bytes) else ""
    return f"{exc.smtp_code}" + (f" {said.strip()}" if said.strip() else "")


def explain_smtp(config: EmailConfig, exc: BaseException, timeout_s: float) -> str:
    place = f"{config.host}:{config.port}"
    if isinstance(exc, smtplib.SMTPAuthenticationError):
        return _(
            "The SMTP server refused the login ({code}): check the user and password (many "
            "providers want an app password here, not the account's own)."
        ).format(code=exc.smtp_code)
    if isinstance(exc, smtplib.SMTPNotSupportedError):
        text = str(exc)
        if "STARTTLS" in text.upper():
            return _(
                "The SMTP server at {place} does not offer STARTTLS: use --security tls "
                "(usually port 465) or check the port."
            ).format(place=place)
        return _(
            "The SMTP server at {place} offers no login (AUTH) on this connection: check the "
            "port and security, or leave the user empty for a relay that needs none."
        ).format(place=place)
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        who = ", ".join(exc.recipients)
        first = next(iter(exc.recipients.values()), (0, b""))
        return _(
            "The SMTP server refused the recipient(s) {who} ({code}): check the address."
        ).format(who=who, code=first[0])
    if isinstance(exc, smtplib.SMTPSenderRefused):
        return _(
            "The SMTP server refused the sender {sender} ({said}): many servers only accept the "
            "login's own address as sender."
        ).format(sender=config.sender, said=_code_text(exc))
    if isinstance(exc, smtplib.SMTPDataError):
        return _("The SMTP server refused the message ({said}).").format(said=_code_text(exc))
    if isinstance(exc, smtplib.SMTPConnectError):
        return _("The SMTP server at {place} refused the session ({said}).").format(
            place=place, said=_code_text(exc)
        )
    if isinstance(exc, smtplib.SMTPServerDisconnected):
        return _(
            "The SMTP server at {place} closed the connection ({error}): wrong security for "
            "this port? (587: starttls, 465: tls)"
        ).format(place=place, error=exc)
    if isinstance(exc, smtplib.SMTPResponseException):
        return _("The SMTP server answered {said}.").format(said=_code_text(exc))
    if isinstance(exc, OSError | ssl.SSLError):
        return explain_network(place, exc, timeout_s)
    return _("Sending mail through {place} failed: {error}.").format(place=place, error=exc)


def send_email(config: EmailConfig, msg: EmailMessage, password: str, *, timeout_s: float) -> None:
    """Deliver `msg`; a `DeliveryError` in plain words when the server or network says no."""
    if config.user and not password:
        raise DeliveryError(
            _(
                "No SMTP password for {user} is in the keyring: set it again "
                "(gpu-companion notify add email ... --password-stdin)."
            ).format(user=config.user)
        )
    client: smtplib.SMTP | None = None
    try:
        if config.security == "tls":
            client = smtplib.SMTP_SSL(
                config.host, config.port, timeout=timeout_s, context=tls_context(config.ca_file)
            )
        else:
            client = smtplib.SMTP(config.host, config.port, timeout=timeout_s)
        client.ehlo()
        if config.security == "starttls":
            if not client.has_extn("starttls"):
                raise smtplib.SMTPNotSupportedError("STARTTLS extension not supported by server.")
            client.starttls(context=tls_context(config.ca_file))
            client.ehlo()
        if config.user:
            client.login(config.user, password)
        client.send_message(msg)
    except DeliveryError:
        raise
    except (smtplib.SMTPException, OSError) as exc:  # socket.timeout is an OSError
        raise DeliveryError(explain_smtp(config, exc, timeout_s)) from exc
    finally:
        if client is not None:
            try:
                client.quit()
            except (smtplib.SMTPException, OSError):
                client.close()
