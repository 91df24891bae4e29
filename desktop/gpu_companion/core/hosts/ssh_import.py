"""Import hosts from the user's own ~/.ssh/config (read only: that file is never written here)."""

from __future__ import annotations

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


def _aliases(config_text: str) -> list[str]:
    aliases: list[str] = []
    for line in config_text.splitlines():
        parts = line.strip().split(None, 1)
        if len(parts) == 2 and parts[0].lower() == "host":
            for name in parts[1].split():
                if not any(c in name for c in "*?!") and name not in aliases:
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
