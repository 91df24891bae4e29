"""Nothing important left behind: big or recently modified files outside what is backed up.

One `find` on the host lists files above the size threshold or modified since the rental began,
pruning the synced dirs, the archived paths and caches that are re-downloadable by design. The
item passes when every listed file is dismissed with a reason (or moved into a synced dir).
"""

from __future__ import annotations

from gpu_companion.core.release.config import KNOWN_CACHES
from gpu_companion.core.release.context import ReleaseContext
from gpu_companion.core.release.model import ChecklistItem, Evidence

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
    title = "Nothing important left behind"

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
        open_ = [f for f in found if f[0] not in dismissed]
        details = tuple(
            f"{path}\t{size / 2**20:.1f} MiB" for path, size, _ in sorted(open_)[:MAX_LISTED]
        )
        ok = not open_
        since_text = f" or modified since {ctx.rental_started_at:%Y-%m-%d %H:%M}" if started else ""
        return Evidence(
            self.key,
            ok,
            "nothing left behind" if ok else f"{len(open_)} file(s) to sync or dismiss",
            f"files over {ctx.config.size_threshold_mib} MiB{since_text} under "
            f"{', '.join(ctx.config.scan_roots)}, outside synced dirs, archived paths and caches",
            ctx.clock(),
            figures={
                "listed": len(found),
                "dismissed": len(found) - len(open_),
                "open": len(open_),
                "bytes_open": sum(f[1] for f in open_),
            },
            details=details,
            remote_time=t0,
        )

    def changed_since(self, ctx: ReleaseContext, evidence: Evidence) -> str | None:
        if evidence.remote_time is None:
            return None
        new = [f[0] for f in self.scan(ctx, None, evidence.remote_time)]
        return f"new files since the check: {', '.join(new[:5])}" if new else None


def listed_path(detail: str) -> str:
    """The path part of one `details` line (the UI dismisses by path)."""
    return detail.split("\t", 1)[0]
