"""The simple built-in items: checkpoints synced, manual confirmations, custom commands."""

from __future__ import annotations

from collections.abc import Iterator

from gpu_companion.core.release.context import ReleaseContext
from gpu_companion.core.release.model import ChecklistItem, Evidence


def newer_files(ctx: ReleaseContext, paths: list[str], since: float, limit: int = 20) -> list[str]:
    """Files or dirs under `paths` modified after `since` (host clock, epoch seconds)."""
    if not paths:
        return []
    script = (
        't=$1; shift; find "$@" -newermt "@$t" \\( -type f -o -type d \\) -print 2>/dev/null '
        f"| head -n {int(limit)}"
    )
    res = ctx.run_script(script, f"{since:.6f}", *paths)
    return [line for line in res.out.splitlines() if line]


class CheckpointsSynced(ChecklistItem):
    key = "checkpoints"
    title = "Checkpoints synced"
    fix_label = "Sync now"

    def run(self, ctx: ReleaseContext) -> Evidence:
        t0 = ctx.remote_now()
        dirs = ctx.config.synced_dirs
        if not dirs:
            return Evidence(
                self.key,
                False,
                "No checkpoint directory is configured.",
                "synced directories",
                ctx.clock(),
                remote_time=t0,
            )
        pending: list[str] = []
        for d in dirs:
            plan = ctx.sync.plan(ctx.host, d)
            pending += [f"{d.rstrip('/')}/{p}" for p in plan.pending]
        ok = not pending
        summary = (
            f"{len(dirs)} director{'y' if len(dirs) == 1 else 'ies'} fully copied"
            if ok
            else f"{len(pending)} file(s) not yet copied"
        )
        return Evidence(
            self.key,
            ok,
            summary,
            "checksum dry-run of " + ", ".join(dirs),
            ctx.clock(),
            figures={"directories": len(dirs), "files_pending": len(pending)},
            details=tuple(pending[:200]),
            remote_time=t0,
        )

    def changed_since(self, ctx: ReleaseContext, evidence: Evidence) -> str | None:
        if evidence.remote_time is None:
            return None
        found = newer_files(
            ctx, [ctx.abspath(d) for d in ctx.config.synced_dirs], evidence.remote_time, limit=5
        )
        return f"changed since the check: {', '.join(found)}" if found else None

    def fix(self, ctx: ReleaseContext) -> Iterator[str]:
        for d in ctx.config.synced_dirs:
            yield f"syncing {d} …"
            plan = ctx.sync.sync(ctx.host, d)
            yield f"{d}: {len(plan.pending)} file(s) copied to {plan.local_dir}"


class ManualConfirmation(ChecklistItem):
    """Something only the user can vouch for; passes when ticked (with an optional note)."""

    def __init__(self, label: str, index: int) -> None:
        super().__init__()
        self.key = f"manual:{index}"
        self.title = label
        self.ticked_note: str | None = None

    def tick(self, note: str = "") -> None:
        self.ticked_note = note.strip()

    def untick(self) -> None:
        self.ticked_note = None

    def run(self, ctx: ReleaseContext) -> Evidence:
        ok = self.ticked_note is not None
        summary = (
            "confirmed" + (f": {self.ticked_note}" if self.ticked_note else "")
            if ok
            else "not confirmed yet"
        )
        return Evidence(self.key, ok, summary, f"confirmed by the user: {self.title}", ctx.clock())


class CustomCommandItem(ChecklistItem):
    """A user-written command run on the host through `sh -c`; it must exit 0."""

    def __init__(self, label: str, command: str, index: int) -> None:
        super().__init__()
        self.key = f"custom:{index}"
        self.title = label
        self.command = command

    def run(self, ctx: ReleaseContext) -> Evidence:
        t0 = ctx.remote_now()
        res = ctx.run(["sh", "-c", self.command])
        tail = (res.out + res.err).strip().splitlines()[-10:]
        return Evidence(
            self.key,
            res.code == 0,
            "exited 0" if res.code == 0 else f"exited {res.code}",
            f"sh -c {self.command!r} on the host",
            ctx.clock(),
            figures={"exit_code": res.code},
            details=tuple(tail),
            remote_time=t0,
        )
