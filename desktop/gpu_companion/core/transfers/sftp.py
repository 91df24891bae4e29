"""The fallback engine where rsync is missing on one side: SFTP over paramiko, resumable by offset.

It keeps rsync's conventions (partial data in `.rsync-partial/NAME` beside the final file, mtime
and mode kept, unchanged files skipped by size and mtime), so either engine can resume the
other's partial file, and it reports the same `TransferProgress` events. Names and modes the
host lists pass `remote_names` first: a name that would leave the download folder fails the
job, names that are not UTF-8 keep their bytes, setuid and group/other-write bits are dropped.

Links and special files: an upload never follows a link. A link that stays inside the chosen
folder (relative, never climbing above it: rsync's --safe-links rule) goes up as a link; one
pointing out, and any fifo, device or socket, is skipped and named in the job's message. A
download takes regular files only (the listing is lstat's: a link, a fifo or a device from the
host is skipped and named), so nothing it writes is a link, device node or fifo.

A download never reads past the size the host listed for a file (a host whose reads never end
cannot fill the disk). A full local disk fails the job at once, naming the folder and the space
needed, and gives back what this run wrote into the file that did not fit (see `_copy_download`).
"""

from __future__ import annotations

import errno
import hashlib
import math
import os
import posixpath
import shlex
import shutil
import stat
import threading
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpu_companion.core.common.i18n import _, ngettext
from gpu_companion.core.transfers.job import (
    PARTIAL_DIR,
    TransferControl,
    TransferJob,
    TransferNote,
    TransferOutcome,
    TransferProgress,
    is_excluded,
)
from gpu_companion.core.transfers.remote_names import (
    UnsafeRemoteName,
    check_remote_name,
    display_name,
    inside,
    listdir_attr,
    remote_bytes,
    safe_mode,
)

CHUNK = 256 * 1024
_PROGRESS_EVERY_S = 0.25
# Reads are pipelined a window at a time: a size the host lists is not trusted to queue requests
# (paramiko's prefetch(size) builds one request per 32 KiB up front: a listed petabyte hangs).
_WINDOW = 8 * 1024 * 1024
_REQUEST = 32 * 1024  # paramiko's largest read request
_MAX_MTIME = 2**40  # seconds; a later or negative mtime from a host is read as 0
_MIB = 1024 * 1024
DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})


def is_disk_full(exc: BaseException) -> bool:
    """A write failed because the disk (or the user's quota on it) is full."""
    return isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS


