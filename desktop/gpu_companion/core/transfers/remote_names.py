"""Names and modes that come back from a rented host are data, never paths to join blindly.

A host can list `../../x`, `/abs/x`, names with NUL or bytes that are not UTF-8, and setuid or
world-writable modes; everything the SFTP engine and the remote browser take from it passes here.
Names that are not UTF-8 are kept as str with surrogate escapes (what `os.fsdecode` gives), so
they round-trip to the same bytes on the local disk and in requests back to the host.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _

# What a received file may keep: rwx for the owner, r-x for others; never setuid, setgid, sticky
# or group/other write.
SAFE_MODE_MASK = 0o755


class UnsafeRemoteName(UserError):
    """The host listed a name that would leave the destination folder (or is no name at all)."""

    def __init__(self, name: str, where: str) -> None:
        shown = ascii(name) if not name.isprintable() else repr(name)
        super().__init__(
            _(
                "The host listed an unsafe name {name} in {where}: a file name must not contain "
                "'/', NUL, or be '.' or '..'. Nothing was written outside the download folder."
            ).format(name=shown, where=where),
            hint=_("Rename or remove that entry on the host, then retry."),
        )
        self.name = name


def check_remote_name(name: str, where: str) -> str:
    """`name` as one path component, or UnsafeRemoteName."""
    if name in ("", ".", "..") or "/" in name or "\0" in name:
        raise UnsafeRemoteName(name, where)
    return name


def safe_mode(mode: int | None) -> int:
    """Permission bits a file received from a host may have locally."""
    return stat.S_IMODE(mode or 0o644) & SAFE_MODE_MASK


def remote_bytes(path: str) -> bytes:
    """A remote path for paramiko calls: the exact bytes, including names that are not UTF-8."""
    return path.encode("utf-8", "surrogateescape")


def decode_name(raw: bytes) -> str:
    """Bytes from the host as str; invalid UTF-8 kept as surrogate escapes, never replaced."""
    return raw.decode("utf-8", "surrogateescape")


def display_name(name: str) -> str:
    """A name fit for messages, the database and labels (bytes that are not UTF-8 as U+FFFD)."""
    return remote_bytes(name).decode("utf-8", "replace")


def listdir_attr(sftp: Any, path: str) -> list[Any]:
    """`SFTPClient.listdir_attr` that keeps names that are not UTF-8 (paramiko raises on them).

    Uses paramiko's request primitives; each entry is an SFTPAttributes with a str filename.
    """
    from paramiko.sftp import CMD_CLOSE, CMD_HANDLE, CMD_NAME, CMD_OPENDIR, CMD_READDIR
    from paramiko.sftp_attr import SFTPAttributes
    from paramiko.sftp_client import SFTPError

    t, msg = sftp._request(CMD_OPENDIR, sftp._adjust_cwd(remote_bytes(path)))
    if t != CMD_HANDLE:
        raise SFTPError("Expected handle")
    handle = msg.get_binary()
    entries: list[Any] = []
    try:
        while True:
            try:
                t, msg = sftp._request(CMD_READDIR, handle)
            except EOFError:
                break
            if t != CMD_NAME:
                raise SFTPError("Expected name response")
            for _i in range(msg.get_int()):
                filename = decode_name(msg.get_string())
                longname = decode_name(msg.get_string())
                attr = SFTPAttributes._from_msg(msg, filename, longname)
                if filename not in (".", ".."):
                    entries.append(attr)
    finally:
        sftp._request(CMD_CLOSE, handle)
    return entries


def inside(root: str, path: str, beside: bool = False) -> bool:
    """Whether `path` (after resolving links that exist) stays inside `root` (or inside the folder
    of `root` when `beside`: a partial file next to its final file)."""
    real_root = os.path.realpath(os.path.dirname(root) if beside else root)
    real = os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)
