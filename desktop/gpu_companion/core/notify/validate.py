"""Checks on what a user types for a channel, before anything is stored or sent.

URLs: http or https only, a host, no user:password in them (a token goes to the keyring), no
spaces or control characters. Plain http is refused unless the host is this computer (a local
ntfy or relay) or the user explicitly allows it (`allow_http`, a LAN server they trust): an alert
names hosts and prices, and a token sent in clear text can be read on the way.
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path
from urllib.parse import urlsplit

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import N_, _

_TOPIC_RE = re.compile(r"^[-_A-Za-z0-9]{1,64}$")  # what ntfy accepts as a topic name
_HEADER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]{0,63}$")
_ADDRESS_RE = re.compile(r"^[^@\s<>,;\"']{1,64}@[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$")
_SECRET_RE = re.compile(r"^[\x21-\x7e]{1,4096}$")


def is_loopback(host: str) -> bool:
    """`localhost`, 127.0.0.0/8 or ::1: this computer."""
    name = host.strip("[]").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _clean(field: str, value: str, what: str) -> str:
    """`what`: the value's name, marked with N_() (translated here)."""
    value, what = value.strip(), _(what)
    if not value:
        raise ValidationError(field, _("{what} is empty.").format(what=what))
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValidationError(
            field, _("{what} must not contain spaces or control characters.").format(what=what)
        )
    return value


def validate_url(
    field: str, value: str, *, allow_http: bool = False, what: str = N_("The URL")
) -> str:
    """An http(s) URL as stored: no trailing slash for a base URL is the caller's business.
    `what`: the URL's name, marked with N_() (translated here)."""
    url = _clean(field, value, what)
    what = _(what)
    try:
        parts = urlsplit(url)
        port = parts.port  # raises on a port that is not a number or out of range
    except ValueError as exc:
        raise ValidationError(
            field,
            _("{what} {url} is not a valid URL ({error}).").format(
                what=what, url=repr(url), error=exc
            ),
        ) from None
    if parts.scheme not in ("http", "https"):
        raise ValidationError(
            field,
            _("{what} must start with https:// (or http://), not {url}.").format(
                what=what, url=repr(url)
            ),
        )
    if not parts.hostname:
        raise ValidationError(
            field, _("{what} {url} names no host.").format(what=what, url=repr(url))
        )
    if parts.username is not None or parts.password is not None:
        raise ValidationError(
            field,
            _(
                "{what} must not carry a user or password: give the token separately, it goes "
                "to the OS keyring."
            ).format(what=what),
        )
    if parts.fragment:
        raise ValidationError(field, _("{what} must not have a #fragment.").format(what=what))
    if parts.scheme == "http" and not allow_http and not is_loopback(parts.hostname):
        raise ValidationError(
            field,
            _(
                "{what} uses plain http to {host}: alerts and tokens would cross the network "
                "unencrypted. Use https://, or allow plain http explicitly (--allow-http) for a "
                "server on a network you trust."
            ).format(what=what, host=parts.hostname),
        )
    del port
    return url


def validate_server(value: str, *, allow_http: bool = False) -> str:
    """An ntfy server base URL (ntfy.sh or self-hosted, possibly under a path)."""
    text = value.strip()
    if text and "://" not in text:
        text = f"https://{text}"  # `ntfy.sh` as ntfy's own CLI takes it
    url = validate_url("server", text, allow_http=allow_http, what=N_("The ntfy server"))
    if urlsplit(url).query:
        raise ValidationError("server", _("The ntfy server address must not have a ?query."))
    return url.rstrip("/")


def validate_topic(value: str) -> str:
    topic = value.strip()
    if not _TOPIC_RE.match(topic):
        raise ValidationError(
            "topic",
            _(
                "An ntfy topic is 1 to 64 letters, digits, '-' or '_' (pick one that is hard to "
                "guess: on a public server the topic is the password)."
            ),
        )
    return topic


def validate_header(value: str) -> str:
    name = value.strip()
    if not _HEADER_RE.match(name):
        raise ValidationError(
            "secret_header", _("A header name is letters, digits and '-' (e.g. Authorization).")
        )
    return name


def validate_address(field: str, value: str) -> str:
    address = value.strip()
    if not _ADDRESS_RE.match(address):
        raise ValidationError(
            field,
            _("{address} is not an e-mail address (name@example.com).").format(
                address=repr(address)
            ),
        )
    return address


def validate_host(value: str) -> str:
    host = _clean("host", value, N_("The SMTP server"))
    if not re.match(r"^[A-Za-z0-9.:\[\]-]{1,253}$", host):
        raise ValidationError(
            "host", _("{host} is not a host name or IP address.").format(host=repr(host))
        )
    return host


def validate_ca_file(value: str) -> str:
    """A PEM file of certificate authorities to trust besides the system's, or ''."""
    if not value.strip():
        return ""
    path = Path(value.strip()).expanduser()
    if not path.is_file():
        raise ValidationError("ca_file", _("The CA file {path} does not exist.").format(path=path))
    return str(path.resolve())


def validate_secret(field: str, value: str, what: str) -> str:
    """`what`: the secret's name, marked with N_() (translated here)."""
    secret = value.strip()
    if not _SECRET_RE.match(secret):
        raise ValidationError(
            field,
            _(
                "{what} must be one line of visible characters (no spaces), as the service "
                "shows it."
            ).format(what=_(what)),
        )
    return secret


def display_url(url: str) -> str:
    """What may be shown of a webhook URL: its tokens often sit in the path or the query."""
    parts = urlsplit(url)
    first = next((p for p in parts.path.split("/") if p), "")
    shown = f"{parts.scheme}://{parts.netloc}"
    if first and len(first) <= 24 and first.isalpha():
        shown += f"/{first}"
    return shown + "/…"
