"""The simple built-in items: checkpoints synced, manual confirmations, custom commands."""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Iterator

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import N_, _, ngettext
from gpu_companion.core.release.context import ReleaseContext
from gpu_companion.core.release.model import ChecklistItem, Evidence, Label
from gpu_companion.core.transfers.presets import CHECKPOINT_EXCLUDES


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


def changed_files(ctx: ReleaseContext, path: str, since: float, limit: int = 200) -> list[str]:
    """Files under `path` written, moved in or renamed after `since` (host clock): the inode
    change time, which a copy cannot set back, unlike the modification time."""
    script = (
        f't=$1; shift; find "$@" -type f -newerct "@$t" -print 2>/dev/null | head -n {int(limit)}'
    )
    res = ctx.run_script(script, f"{since:.6f}", path)
    skipped = CHECKPOINT_EXCLUDES
    return [
        line
        for line in res.out.splitlines()
        if line
        and not any(fnmatch.fnmatch(part, pat) for part in line.split("/") for pat in skipped)
    ]


class CheckpointsSynced(ChecklistItem):
    """Passes on the transfer queue's record: a verified download of each declared folder (into
    the host's backup folder or a folder the user chose) whose copy is still here, with no file
    on the host newer than that download."""

    key = "checkpoints"
    title = Label(N_("Checkpoints synced"))
    fix_label = Label(N_("Sync now"))

    def run(self, ctx: ReleaseContext) -> Evidence:
        t0 = ctx.remote_now()
        offset = t0 - time.time()  # host clock minus this computer's (job times are local)
        dirs = ctx.config.synced_dirs
        if not dirs:
            return Evidence(
                self.key,
                False,
                _("No checkpoint directory is configured."),
                _("synced directories"),
                ctx.clock(),
                remote_time=t0,
            )
        pending: list[str] = []
        never: list[str] = []
        missing: list[str] = []
        jobs: list[str] = []
        for d in dirs:
            full = ctx.abspath(d)
            if ctx.run(["test", "-d", full]).code != 0:
                missing.append(d)
                continue
            done = ctx.sync.last_verified(ctx.host, d, ctx.abspath)
            if done is None or not done.local_dir.is_dir():  # never copied, or the copy deleted
                never.append(d)
                continue
            jobs.append(_("#{job} to {folder}").format(job=done.job_id, folder=done.local_dir))
            pending += changed_files(ctx, full, done.since + offset)
        if missing:
            summary = _("{dirs}: no such directory on {host}").format(
                dirs=", ".join(missing), host=ctx.host.alias
            )
        elif never:
            summary = _(
                "{dirs}: no verified download whose copy is still on this computer "
                "(use Sync now, or download the folder on the Transfers page with verification on)"
            ).format(dirs=", ".join(never))
        elif pending:
            summary = _("{n} file(s) newer than the last verified download").format(n=len(pending))
        else:
            n = len(dirs)
            summary = ngettext(
                "{n} directory downloaded and verified (transfer {jobs}), nothing newer on the "
                "host",
                "{n} directories downloaded and verified (transfer {jobs}), nothing newer on the "
                "host",
                n,
            ).format(n=n, jobs=", ".join(jobs))
        return Evidence(
            self.key,
            not (missing or never or pending),
            summary,
            _(
                "verified downloads in the transfer history, then files changed since on {dirs}"
            ).format(dirs=", ".join(dirs)),
            ctx.clock(),
            figures={
                "directories": len(dirs),
                "files_pending": len(pending),
                "not_downloaded": len(never),
                "missing": len(missing),
            },
            details=tuple(pending[:200]),
            remote_time=t0,
        )

    def changed_since(self, ctx: ReleaseContext, evidence: Evidence) -> str | None:
        if evidence.remote_time is None:
            return None
        found = newer_files(
            ctx, [ctx.abspath(d) for d in ctx.config.synced_dirs], evidence.remote_time, limit=5
        )
        if not found:
            return None
        return _("changed since the check: {files}").format(files=", ".join(found))

    def fix(self, ctx: ReleaseContext) -> Iterator[str]:
        dirs = list(ctx.config.synced_dirs)
        if not dirs:
            raise UserError(_("No checkpoint directory is configured."))
        yield from ctx.sync.sync(ctx.host, dirs)


class ManualConfirmation(ChecklistItem):
    """Something only the user can vouch for; passes when ticked (with an optional note)."""

    def __init__(self, label: str, index: int) -> None:
        super().__init__()
        self.key = f"manual:{index}"
        self.label = label  # what confirmations are recorded under, in every language
        self.title = _(label)  # the default label is in the catalog; the user's own are not
        self.ticked_note: str | None = None

    def tick(self, note: str = "") -> None:
        self.ticked_note = note.strip()

    def untick(self) -> None:
        self.ticked_note = None

    def run(self, ctx: ReleaseContext) -> Evidence:
        ok = self.ticked_note is not None
        if not ok:
            summary = _("not confirmed yet")
        elif self.ticked_note:
            summary = _("confirmed: {note}").format(note=self.ticked_note)
        else:
            summary = _("confirmed")
        checked = _("confirmed by the user: {item}").format(item=self.title)
        return Evidence(self.key, ok, summary, checked, ctx.clock())


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
            _("exited {code}").format(code=res.code),
            _("{command} on the host").format(command=f"sh -c {self.command!r}"),
            ctx.clock(),
            figures={"exit_code": res.code},
            details=tuple(tail),
            remote_time=t0,
        )
