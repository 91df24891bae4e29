"""Import hosts from the user's own ~/.ssh/config (read only: that file is never written here).

The import needs the user's own `Host` blocks, so it reads the text with paramiko's SSHConfig
rather than `ssh -G` (core/ssh/resolve.py), and it never runs a `Match exec` command: such
blocks are taken out first and count as not matching (paramiko would run them).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import Host


@dataclass(frozen=True)
class ImportCandidate:
    """One alias found in the config: the host it would become, or why it cannot be imported."""

    host: Host | None
    alias: str
    problem: str = ""
    exists: bool = False


class _Unparsable(ValueError):
    pass


def ssh_words(line: str) -> list[str]:
    """One config line split as OpenSSH's argv_split does: whitespace ends a word outside
    quotes, '"' and '\'' quote anywhere in a word (`ex""ec` is `exec`), a backslash escapes a
    quote, a backslash or a space, and '#' starting a word ends the line. An unclosed quote
    raises _Unparsable (ssh refuses such a line too)."""
    words: list[str] = []
    i, n = 0, len(line)
    while i < n:
        if line[i] in " \t\r\n":
            i += 1
            continue
        if line[i] == "#":
            break
        word: list[str] = []
        quote = ""
        while i < n:
            c = line[i]
            if (
                c == "\\"
                and i + 1 < n
                and (line[i + 1] in "'\"\\" or (not quote and line[i + 1] == " "))
            ):
                i += 1
                word.append(line[i])
            elif not quote and c in " \t\r\n":
                break
            elif not quote and c in "\"'":
                quote = c
            elif quote and c == quote:
                quote = ""
            else:
                word.append(c)
            i += 1
        if quote:
            raise _Unparsable(line)
        words.append("".join(word))
    return words


def _keyword(line: str) -> tuple[str, list[str]]:
    """The keyword (lower case) and its arguments; `Keyword=value` and `Keyword = value` too."""
    words = ssh_words(line)
    if not words:
        return "", []
    key, eq, rest = words[0].partition("=")
    args = ([rest] if rest else []) + words[1:]
    if not eq and args and args[0].startswith("="):
        args[0] = args[0][1:]
        if not args[0]:
            args = args[1:]
    return key.lower(), args


# How paramiko reads a line (its SSHConfig.SETTINGS_REGEX, with Python's Unicode \s and \w)
_PARAMIKO_LINE = re.compile(r"(\w+)(?:\s*=\s*|\s+)(.+)")


def _match_criteria(line: str) -> list[list[str]] | None:
    """The criteria of a `Match` line as OpenSSH and as paramiko would split them (both, as
    the import must be safe under either); None for any other line. An unclosed quote counts
    as a criterion `exec`: ssh refuses the line, and when in doubt nothing may run."""
    try:
        key, args = _keyword(line)
    except _Unparsable:
        key, args = ("match", ["exec"]) if "match" in line.lower() else ("", [])
    spellings = [args] if key == "match" else []
    m = _PARAMIKO_LINE.match(line.strip())
    if m and m.group(1).lower() == "match":
        try:
            spellings.append(shlex.split(m.group(2)))
        except ValueError:
            spellings.append(["exec"])
    return spellings or None


def _is_host_line(line: str) -> bool:
    try:
        if _keyword(line)[0] == "host":
            return True
    except _Unparsable:
        pass
    m = _PARAMIKO_LINE.match(line.strip())
    return bool(m and m.group(1).lower() == "host")


def without_match_exec(config_text: str) -> tuple[str, list[int]]:
    """The text without any `Match` block that could run a command (`exec` in any spelling:
    any case, quoted, `ex""ec`, `!exec`, `exec=cmd`) - a block runs up to the next `Host` or
    `Match` line - and the numbers of the lines that start the blocks left out."""
    out: list[str] = []
    skipped: list[int] = []
    skipping = False
    for number, line in enumerate(config_text.splitlines(keepends=True), start=1):
        criteria = _match_criteria(line)
        if criteria is not None:
            skipping = any(
                w.lstrip("!").partition("=")[0].lower() == "exec" for ws in criteria for w in ws
            )
            if skipping:
                skipped.append(number)
        elif _is_host_line(line):
            skipping = False
        if not skipping:
            out.append(line)
    return "".join(out), skipped


def _aliases(config_text: str) -> list[str]:
    aliases: list[str] = []
    for line in config_text.splitlines():
        try:
            key, names = _keyword(line)
        except _Unparsable:
            continue
        if key == "host":
            for name in names:
                if name and not any(c in name for c in "*?!") and name not in aliases:
                    aliases.append(name)
    return aliases


def scan_ssh_config(
    path: Path, existing_aliases: frozenset[str] = frozenset()
) -> list[ImportCandidate]:
    """Read `path` and describe what would be imported; wildcards and negations are skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(_("Could not read {path}: {error}.").format(path=path, error=exc)) from exc
    import paramiko  # 0.1-0.25 s to import: only when the user asks for an import

    text, skipped = without_match_exec(text)
    try:
        config = paramiko.SSHConfig.from_text(text)
    except paramiko.ssh_exception.ConfigParseError as exc:
        raise UserError(_("Could not read {path}: {error}.").format(path=path, error=exc)) from exc
    out: list[ImportCandidate] = [
        ImportCandidate(
            None,
            _("Match (line {number})").format(number=number),
            problem=_(
                "skipped: it can run a command (Match exec); importing never runs commands"
            ),
        )
        for number in skipped
    ]
    for alias in _aliases(text):
        opts = config.lookup(alias)
        host = Host(
            alias=alias,
            hostname=str(opts.get("hostname", alias)),
            port=int(port) if (port := str(opts.get("port", "22"))).isdigit() else -1,
            user=str(opts.get("user", "root")),
            notes=_("imported from {path}").format(path=path),
        )
        try:
            host = host.validated()
        except ValidationError as exc:
            out.append(ImportCandidate(None, alias, problem=exc.message))
            continue
        out.append(ImportCandidate(host, alias, exists=alias.lower() in existing_aliases))
    return out
