"""Private runtime folders and who answers on a Unix socket, checked before any key goes there.

A folder is the app's only when it is ours, 0700, not a link, and no other user can rename it
away (each folder above it is root's or ours and not writable by others, or sticky like /tmp).
A socket is the app's agent only when the file is a socket of ours and the process listening on
it runs as our uid (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS and the BSDs). Without
XDG_RUNTIME_DIR, the folder is in the data dir, or a fresh `mkdtemp` name under /tmp recorded
in the data dir: never a name a neighbour can guess and make first.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
import struct
import sys
import tempfile
from pathlib import Path

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import N_, _

# sun_path is 108 bytes on Linux and 104 on macOS and the BSDs, the final NUL included
SOCKET_PATH_MAX = 107 if sys.platform.startswith("linux") else 103
TEMP_BASE = Path("/tmp")  # short on every platform; macOS's $TMPDIR is too long for sockets
TEMP_PREFIX = "gpu-companion-"
RECORD_NAME = "runtime-dir"  # in the data dir: the mkdtemp name the app's processes share

_HINT = N_(
    "Another account may be waiting for your keys there. Remove it (as its owner, or with sudo) "
    "or set XDG_RUNTIME_DIR to a private folder, then start the app again."
)


def private_dir_problem(path: Path) -> str | None:
    """Why `path` is not a private folder of ours (None when it is): for the caller's words
    (a predicate in the current language: "The folder {path} {problem}: ...")."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        if os.path.islink(path):
            return _("is a link")
        if exc.errno == errno.ENOTDIR:
            return _("is not a folder")
        return _("cannot be opened ({error})").format(error=exc.strerror)
    try:
        info = os.fstat(fd)
    finally:
        os.close(fd)
    if info.st_uid != os.getuid():
        return _("is owned by another user (uid {uid})").format(uid=info.st_uid)
    if info.st_mode & 0o077:
        return _("other users can open it (mode {mode})").format(
            mode=f"{stat.S_IMODE(info.st_mode):04o}"
        )
    return parents_problem(path)


def parents_problem(path: Path) -> str | None:
    """Why another user could swap `path` through a folder above it (rename it, retarget a
    link on the way), or None: each is root's or ours, and not writable by others unless
    sticky like /tmp. Folders not made yet are skipped."""
    lexical = Path(os.path.abspath(path)).parent
    for p in (lexical, *lexical.parents):  # a link on the way must not be someone else's
        try:
            info = os.lstat(p)
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode) and info.st_uid not in (0, os.getuid()):
            return _("sits under {path}, a link owned by another user (uid {uid})").format(
                path=p, uid=info.st_uid
            )
    real = Path(os.path.realpath(lexical))
    for p in (real, *real.parents):
        try:
            info = os.stat(p)
        except OSError:
            continue
        if info.st_uid not in (0, os.getuid()):
            return _("sits under {path}, which is owned by another user (uid {uid})").format(
                path=p, uid=info.st_uid
            )
        if info.st_mode & 0o022 and not info.st_mode & stat.S_ISVTX:
            return _("sits under {path}, which other users can change").format(path=p)
    return None


def check_private_dir(path: Path) -> None:
    """UserError unless `path` is a private folder of ours (see private_dir_problem)."""
    problem = private_dir_problem(path)
    if problem is not None:
        raise UserError(
            # i18n: {problem} is a predicate such as "is a link" or "is owned by another user"
            _(
                "The folder {path} {problem}: GPU Companion will not use it for its ssh agent."
            ).format(path=path, problem=problem),
            hint=_(_HINT),
        )


def ensure_private_dir(path: Path) -> None:
    """Create `path` (and missing parents) 0700, then check it: one that was there already is
    used only if it passes, never "fixed" with a chmod (someone may have been inside)."""
    missing = []
    p = path
    while not os.path.lexists(p) and p != p.parent:
        missing.append(p)
        p = p.parent
    for new in reversed(missing):
        try:
            os.mkdir(new, 0o700)
        except FileExistsError:
            continue  # made meanwhile by someone else: the check below decides
        except OSError as exc:
            raise UserError(
                _("Could not create {path}: {error}.").format(path=new, error=exc.strerror)
            ) from exc
        _own_mode(new)
    check_private_dir(path)


