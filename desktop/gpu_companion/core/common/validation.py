"""Field checks for values that end up in ssh config files and remote commands.

Anything with whitespace, quotes, `#`, control characters or non-ASCII look-alikes is refused: in an
ssh config such a value could inject a directive (`ProxyCommand ...`) or silently name another host.
"""

from __future__ import annotations

import re

from gpu_companion.core.common.errors import ValidationError

_ALIAS_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
_USER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9._-]{0,31}$")
_LABEL_RE = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
_IPV6_RE = re.compile(r"^[0-9A-Fa-f:.]{2,45}$")


def _common(field: str, value: str, what: str) -> None:
    if not value:
        raise ValidationError(field, f"{what} is empty.")
    if any(c.isspace() for c in value):
        raise ValidationError(field, f"{what} must not contain spaces or line breaks.")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValidationError(field, f"{what} must not contain control characters.")
    if any(c in "\"'#`$\\;" for c in value):
        raise ValidationError(field, f"{what} must not contain quotes, '#', '$', '\\' or ';'.")
    if not value.isascii():
        raise ValidationError(
            field, f"{what} must use plain ASCII letters: {value!r} has look-alike characters."
        )


def validate_alias(value: str) -> str:
    """An ssh alias: letters, digits, '.', '_' and '-', starting with a letter or digit."""
    _common("alias", value, "The alias")
    if not _ALIAS_RE.match(value):
        raise ValidationError(
            "alias",
            "The alias may use letters, digits, '.', '_' and '-', must start with a letter or "
            "digit and be at most 63 characters long.",
        )
    return value


def validate_hostname(value: str) -> str:
    """A DNS name, an IPv4 address or an IPv6 address."""
    _common("hostname", value, "The host name")
    if ":" in value:
        if not _IPV6_RE.match(value):
            raise ValidationError("hostname", f"{value!r} is not a valid IPv6 address.")
        return value
    if len(value) > 253 or not all(_LABEL_RE.match(label) for label in value.split(".")):
        raise ValidationError(
            "hostname",
            f"{value!r} is not a valid host name or IP address (letters, digits, '-' and '.').",
        )
    return value


def validate_user(value: str) -> str:
    """A POSIX login name."""
    _common("user", value, "The user name")
    if not _USER_RE.match(value):
        raise ValidationError(
            "user",
            "The user name may use letters, digits, '.', '_' and '-' and must start with a "
            "letter or '_'.",
        )
    return value


def validate_port(value: int | str) -> int:
    """A TCP port, 1-65535."""
    try:
        port = int(str(value).strip())
    except ValueError:
        raise ValidationError("port", f"The port {value!r} is not a number.") from None
    if not 1 <= port <= 65535:
        raise ValidationError("port", f"The port must be between 1 and 65535, not {port}.")
    return port


def validate_name(field: str, value: str, what: str, max_len: int = 64) -> str:
    """A free-text display name: no control characters, not empty, bounded length."""
    value = value.strip()
    if not value:
        raise ValidationError(field, f"{what} is empty.")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValidationError(field, f"{what} must not contain control characters.")
    if len(value) > max_len:
        raise ValidationError(field, f"{what} is longer than {max_len} characters.")
    return value
