"""Lists folders on a host over SFTP, one level at a time (the remote path picker is lazy).

The host's names are data: entries that are not one safe path component (`..`, `/`, NUL) or
not UTF-8 (a picked path is stored as text) are left out and counted, never joined into a path.
"""

from __future__ import annotations

import posixpath
import stat
from dataclasses import dataclass
from typing import Any

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.transfers.engine import ClientFactory
from gpu_companion.core.transfers.remote_names import (
    UnsafeRemoteName,
    check_remote_name,
    listdir_attr,
)


@dataclass(frozen=True)
class RemoteEntry:
    name: str
    path: str
    is_dir: bool
    size: int


def _usable(name: str, where: str) -> bool:
    try:
        check_remote_name(name, where)
        name.encode("utf-8")
    except (UnsafeRemoteName, UnicodeEncodeError):
        return False
    return True


def list_remote_dir(
    client_factory: ClientFactory, host: Host, path: str = ".", *, dirs_only: bool = True
) -> tuple[str, list[RemoteEntry]]:
    """(the absolute path, its entries sorted folders first); raises UserError when unreadable."""
    client: Any = client_factory(host)
    try:
        sftp = client.open_sftp()
        try:
            absolute = sftp.normalize(path)
            attrs = listdir_attr(sftp, absolute)
        except OSError as exc:
            raise UserError(
                _("Cannot list {path} on {host}: {problem}").format(
                    path=path, host=host.alias, problem=exc
                )
            ) from exc
        finally:
            sftp.close()
    finally:
        client.close()
    entries = [
        RemoteEntry(
            a.filename,
            posixpath.join(absolute, a.filename),
            stat.S_ISDIR(a.st_mode or 0),
            a.st_size or 0,
        )
        for a in attrs
        if _usable(a.filename, absolute)
    ]
    if dirs_only:
        entries = [e for e in entries if e.is_dir]
    entries.sort(key=lambda e: (not e.is_dir, e.name.lower()))
    return absolute, entries
