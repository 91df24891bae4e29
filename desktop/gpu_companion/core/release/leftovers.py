"""Nothing important left behind: big or recently modified files outside what is backed up.

One `find` on the host lists files above the size threshold or modified since the rental began,
pruning the synced dirs, the archived paths and caches that are re-downloadable by design. The
item passes when every listed file is dismissed with a reason (or moved into a synced dir).
A file the app uploaded (same size and modification time as its local source, which rsync keeps)
is the user's own copy, not something left behind.
"""

from __future__ import annotations

from pathlib import Path

from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.release.config import KNOWN_CACHES
from gpu_companion.core.release.context import ReleaseContext
from gpu_companion.core.release.model import ChecklistItem, Evidence, Label

MAX_LISTED = 500


def scan_argv(
    roots: list[str], pruned: list[str], threshold_mib: int | None, since: float | None
) -> list[str]:
    """The find argv: prune covered dirs, then files big enough or new enough."""
    argv = ["find", *roots, "-xdev"]
    if pruned:
        argv += ["("]
        for i, p in enumerate(pruned):
            argv += (["-o"] if i else []) + ["-path", p]
        argv += [")", "-prune", "-o"]
    tests: list[list[str]] = []
    if threshold_mib is not None:
        tests.append(["-size", f"+{threshold_mib * 1024}k"])
    if since is not None:
        tests.append(["-newermt", f"@{since:.6f}"])
    argv += ["-type", "f", "("]
    for i, t in enumerate(tests):
        argv += (["-o"] if i else []) + t
    return [*argv, ")", "-printf", "%s\\t%T@\\t%p\\n"]


def _parse(out: str) -> list[tuple[str, int, float]]:
    rows = []
    for line in out.splitlines():
        parts = line.split("\t", 2)
        if len(parts) == 3 and parts[0].isdigit():
            rows.append((parts[2], int(parts[0]), float(parts[1])))
    return rows


class NothingLeftBehind(ChecklistItem):
    key = "leftovers"
    title = Label(N_("Nothing important left behind"))

    def _pruned(self, ctx: ReleaseContext) -> list[str]:
        cfg = ctx.config
        paths = [*cfg.synced_dirs, *cfg.archive_paths, *KNOWN_CACHES]
        return sorted({ctx.abspath(p).rstrip("/") or "/" for p in paths})

    def scan(
        self, ctx: ReleaseContext, threshold: int | None, since: float | None
    ) -> list[tuple[str, int, float]]:
        if threshold is None and since is None:
            return []
        roots = [ctx.abspath(r) for r in ctx.config.scan_roots]
        res = ctx.run(scan_argv(roots, self._pruned(ctx), threshold, since), timeout=600)
        return _parse(res.out)

    def run(self, ctx: ReleaseContext) -> Evidence:
        t0 = ctx.remote_now()
        started = ctx.rental_started_at.timestamp() if ctx.rental_started_at else None
        found = self.scan(ctx, ctx.config.size_threshold_mib, started)
        dismissed = dict(ctx.config.dismissed)
        uploaded = _uploaded_by_the_app(ctx, found)
        open_ = [f for f in found if f[0] not in dismissed and f[0] not in uploaded]
        details = tuple(
            f"{path}\t{size / 2**20:.1f} MiB" for path, size, _mtime in sorted(open_)[:MAX_LISTED]
        )
        ok = not open_
        roots = ", ".join(ctx.config.scan_roots)
        mib = ctx.config.size_threshold_mib
        if started and ctx.rental_started_at is not None:
            checked = _(
                "files over {mib} MiB or modified since {since} under {roots}, outside synced "
                "dirs, archived paths and caches"
            ).format(mib=mib, since=f"{ctx.rental_started_at:%Y-%m-%d %H:%M}", roots=roots)
        else:
            checked = _(
                "files over {mib} MiB under {roots}, outside synced dirs, archived paths and caches"
            ).format(mib=mib, roots=roots)
        return Evidence(
            self.key,
            ok,
            _("nothing left behind")
            if ok
            else _("{n} file(s) to sync or dismiss").format(n=len(open_)),
            checked,
            ctx.clock(),
            figures={
                "listed": len(found),
                "uploaded": len(uploaded),
                "dismissed": len(found) - len(open_) - len(uploaded),
                "open": len(open_),
                "bytes_open": sum(f[1] for f in open_),
            },
            details=details,
            remote_time=t0,
        )

    def changed_since(self, ctx: ReleaseContext, evidence: Evidence) -> str | None:
        if evidence.remote_time is None:
            return None
        found = self.scan(ctx, None, evidence.remote_time)
        uploaded = _uploaded_by_the_app(ctx, found)
        new = [f[0] for f in found if f[0] not in uploaded]
        if not new:
            return None
        return _("new files since the check: {files}").format(files=", ".join(new[:5]))


def _uploaded_by_the_app(ctx: ReleaseContext, found: list[tuple[str, int, float]]) -> set[str]:
    """Listed files that are exactly what an upload of the app put there: same size and mtime
    as the local source. A file changed on the host after the upload is still listed."""
    uploads = [
        (ctx.abspath(remote).rstrip("/"), local) for remote, local in ctx.sync.uploads(ctx.host)
    ]
    if not uploads:
        return set()
    same: set[str] = set()
    for path, size, mtime in found:
        for remote, local in uploads:
            source = _source_of(path, remote, local)
            if source is not None and _same_file(source, size, mtime):
                same.add(path)
                break
    return same


def _source_of(path: str, remote: str, local: Path) -> Path | None:
    """The local file an upload of `local` into `remote` would have made `path` from."""
    if not path.startswith(remote + "/"):
        return None
    rel = path[len(remote) + 1 :]
    if local.is_dir():
        parts = [p for p in rel.split("/") if p]
        if any(p in (".", "..") for p in parts):
            return None  # names from the host are data: never climb out of the source
        return local.joinpath(*parts)
    return local if rel == local.name else None


def _same_file(source: Path, size: int, mtime: float) -> bool:
    try:
        st = source.stat()
    except OSError:
        return False  # the source is gone: nothing proves the copy is the user's own
    return st.st_size == size and abs(st.st_mtime - mtime) < 1.0


def listed_path(detail: str) -> str:
    """The path part of one `details` line (the UI dismisses by path)."""
    return detail.split("\t", 1)[0]
