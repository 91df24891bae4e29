"""What the rsync on each side can do, read from `rsync --version`.

Rented images ship anything from macOS's 2.6.9 (or openrsync) to git builds: the transfer command
only asks for `--info=progress2` or `--protect-args` where the version has them.
"""

from __future__ import annotations

import re

RsyncVersion = tuple[int, int, int]

PROGRESS2_SINCE: RsyncVersion = (3, 1, 0)
PROTECT_ARGS_SINCE: RsyncVersion = (3, 0, 0)

# `rsync  version 3.2.7  protocol version 31`, `rsync  version v3.2.3-133-g512acd12 ...`,
# openrsync's `rsync version 2.6.9 compatible`; never the protocol number.
_VERSION_LINE_RE = re.compile(r"\brsync\s+version\s+(?P<v>\S+)", re.IGNORECASE)
_VERSION_RE = re.compile(r"^v?(?P<major>\d+)\.(?P<minor>\d+)(?:\.(?P<patch>\d+))?")


def parse_version_string(text: str) -> RsyncVersion | None:
    """`3.2.7`, `v3.2.3-133-g512acd12`, `3.4.1dev`, `3.1` → (major, minor, patch)."""
    m = _VERSION_RE.match(text.strip())
    if m is None:
        return None
    return int(m.group("major")), int(m.group("minor")), int(m.group("patch") or 0)


def parse_rsync_version(text: str) -> RsyncVersion | None:
    """The version from `rsync --version` output, or None when the text is not rsync's."""
    m = _VERSION_LINE_RE.search(text)
    return parse_version_string(m.group("v")) if m else None


def is_openrsync(text: str) -> bool:
    """macOS 15+ ships openrsync: no `--info=progress2`; its `to-check=N/M` counts files done."""
    return "openrsync" in text.lower()


def supports_progress2(version: RsyncVersion | None) -> bool:
    """`--info=progress2` (one line for the whole transfer) exists since 3.1.0."""
    return version is not None and version >= PROGRESS2_SINCE


def supports_protect_args(version: RsyncVersion | None) -> bool:
    """`--protect-args`/`-s` exists since 3.0.0 (3.2.7+ also calls it `--secluded-args`)."""
    return version is not None and version >= PROTECT_ARGS_SINCE
