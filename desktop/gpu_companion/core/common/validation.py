"""Field checks for values that end up in ssh config files and remote commands.

Anything with whitespace, quotes, `#`, control characters or non-ASCII look-alikes is refused: in an
ssh config such a value could inject a directive (`ProxyCommand ...`) or silently name another host.
"""

from __future__ import annotations

import re

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import N_, _

_ALIAS_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
_USER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9._-]{0,31}$")
_LABEL_RE = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
_IPV6_RE = re.compile(r"^[0-9A-Fa-f:.]{2,45}$")


def _common(field: str, value: str, what: str) -> None:
    what = _(what)  # the field's name, marked N_ by the caller
    if not value:
        raise ValidationError(field, _("{what} is empty.").format(what=what))
    if any(c.isspace() for c in value):
        raise ValidationError(
            field, _("{what} must not contain spaces or line breaks.").format(what=what)
        )
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValidationError(
            field, _("{what} must not contain control characters.").format(what=what)
        )
    if any(c in "\"'#`$\\;" for c in value):
        raise ValidationError(
            field,
            _("{what} must not contain quotes, '#', '$', '\\' or ';'.").format(what=what),
        )
    if not value.isascii():
        raise ValidationError(
            field,
            _("{what} must use plain ASCII letters: {value} has look-alike characters.").format(
                what=what, value=repr(value)
            ),
        )


def validate_alias(value: str) -> str:
    """An ssh alias: letters, digits, '.', '_' and '-', starting with a letter or digit."""
    _common("alias", value, N_("The alias"))
    if not _ALIAS_RE.match(value):
        raise ValidationError(
            "alias",
            _(
                "The alias may use letters, digits, '.', '_' and '-', must start with a letter or "
                "digit and be at most 63 characters long."
            ),
        )
    return value


def validate_hostname(value: str) -> str:
    """A DNS name, an IPv4 address or an IPv6 address."""
    _common("hostname", value, N_("The host name"))
    if ":" in value:
        if not _IPV6_RE.match(value):
            raise ValidationError(
                "hostname", _("{value} is not a valid IPv6 address.").format(value=repr(value))
            )
        return value
    if len(value) > 253 or not all(_LABEL_RE.match(label) for label in value.split(".")):
        raise ValidationError(
            "hostname",
            _(
                "{value} is not a valid host name or IP address (letters, digits, '-' and '.')."
            ).format(value=repr(value)),
        )
    return value


def validate_user(value: str) -> str:
    """A POSIX login name."""
    _common("user", value, N_("The user name"))
    if not _USER_RE.match(value):
        raise ValidationError(
            "user",
            _(
                "The user name may use letters, digits, '.', '_' and '-' and must start with a "
                "letter or '_'."
            ),
        )
    return value


def validate_port(value: int | str) -> int:
    """A TCP port, 1-65535."""
    try:
        port = int(str(value).strip())
    except ValueError:
        raise ValidationError(
            "port", _("The port {value} is not a number.").format(value=repr(value))
        ) from None
    if not 1 <= port <= 65535:
        raise ValidationError(
            "port", _("The port must be between 1 and 65535, not {port}.").format(port=port)
        )
    return port


def validate_name(field: str, value: str, what: str, max_len: int = 64) -> str:
    """A free-text display name: no control characters, not empty, bounded length. `what` names
    the field in English, marked with N_() by the caller; it is translated here."""
    what = _(what)
    value = value.strip()
    if not value:
        raise ValidationError(field, _("{what} is empty.").format(what=what))
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValidationError(
            field, _("{what} must not contain control characters.").format(what=what)
        )
    if len(value) > max_len:
        raise ValidationError(
            field,
            _("{what} is longer than {max_len} characters.").format(what=what, max_len=max_len),
        )
    return value
