"""Per-host checklist settings: what to sync, what to archive, what to scan, what to confirm."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, replace
from datetime import date
from typing import Any

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import N_, _

BUILTIN_KEYS = ("checkpoints", "archive", "leftovers", "processes")
_NAME_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
# Caches that are re-downloadable by design: never "left behind".
KNOWN_CACHES = (
    "~/.cache",
    "~/.conda/pkgs",
    "~/miniconda3/pkgs",
    "~/anaconda3/pkgs",
    "~/.local/share/Trash",
    "~/.npm",
    "~/.nv",
    "~/.triton",
)
DEFAULT_IGNORED_PROCESSES = ("unattended-upgrade", "networkd-dispatcher")
_NAME_PART_RULE = {
    "project": N_(
        "The project goes into the archive name: use letters, digits, '.', '_', '+' or '-' "
        "(up to 64), not {value}."
    ),
    "precision": N_(
        "The precision goes into the archive name: use letters, digits, '.', '_', '+' or '-' "
        "(up to 64), not {value}."
    ),
}


@dataclass(frozen=True)
class CustomCommand:
    label: str
    command: str


@dataclass(frozen=True)
class ChecklistConfig:
    """Remote paths may start with `~/`; relative paths are relative to the login's home."""

    project: str = "project"
    precision: str = "bf16"
    synced_dirs: tuple[str, ...] = ()
    archive_paths: tuple[str, ...] = ()
    scan_roots: tuple[str, ...] = ("~",)
    size_threshold_mib: int = 100
    dismissed: tuple[tuple[str, str], ...] = ()  # (absolute path, reason)
    manual: tuple[str, ...] = (N_("Data disk snapshot taken"),)  # stored and matched in English
    custom: tuple[CustomCommand, ...] = ()
    ignored_processes: tuple[str, ...] = DEFAULT_IGNORED_PROCESSES
    disabled: tuple[str, ...] = ()  # built-in item keys switched off

    def validated(self) -> ChecklistConfig:
        for name, value in (("project", self.project), ("precision", self.precision)):
            if not _NAME_PART.match(value):
                raise ValidationError(name, _(_NAME_PART_RULE[name]).format(value=repr(value)))
        if self.size_threshold_mib < 1:
            raise ValidationError(
                "size_threshold_mib", _("The size threshold must be at least 1 MiB.")
            )
        for path in (*self.synced_dirs, *self.archive_paths, *self.scan_roots):
            _check_path(path)
        for c in self.custom:
            if not c.label.strip() or not c.command.strip():
                raise ValidationError("custom", _("Each custom item needs a label and a command."))
        unknown = set(self.disabled) - set(BUILTIN_KEYS)
        if unknown:
            raise ValidationError(
                "disabled",
                _("Unknown built-in items: {items}.").format(items=", ".join(sorted(unknown))),
            )
        return self

    def archive_name(self, day: date, zstd: bool) -> str:
        """`<project>-<YYYYMMDD>-<precision>.tar.zst`, or `.tar.gz` where zstd is missing."""
        return f"{self.project}-{day:%Y%m%d}-{self.precision}.tar.{'zst' if zstd else 'gz'}"

    def dismiss(self, path: str, reason: str) -> ChecklistConfig:
        if not reason.strip():
            raise ValidationError("reason", _("Say why this file can be left behind."))
        kept = tuple((p, r) for p, r in self.dismissed if p != path)
        return replace(self, dismissed=(*kept, (path, reason.strip())))

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ChecklistConfig:
        data: dict[str, Any] = json.loads(text)
        known = {f for f in cls.__dataclass_fields__}
        data = {k: v for k, v in data.items() if k in known}
        for key in (
            "synced_dirs",
            "archive_paths",
            "scan_roots",
            "manual",
            "ignored_processes",
            "disabled",
        ):
            if key in data:
                data[key] = tuple(data[key])
        if "dismissed" in data:
            data["dismissed"] = tuple((str(p), str(r)) for p, r in data["dismissed"])
        if "custom" in data:
            data["custom"] = tuple(CustomCommand(**c) for c in data["custom"])
        return cls(**data)


def _check_path(path: str) -> None:
    if not path.strip() or any(ch in path for ch in "\n\r\x00"):
        raise ValidationError(
            "paths", _("{path} is not a usable remote path.").format(path=repr(path))
        )
