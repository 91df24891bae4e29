"""Import hosts from the user's own ~/.ssh/config (read only: that file is never written here).

The import needs the user's own `Host` blocks, so it reads the text with paramiko's SSHConfig
rather than `ssh -G` (core/ssh/resolve.py), and it never runs a `Match exec` command: such
blocks are taken out first and count as not matching (paramiko would run them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.hosts.registry import Host


@dataclass(frozen=True)
class ImportCandidate:
    """One alias found in the config: the host it would become, or why it cannot be imported."""

    host: Host | None
    alias: str
    problem: str = ""
    exists: bool = False


# `Keyword value`, `Keyword=value` or `Keyword = value`, as ssh_config(5) and paramiko read them.
_LINE_RE = re.compile(r"^\s*(?P<key>\w+)(?:\s*=\s*|\s+)(?P<value>.*)$")


def _keyword(line: str) -> tuple[str, str]:
    m = _LINE_RE.match(line)
    return (m.group("key").lower(), m.group("value").strip()) if m else ("", "")


def without_match_exec(config_text: str) -> str:
    """The text without any `Match` block whose criteria include `exec` (or `!exec`): a block
    up to the next `Host` or `Match` line. The import must never run a command."""
    out: list[str] = []
    skipping = False
    for line in config_text.splitlines(keepends=True):
        key, value = _keyword(line)
        if key in ("host", "match"):
            words = re.split(r"[\s=]+", value.lower())
            skipping = key == "match" and any(w.lstrip("!") == "exec" for w in words)
        if not skipping:
            out.append(line)
    return "".join(out)


def _aliases(config_text: str) -> list[str]:
    aliases: list[str] = []
    for line in config_text.splitlines():
        key, value = _keyword(line)
        if key == "host":
            for name in value.split():
                name = name.strip('"')
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
        raise UserError(f"Could not read {path}: {exc}.") from exc
    import paramiko  # 0.1-0.25 s to import: only when the user asks for an import

    text = without_match_exec(text)
    config = paramiko.SSHConfig.from_text(text)
    out: list[ImportCandidate] = []
    for alias in _aliases(text):
        opts = config.lookup(alias)
        host = Host(
            alias=alias,
            hostname=str(opts.get("hostname", alias)),
            port=int(port) if (port := str(opts.get("port", "22"))).isdigit() else -1,
            user=str(opts.get("user", "root")),
            notes=f"imported from {path}",
        )
        try:
            host = host.validated()
        except ValidationError as exc:
            out.append(ImportCandidate(None, alias, problem=exc.message))
            continue
        out.append(ImportCandidate(host, alias, exists=alias.lower() in existing_aliases))
    return out