def disk_full_message(folder: Path, needed: int | None) -> str:
    """What a download into a full disk tells the renter: which folder, how much space, what next.
    `needed` is what the rest of the job still has to write there (None when unknown)."""
    figures = []
    if needed is not None:
        mib = max(math.ceil(needed / _MIB), 1 if needed else 0)
        figures.append(_("{n} MiB needed").format(n=mib))
    free = _free_bytes(folder)
    if free is not None:
        figures.append(_("{n} MiB free").format(n=free // _MIB))
    shown = f" ({', '.join(figures)})" if figures else ""
    return _(
        "The disk holding {folder} is full: free space there{figures}, then retry the transfer. "
        "Files that already arrived are kept and are not downloaded again."
    ).format(folder=folder, figures=shown)


def _free_bytes(folder: Path) -> int | None:
    """Free space for this user on the disk holding `folder` (or its nearest existing parent)."""
    for candidate in (folder, *folder.parents):
        try:
            return shutil.disk_usage(candidate).free
        except OSError:
            continue
    return None


class _LocalDiskFull(Exception):
    """The local disk filled up while a download wrote into it; never retried."""


@dataclass(frozen=True)
class _File:
    rel: str
    size: int
    mtime: int
    mode: int
    link: str = ""  # an upload's link that stays inside the folder: its target, sent as a link


def link_stays_inside(rel: str, target: str) -> bool:
    """rsync's --safe-links rule: a relative target that never climbs above the folder root."""
    if not target or target.startswith("/") or "\0" in target:
        return False
    depth = rel.count("/")  # folders between the root and the link
    for part in target.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return False
        elif part not in ("", "."):
            depth += 1
    return True


_MAX_NAMED = 20  # skipped entries named in the message; the rest are counted


class SftpRun:
    """One run of a job over an open paramiko SSHClient (the caller owns and closes it)."""

    def __init__(self, job: TransferJob, client: Any, control: TransferControl) -> None:
        self.job = job
        self.client = client
        self.sftp = client.open_sftp()
        self.control = control
        self._stopped = False
        self.bytes_sent = 0
        self._last_emit = 0.0
        self._started = time.monotonic()
        self._bucket_t = time.monotonic()
        self._bucket_bytes = 0
        self.skipped: list[str] = []  # links out of the folder, fifos, devices: named at the end
        control.set_stopper(self._stop)

    def _stop(self) -> None:
        self._stopped = True

    def close(self) -> None:
        self.control.set_stopper(None)
        self.sftp.close()

    # --- listing -------------------------------------------------------------------------

    def _local_files(self, root: Path) -> list[_File]:
        if root.is_file():
            st = root.stat()
            return [_File(root.name, st.st_size, int(st.st_mtime), stat.S_IMODE(st.st_mode))]
        files = []
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = os.path.relpath(dirpath, root)
            rel_dir = "" if rel_dir == "." else rel_dir
            dirnames[:] = sorted(
                d
                for d in dirnames
                if not is_excluded(posixpath.join(rel_dir, d), self.job.options.excludes)
            )
            # os.walk lists a link to a folder among the folders and never enters it
            links = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
            dirnames[:] = [d for d in dirnames if d not in links]
            for name in sorted([*filenames, *links]):
                rel = posixpath.join(rel_dir, name)
                path = Path(dirpath) / name
                if is_excluded(rel, self.job.options.excludes):
                    continue
                try:
                    st = path.lstat()  # never follows a link
                except OSError:
                    continue
                if stat.S_ISLNK(st.st_mode):
                    target = os.readlink(path)
                    if link_stays_inside(rel, target):
                        files.append(_File(rel, 0, int(st.st_mtime), 0o777, link=target))
                    else:
                        self.skipped.append(
                            _("{name} (a link out of the folder)").format(name=display_name(rel))
                        )
                elif stat.S_ISREG(st.st_mode):
                    mode = stat.S_IMODE(st.st_mode)
                    files.append(_File(rel, st.st_size, int(st.st_mtime), mode))
                else:
                    self.skipped.append(
                        _("{name} (not a regular file)").format(name=display_name(rel))
                    )
        return files

    def _remote_exists(self, path: str) -> bool:
        try:
            self.sftp.stat(remote_bytes(path))
        except FileNotFoundError:
            return False
        return True

    def _remote_files(self, root: str) -> list[_File]:
        try:
            st = self.sftp.stat(remote_bytes(root))
        except FileNotFoundError:
            return []
        if not stat.S_ISDIR(st.st_mode or 0) or not self.job.options.source_is_dir:
            name = posixpath.basename(root.rstrip("/"))
            if not stat.S_ISREG(st.st_mode or 0):  # /dev/zero, a fifo: endless, even to hash
                self.skipped.append(
                    _("{name} (not a regular file)").format(name=display_name(name))
                )
                return []
            return [_File(name, _size(st.st_size), _mtime(st.st_mtime), safe_mode(st.st_mode))]
        files: list[_File] = []
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            folder = posixpath.join(root, rel_dir) if rel_dir else root
            for attr in sorted(listdir_attr(self.sftp, folder), key=lambda a: a.filename):
                check_remote_name(attr.filename, folder)
                rel = posixpath.join(rel_dir, attr.filename)
                if is_excluded(rel, self.job.options.excludes):
                    continue
                if stat.S_ISDIR(attr.st_mode or 0):
                    stack.append(rel)
                elif stat.S_ISREG(attr.st_mode or 0):
                    mode = safe_mode(attr.st_mode)
                    files.append(_File(rel, _size(attr.st_size), _mtime(attr.st_mtime), mode))
                else:  # a link, fifo, device or socket on the host: never recreated here
                    kind = (
                        _("{name} (a link)")
                        if stat.S_ISLNK(attr.st_mode or 0)
                        else _("{name} (not a regular file)")
                    )
                    self.skipped.append(kind.format(name=display_name(rel)))
        return files

    def skipped_note(self) -> str:
        if not self.skipped:
            return ""
        named = ", ".join(self.skipped[:_MAX_NAMED])
        more = len(self.skipped) - _MAX_NAMED
        more_text = _(" and {n} more").format(n=more) if more > 0 else ""
        return ngettext(
            "Skipped {n} entry: {names}{more}.", "Skipped {n} entries: {names}{more}.",
            len(self.skipped),
        ).format(n=len(self.skipped), names=named, more=more_text)  # fmt: skip

    # --- running -------------------------------------------------------------------------

    def events(self) -> Generator[TransferProgress | TransferNote, None, TransferOutcome]:
        job = self.job
        upload = job.direction == "upload"
        local_root = Path(job.local_path)
        try:
            files = self._local_files(local_root) if upload else self._remote_files(job.remote_path)
        except UnsafeRemoteName as exc:
            return TransferOutcome("failed", message=str(exc))
        if upload and not local_root.exists():
            return TransferOutcome(
                "failed", message=_("{path} does not exist.").format(path=local_root)
            )
        if not upload and not files and not self._remote_exists(job.remote_path):
            return TransferOutcome(
                "failed",
                message=_("{path} does not exist on {host}.").format(
                    path=job.remote_path, host=job.host_alias
                ),
            )
        total = sum(f.size for f in files)
        done = 0
        for i, f in enumerate(files):
            if self._stopped:
                break
            src, dst = self._paths(f)
            partial = str(Path(dst).parent / PARTIAL_DIR / Path(dst).name)
            if not upload and not (inside(str(local_root), dst) and inside(dst, partial, True)):
                return TransferOutcome(
                    "failed",
                    message=_(
                        "{name} from the host would be written outside {folder} "
                        "(through a link there); nothing was written for it."
                    ).format(name=repr(f.rel), folder=local_root),
                    bytes_sent=self.bytes_sent,
                )
            if self._up_to_date(f, dst, upload):
                done += f.size
                continue
            copy = self._copy_upload(f, src, dst) if upload else self._copy_download(f, src, dst)
            try:
                for moved in copy:
                    done += moved
                    now = time.monotonic()
                    if now - self._last_emit >= _PROGRESS_EVERY_S:
                        self._last_emit = now
                        rate = self.bytes_sent / max(now - self._started, 1e-3)
                        eta = int((total - done) / rate) if rate > 0 else None
                        yield TransferProgress(done, total, rate, eta, display_name(f.rel))
            except _LocalDiskFull:
                needed = sum(
                    g.size for g in files[i:] if not self._up_to_date(g, self._paths(g)[1], False)
                )
                return TransferOutcome(
                    "failed",
                    message=disk_full_message(local_root, needed),
                    bytes_sent=self.bytes_sent,
                )
        requested = self.control.stop_requested
        if self._stopped and requested in ("paused", "cancelled"):
            return TransferOutcome(requested, bytes_sent=self.bytes_sent)
        yield TransferProgress(total, total, None, 0, None)
        note = self.skipped_note()
        if note:
            yield TransferNote(note, "warning")
        return TransferOutcome(
            "done", message=note, bytes_sent=self.bytes_sent, literal_bytes=self.bytes_sent
        )

    def _paths(self, f: _File) -> tuple[str, str]:
        job = self.job
        local_root = Path(job.local_path)
        if job.direction == "upload":
            src = str(local_root if local_root.is_file() else local_root / f.rel)
            return src, posixpath.join(job.remote_path, f.rel)
        if not job.options.source_is_dir:
            return job.remote_path, str(local_root / f.rel)
        return posixpath.join(job.remote_path, f.rel), str(local_root / f.rel)

    def _up_to_date(self, f: _File, dst: str, upload: bool) -> bool:
        try:
            if f.link:
                return bool(self.sftp.readlink(remote_bytes(dst)) == f.link)
            if upload:
                st = self.sftp.stat(remote_bytes(dst))
                return bool(st.st_size == f.size and int(st.st_mtime or 0) == f.mtime)
            lst = os.stat(dst)
            return lst.st_size == f.size and int(lst.st_mtime) == f.mtime
        except (FileNotFoundError, OSError):
            return False

    def _throttle(self, n: int) -> None:
        limit = self.job.options.bwlimit_kbps * 1024
        if not limit:
            return
        self._bucket_bytes += n
        ahead = self._bucket_bytes / limit - (time.monotonic() - self._bucket_t)
        if ahead > 0:
            self.control.wait(ahead)

    def _copy_upload(self, f: _File, src: str, dst: str) -> Iterator[int]:
        parent = posixpath.dirname(dst) or "."
        if f.link:  # a link inside the folder goes up as the same link
            self._makedirs(parent)
            try:
                self.sftp.remove(remote_bytes(dst))
            except OSError:
                pass  # nothing there yet
            self.sftp.symlink(remote_bytes(f.link), remote_bytes(dst))
            yield 0
            return
        partial_dir = posixpath.join(parent, PARTIAL_DIR)
        partial = posixpath.join(partial_dir, posixpath.basename(dst))
        self._makedirs(parent)
        try:
            self.sftp.mkdir(remote_bytes(partial_dir), 0o700)
        except OSError:
            pass  # exists already
        try:
            offset = self.sftp.stat(remote_bytes(partial)).st_size or 0
        except FileNotFoundError:
            offset = 0
        if offset > f.size:
            offset = 0
        yield offset
        mode = "ab" if offset else "wb"
        follow = src == self.job.local_path  # the file the user chose may itself be a link
        with _open_regular(src, follow) as lf, self.sftp.open(remote_bytes(partial), mode) as rf:
            rf.set_pipelined(True)
            lf.seek(offset)
            while not self._stopped:
                data = lf.read(CHUNK)
                if not data:
                    break
                rf.write(data)
                self.bytes_sent += len(data)
                self._throttle(len(data))
                yield len(data)
        if self._stopped:
            return
        self.sftp.chmod(remote_bytes(partial), f.mode)
        self.sftp.utime(remote_bytes(partial), (f.mtime, f.mtime))
        self.sftp.posix_rename(remote_bytes(partial), remote_bytes(dst))
        self._rmdir_quiet(partial_dir)

    def _copy_download(self, f: _File, src: str, dst: str) -> Iterator[int]:
        """Into `.rsync-partial/NAME`, appended from its size, then renamed over `dst`.

        A full disk (ENOSPC, EDQUOT) raises `_LocalDiskFull` after giving back what this run
        wrote: the partial file is cut back to the size it had when this run opened it (removed
        when this run created it). The disk that holds a download folder usually holds the app's
        store too (the job's failed state must still be saved) and the renter's other programs;
        the bytes this run added are the only ones the app can free without touching anything the
        renter had, and data an earlier paused run kept stays for the resume, which appends to it.
        """
        parent = Path(dst).parent
        partial = parent / PARTIAL_DIR / Path(dst).name
        opened_at: int | None = None  # the partial's size when this run opened it for writing
        try:
            parent.mkdir(parents=True, exist_ok=True)
            partial.parent.mkdir(mode=0o700, exist_ok=True)
            offset = partial.stat().st_size if partial.exists() else 0
            if offset > f.size:
                offset = 0
            yield offset
            opened_at = offset
            with (
                self.sftp.open(remote_bytes(src), "rb") as rf,
                open(partial, "ab" if offset else "wb") as lf,
            ):
                for data in self._remote_chunks(rf, offset, f.size):
                    lf.write(data)
                    self.bytes_sent += len(data)
                    self._throttle(len(data))
                    yield len(data)
            if self._stopped:
                return
            os.chmod(partial, f.mode)  # masked by safe_mode when listed
            os.utime(partial, (f.mtime, f.mtime))
            os.replace(partial, dst)
        except OSError as exc:
            if not is_disk_full(exc):
                raise
            if opened_at is not None:
                _give_back(partial, opened_at)
            _rmdir_if_empty(partial.parent)
            raise _LocalDiskFull(str(partial)) from exc
        _rmdir_if_empty(partial.parent)

    def _remote_chunks(self, rf: Any, offset: int, listed: int) -> Iterator[bytes]:
        """The file's bytes from `offset` up to the listed size and never past it, pipelined a
        window at a time; a short read is the end, whatever was listed. A host whose reads never
        end (or a file that grew since it was listed) gets exactly its listed size read: the
        checksum pass then tells a changed file apart, and a retry lists it again."""
        pos = offset
        while not self._stopped and pos < listed:
            end = min(pos + _WINDOW, listed)
            wanted = [(p, min(_REQUEST, end - p)) for p in range(pos, end, _REQUEST)]
            window = rf.readv(wanted)
            for (_at, size), data in zip(wanted, window, strict=False):
                data = data[:size]  # a host answering with more than was asked gets it cut
                pos += len(data)
                if data:
                    yield data
                if len(data) < size or self._stopped:
                    _join_prefetch(rf)
                    return

    def _makedirs(self, path: str) -> None:
        parts: list[str] = []
        while path not in ("", "/", "."):
            try:
                self.sftp.stat(remote_bytes(path))
                break
            except FileNotFoundError:
                parts.append(path)
                path = posixpath.dirname(path)
        for p in reversed(parts):
            self.sftp.mkdir(remote_bytes(p))

    def _rmdir_quiet(self, path: str) -> None:
        try:
            self.sftp.rmdir(remote_bytes(path))
        except OSError:
            pass  # another file's partial data is still there

    # --- verification --------------------------------------------------------------------

    def verify(self) -> list[str]:
        """Names whose sha256 differs between the two sides (missing files count)."""
        job = self.job
        upload = job.direction == "upload"
        files = (
            self._local_files(Path(job.local_path))
            if upload
            else self._remote_files(job.remote_path)
        )
        files = [f for f in files if not f.link]  # a link's target is checked as itself
        pairs = [self._paths(f) for f in files]
        local_paths = [src if upload else dst for src, dst in pairs]
        remote_paths = [dst if upload else src for src, dst in pairs]
        remote_sums = self.remote_sha256(remote_paths)
        bad = []
        for f, lp, rp in zip(files, local_paths, remote_paths, strict=True):
            if remote_sums.get(rp) != _local_sha256(lp):
                bad.append(display_name(f.rel))
        return bad

    def remote_sha256(self, paths: list[str]) -> dict[str, str | None]:
        """`sha256sum` on the host in batches; files it cannot hash are read back over SFTP."""
        sums: dict[str, str | None] = {}
        for i in range(0, len(paths), 200):
            batch = paths[i : i + 200]
            cmd = "sha256sum -- " + " ".join(shlex.quote(p) for p in batch)
            _in, out, _err = self.client.exec_command(remote_bytes(cmd))
            text = out.read().decode("utf-8", "surrogateescape")
            out.channel.recv_exit_status()
            for line in text.splitlines():  # `DIGEST  NAME`; escaped names start with `\\`
                if len(line) > 66 and not line.startswith("\\") and line[64:66] == "  ":
                    sums[line[66:]] = line[:64]
        for p in paths:
            if sums.get(p) is None:
                sums[p] = self._sftp_sha256(p)
        return sums

    def _sftp_sha256(self, path: str) -> str | None:
        h = hashlib.sha256()
        try:
            with self.sftp.open(remote_bytes(path), "rb") as rf:
                for data in self._remote_chunks(rf, 0, _size(rf.stat().st_size)):
                    h.update(data)
        except OSError:
            return None
        return h.hexdigest()


def _open_regular(path: str, follow: bool = False) -> Any:
    """`path` opened for reading only if it is still a regular file and (unless `follow`: the
    file the user chose itself) not a link: one swapped in after the listing is not followed."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, flags if follow else flags | getattr(os, "O_NOFOLLOW", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, f"{path} is no longer a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _give_back(partial: Path, size: int) -> None:
    """Cut `partial` back to `size` bytes (remove it at 0): what one run wrote, nothing else."""
    try:
        if size:
            os.truncate(partial, size)
        else:
            partial.unlink(missing_ok=True)
    except OSError:
        pass  # the failure is reported either way; a resume starts from what is there


def _rmdir_if_empty(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:
        pass  # another file's partial data is still there, or it was never made


def _join_prefetch(rf: Any) -> None:
    """Wait until paramiko's read-ahead thread for `rf` has sent its requests, so closing the file
    early (end of file before the listed size, a pause) never races it; it has no public handle.
    """
    for t in threading.enumerate():
        if getattr(getattr(t, "_target", None), "__self__", None) is rf:
            t.join(5)


def _size(value: int | None) -> int:
    return max(int(value or 0), 0)


def _mtime(value: float | None) -> int:
    t = int(value or 0)
    return t if 0 <= t < _MAX_MTIME else 0


def _local_sha256(path: str) -> str | None:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for data in iter(lambda: f.read(1 << 20), b""):
                h.update(data)
    except OSError:
        return None
    return h.hexdigest()
