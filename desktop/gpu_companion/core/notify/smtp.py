"""E-mail through the user's SMTP server: STARTTLS (587), TLS from the start (SMTPS, 465) or, only
to this computer, plain SMTP (a local relay). The certificate is verified against the system's
CAs plus an optional CA file; the password comes from the keyring and is sent only encrypted
(or to this computer)."""

from __future__ import annotations

import smtplib
import ssl
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

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
    footer = f"\n\n-- \nSent by {APP}" + (f" (alert kind: {alert.kind})" if not alert.test else "")
    msg.set_content(alert.text + footer)
    return msg


def _code_text(exc: smtplib.SMTPResponseException) -> str:
    said = exc.smtp_error.decode("utf-8", "replace") if isinstance(exc.smtp_error, bytes) else ""
    return f"{exc.smtp_code}" + (f" {said.strip()}" if said.strip() else "")


def explain_smtp(config: EmailConfig, exc: BaseException, timeout_s: float) -> str:
    place = f"{config.host}:{config.port}"
    if isinstance(exc, smtplib.SMTPAuthenticationError):
        return (
            f"The SMTP server refused the login ({exc.smtp_code}): check the user and password "
            "(many providers want an app password here, not the account's own)."
        )
    if isinstance(exc, smtplib.SMTPNotSupportedError):
        text = str(exc)
        if "STARTTLS" in text.upper():
            return (
                f"The SMTP server at {place} does not offer STARTTLS: use --security tls "
                "(usually port 465) or check the port."
            )
        return (
            f"The SMTP server at {place} offers no login (AUTH) on this connection: check the "
            "port and security, or leave the user empty for a relay that needs none."
        )
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        who = ", ".join(exc.recipients)
        first = next(iter(exc.recipients.values()), (0, b""))
        return f"The SMTP server refused the recipient(s) {who} ({first[0]}): check the address."
    if isinstance(exc, smtplib.SMTPSenderRefused):
        return (
            f"The SMTP server refused the sender {config.sender} ({_code_text(exc)}): many servers "
            "only accept the login's own address as sender."
        )
    if isinstance(exc, smtplib.SMTPDataError):
        return f"The SMTP server refused the message ({_code_text(exc)})."
    if isinstance(exc, smtplib.SMTPConnectError):
        return f"The SMTP server at {place} refused the session ({_code_text(exc)})."
    if isinstance(exc, smtplib.SMTPServerDisconnected):
        return (
            f"The SMTP server at {place} closed the connection ({exc}): wrong security for this "
            "port? (587: starttls, 465: tls)"
        )
    if isinstance(exc, smtplib.SMTPResponseException):
        return f"The SMTP server answered {_code_text(exc)}."
    if isinstance(exc, OSError | ssl.SSLError):
        return explain_network(place, exc, timeout_s)
    return f"Sending mail through {place} failed: {exc}."


def send_email(config: EmailConfig, msg: EmailMessage, password: str, *, timeout_s: float) -> None:
    """Deliver `msg`; a `DeliveryError` in plain words when the server or network says no."""
    if config.user and not password:
        raise DeliveryError(
            f"No SMTP password for {config.user} is in the keyring: set it again "
            "(gpu-companion notify add email ... --password-stdin)."
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