def _own_mode(path: Path) -> None:
    """0700 on a folder we just made (mkdir's mode went through the umask), never on a link."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        if os.fstat(fd).st_uid == os.getuid():
            os.fchmod(fd, 0o700)
    finally:
        os.close(fd)


def peer_uid(path: Path, timeout_s: float = 5) -> int | None:
    """The uid of the process listening on the Unix socket `path`; None where this system
    cannot tell. OSError (ConnectionRefusedError, FileNotFoundError) when nothing listens."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout_s)
        sock.connect(os.fspath(path))
        return _peer_uid_of(sock)
    finally:
        sock.close()


def _peer_uid_of(sock: socket.socket) -> int | None:
    peercred = getattr(socket, "SO_PEERCRED", None)
    if peercred is not None:  # Linux: struct ucred {pid_t pid; uid_t uid; gid_t gid}
        size = struct.calcsize("iII")
        _pid, uid, _gid = struct.unpack("iII", sock.getsockopt(socket.SOL_SOCKET, peercred, size))
        return int(uid)
    if sys.platform == "darwin" or "bsd" in sys.platform:
        # struct xucred {u_int cr_version; uid_t cr_uid; short cr_ngroups; gid_t cr_groups[16]}
        # at level SOL_LOCAL (0): what getpeereid(3) reads; Python has no getpeereid
        local_peercred = getattr(socket, "LOCAL_PEERCRED", 0x001)
        size = struct.calcsize("IIh") + 2 + 16 * 4
        try:
            raw = sock.getsockopt(0, local_peercred, size)
        except OSError:
            return None
        _version, uid = struct.unpack_from("II", raw)
        return int(uid)
    return None


def check_agent_socket(path: Path, started_here: bool = False) -> None:
    """UserError unless `path` is a socket of ours whose listener runs as our uid. OSError
    (ConnectionRefusedError, FileNotFoundError) when nothing listens there. `started_here`: the
    agent is this process's child, so a system that cannot name the peer may still use it."""
    info = os.lstat(path)
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.getuid():
        raise UserError(
            _("{path} is not a socket of yours (owner uid {uid}): no key was sent to it.").format(
                path=path, uid=info.st_uid
            ),
            hint=_(_HINT),
        )
    uid = peer_uid(path)
    if uid is None:
        if started_here:
            return
        raise UserError(
            _(
                "This system cannot tell who answers on {path}, so GPU Companion will not send "
                "keys to an ssh agent it did not start itself."
            ).format(path=path),
            hint=_("Close the other GPU Companion window, or run the command from the window."),
        )
    if uid != os.getuid():
        raise UserError(
            _(
                "The ssh agent at {path} runs as another user (uid {uid}): no key was sent to it."
            ).format(path=path, uid=uid),
            hint=_(_HINT),
        )


def recorded_temp_dir(data_dir: Path) -> Path:
    """A private folder under /tmp with an unguessable name, the same for every process of
    this data dir: the name is recorded in the data dir. A recorded folder that is gone (a
    reboot) is made again under the same name; one someone else holds is dropped for a fresh
    name, never adopted."""
    record = data_dir / RECORD_NAME
    recorded = _read_record(record)
    if recorded is not None:
        try:
            os.mkdir(recorded, 0o700)
            _own_mode(recorded)
        except FileExistsError:
            pass
        except OSError:
            recorded = None
        if recorded is not None and private_dir_problem(recorded) is None:
            return recorded
    fresh = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=TEMP_BASE))
    try:
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        return _record(record, fresh, replace=os.path.lexists(record))
    except (OSError, UserError):
        return fresh  # unrecorded: this process alone uses it


def _read_record(record: Path) -> Path | None:
    try:
        fd = os.open(record, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        text = f.read(512).decode(errors="replace").strip()
    path = Path(text)
    if path.parent != TEMP_BASE or not path.name.startswith(TEMP_PREFIX):
        return None
    return path


def _record(record: Path, fresh: Path, replace: bool) -> Path:
    """Write the record; two processes starting at once agree on the first one written."""
    fd, tmp = tempfile.mkstemp(prefix=f".{record.name}.", dir=record.parent)  # O_EXCL|O_NOFOLLOW
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(os.fsencode(fresh) + b"\n")
            f.flush()
            os.fsync(f.fileno())
        if replace:
            os.replace(tmp, record)
            return fresh
        try:
            os.link(tmp, record)  # fails when another process recorded its own first
        except FileExistsError:
            theirs = _read_record(record)
            if theirs is not None and private_dir_problem(theirs) is None:
                os.rmdir(fresh)
                return theirs
            os.replace(tmp, record)
        return fresh
    finally:
        Path(tmp).unlink(missing_ok=True)
