"""Understand the `ssh ...` line a provider's console shows ("ssh -p 41234 root@1.2.3.4"), so the
user pastes it instead of copying host, port and user one by one.

Options are read the way OpenSSH reads them: flags may be bundled (`-vp 2222`), a value may be
attached (`-p2222`) or separate, and options may follow the destination (`ssh root@h -p 22`).
Everything after the first argument that is not an option is the remote command and is ignored.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from urllib.parse import urlsplit

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.validation import validate_hostname, validate_port, validate_user

# OpenSSH's flags that take a value (ssh.c getopt string); all other letters are plain switches.
_WITH_VALUE = frozenset("BbcDEeFIiJLlmOopQRSWw")
_SWITCHES = frozenset("46AaCfGgKkMNnqsTtVvXxYy")
_PROMPTS = ("$ ", "# ", "> ", "% ")


@dataclass(frozen=True)
class SshTarget:
    """Where a pasted command connects: host, port and user, plus what the app does not copy."""

    hostname: str
    port: int = 22
    user: str = "root"
    identity_file: str | None = None
    forwards: tuple[str, ...] = ()  # e.g. "-L 8080:localhost:8080"
    jump: str | None = None  # -J / ProxyJump
    notes: tuple[str, ...] = ()  # what was read but not applied, in words


def _command_line(text: str) -> str:
    """The first non-empty line that looks like an ssh command; prompts like '$ ' are dropped."""
    lines = [line.strip() for line in text.replace("\r", "\n").split("\n") if line.strip()]
    if not lines:
        raise ValidationError(
            "command",
            _("Paste the ssh command your provider shows, e.g. ssh -p 2222 root@1.2.3.4."),
        )
    for line in lines:
        for prompt in _PROMPTS:
            if line.startswith(prompt):
                line = line[len(prompt) :].lstrip()
        if line.split(" ", 1)[0].rsplit("/", 1)[-1] == "ssh":
            return line
    return lines[0]


def _split(line: str) -> list[str]:
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise ValidationError(
            "command", _("The command cannot be read: {error}.").format(error=exc)
        ) from None
    if words and words[0].rsplit("/", 1)[-1] == "ssh":
        words = words[1:]
    if not words:
        raise ValidationError("command", _("The command names no host: expected user@host."))
    return words


class _Reader:
    """Collects options the way OpenSSH's getopt loop does."""

    def __init__(self) -> None:
        self.values: dict[str, list[str]] = {}
        self.notes: list[str] = []

    def option(self, words: list[str], i: int) -> int:
        """Read the option word at `i` (maybe bundled, maybe with its value); the next index."""
        word = words[i]
        j = 1
        while j < len(word):
            flag = word[j]
            if flag in _WITH_VALUE:
                value = word[j + 1 :]
                if not value:
                    if i + 1 >= len(words):
                        raise ValidationError(
                            "command", _("The option -{flag} has no value.").format(flag=flag)
                        )
                    i += 1
                    value = words[i]
                self.values.setdefault(flag, []).append(value)
                return i + 1
            if flag not in _SWITCHES:
                raise ValidationError(
                    "command", _("-{flag} is not an ssh option.").format(flag=flag)
                )
            j += 1
        return i + 1

    def last(self, flag: str) -> str | None:
        found = self.values.get(flag)
        return found[-1] if found else None


def _destination(word: str) -> tuple[str | None, str, int | None]:
    """user, host and port from `user@host`, `host` or `ssh://user@host:port`."""
    if word.startswith("ssh://"):
        parts = urlsplit(word)
        try:
            port = parts.port
        except ValueError:
            raise ValidationError(
                "port", _("The port in {word} is not a number.").format(word=repr(word))
            ) from None
        return parts.username, parts.hostname or "", port
    user, sep, host = word.rpartition("@")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return (user if sep else None), host, None


def _options(reader: _Reader) -> dict[str, str]:
    """`-o Key=Value` / `-o "Key Value"` settings with lower-case keys."""
    out: dict[str, str] = {}
    for item in reader.values.get("o", []):
        key, _sep, value = item.replace("=", " ", 1).partition(" ")
        out[key.strip().lower()] = value.strip()
    return out


def parse_ssh_command(text: str) -> SshTarget:
    """Host, port and user from a pasted ssh command; ValidationError names the field at fault."""
    words = _split(_command_line(text))
    reader = _Reader()
    destination: str | None = None
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--" and destination is None:
            i += 1
            if i < len(words):
                destination = words[i]
                i += 1
            continue
        if word.startswith("-") and len(word) > 1:
            i = reader.option(words, i)
        elif destination is None:
            destination = word
            i += 1
        else:
            reader.notes.append(
                _("the remote command {command} is not used").format(
                    command=repr(" ".join(words[i:]))
                )
            )
            break
    if destination is None:
        raise ValidationError("command", _("The command names no host: expected user@host."))
    user, host, url_port = _destination(destination)
    opts = _options(reader)
    host = opts.get("hostname", host)
    port_text = reader.last("p") or opts.get("port") or (str(url_port) if url_port else "22")
    user = reader.last("l") or user or opts.get("user") or "root"
    forwards = tuple(
        f"-{flag} {spec}" for flag in ("L", "R", "D") for spec in reader.values.get(flag, [])
    )
    notes = list(reader.notes)
    if forwards:
        notes.append(
            _(
                "the -L port forwards become this host's tunnels (Hosts page → Tunnels); -R and -D "
                "are not used"
            )
        )
    identity = reader.last("i") or opts.get("identityfile")
    if identity:
        notes.append(
            _(
                "the key file {path} is not used: the app connects with this platform's own key"
            ).format(path=repr(identity))
        )
    return SshTarget(
        hostname=validate_hostname(host),
        port=validate_port(port_text),
        user=validate_user(user),
        identity_file=identity,
        forwards=forwards,
        jump=reader.last("J") or opts.get("proxyjump"),
        notes=tuple(notes),
    )
