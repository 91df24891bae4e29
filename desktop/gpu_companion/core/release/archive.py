"""Final artefacts archived: packed on the host, downloaded, sha256 equal on both sides.

The fix packs and downloads; the check only verifies, so a truncated or altered local copy, or an
artefact changed after packing, fails it however the archive got there.
"""

from __future__ import annotations

import hashlib
import posixpath
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.release.context import ReleaseContext
from gpu_companion.core.release.items import newer_files
from gpu_companion.core.release.model import ChecklistItem, Evidence, Label

REMOTE_DIR = "~/.cache/gpu-companion/archives"  # under ~/.cache: never reported as left behind

# $1 = 1 for zstd, $2 = output path, then pairs of (-C dir, ./path) for tar.
_PACK = r"""
z=$1; out=$2; shift 2
mkdir -p "$(dirname "$out")" || exit 1
if [ "$z" = 1 ]; then tar --zstd -cf "$out.part" "$@"; else tar -czf "$out.part" "$@"; fi
rc=$?
if [ $rc -ne 0 ]; then rm -f "$out.part"; exit $rc; fi
mv -f "$out.part" "$out"
"""
# $1 = archive path, then artefact paths: prints "sha256 size mtime", then the artefacts
# changed after the archive was written.
_DESCRIBE = r"""
a=$1; shift
[ -f "$a" ] || exit 3
s=$(sha256sum "$a" | cut -d' ' -f1) || exit 1
t=$(date -r "$a" +%s.%N)
printf '%s %s %s\n' "$s" "$(stat -c %s "$a")" "$t"
[ $# -gt 0 ] && find "$@" -newermt "@$t" \( -type f -o -type d \) -print 2>/dev/null | head -n 20
true
"""


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class ArtefactsArchived(ChecklistItem):
    key = "archive"
    title = Label(N_("Final artefacts archived"))
    fix_label = Label(N_("Pack archive"))

    def archive_dir(self, ctx: ReleaseContext) -> Path:
        return ctx.local_dir / "archives"

    def _local_candidates(self, ctx: ReleaseContext) -> list[Path]:
        cfg = ctx.config
        found = [
            p
            for p in self.archive_dir(ctx).glob(f"{cfg.project}-*-{cfg.precision}.tar.*")
            if p.suffix in (".zst", ".gz")
        ]
        return sorted(found, key=lambda p: p.stat().st_mtime, reverse=True)

    def _describe(
        self, ctx: ReleaseContext, remote: str, artefacts: list[str]
    ) -> tuple[str, int, list[str]] | None:
        """sha256 and size of the archive on the host, and artefacts changed after it."""
        res = ctx.run_script(_DESCRIBE, remote, *artefacts)
        lines = res.out.splitlines()
        if res.code != 0 or not lines:
            return None
        sha, size, _mtime = lines[0].split()
        return sha, int(size), lines[1:]

    def run(self, ctx: ReleaseContext) -> Evidence:
        t0 = ctx.remote_now()

        def result(ok: bool, summary: str, **figures: int | str) -> Evidence:
            return Evidence(
                self.key,
                ok,
                summary,
                _("archive on the host vs the local copy"),
                ctx.clock(),
                figures=dict(figures),
                remote_time=t0,
            )

        if not ctx.config.archive_paths:
            return result(False, _("No artefact path is configured."))
        local = next(iter(self._local_candidates(ctx)), None)
        if local is None:
            return result(False, _("No archive downloaded yet: use Pack archive."))
        remote = posixpath.join(ctx.abspath(REMOTE_DIR), local.name)
        artefacts = [ctx.abspath(p) for p in ctx.config.archive_paths]
        described = self._describe(ctx, remote, artefacts)
        if described is None:
            return result(
                False,
                _("{archive} is no longer on the host: pack it again.").format(archive=local.name),
                archive=local.name,
            )
        remote_sha, remote_size, changed = described
        local_size = local.stat().st_size
        local_sha = sha256_file(local)
        figures: dict[str, int | str] = {
            "archive": local.name,
            "remote_bytes": remote_size,
            "local_bytes": local_size,
            "remote_sha256": remote_sha,
            "local_sha256": local_sha,
        }
        if local_size != remote_size:
            text = _("Local copy is truncated: {local} of {remote} bytes.").format(
                local=local_size, remote=remote_size
            )
            return result(False, text, **figures)
        if local_sha != remote_sha:
            text = _("sha256 differs between the host and the local copy.")
            return result(False, text, **figures)
        if changed:
            text = _("{n} artefact(s) changed after packing: pack again.").format(n=len(changed))
            ev = result(False, text, **figures)
            return replace(ev, details=tuple(changed))
        return result(
            True,
            _("{archive}: {size} bytes, sha256 {sha}… on both sides").format(
                archive=local.name, size=remote_size, sha=remote_sha[:12]
            ),
            **figures,
        )

    def changed_since(self, ctx: ReleaseContext, evidence: Evidence) -> str | None:
        if evidence.remote_time is None:
            return None
        found = newer_files(
            ctx, [ctx.abspath(p) for p in ctx.config.archive_paths], evidence.remote_time, limit=5
        )
        if not found:
            return None
        return _("artefacts changed since the check: {files}").format(files=", ".join(found))

    def tar_args(self, ctx: ReleaseContext) -> list[str]:
        """`-C dir ./rel` per path: members relative to home, or to / for paths outside it."""
        home = ctx.home.rstrip("/") + "/"
        args: list[str] = []
        for p in ctx.config.archive_paths:
            full = ctx.abspath(p)
            base = home if full.startswith(home) else "/"
            args += ["-C", base.rstrip("/") or "/", "./" + full[len(base) :]]
        return args

    def fix(self, ctx: ReleaseContext) -> Iterator[str]:
        if not ctx.config.archive_paths:
            raise UserError(
                _("No artefact path is configured."),
                hint=_("Add the weights, logs, config and scripts to archive."),
            )
        zstd = ctx.run(["sh", "-c", "zstd -V >/dev/null 2>&1"]).code == 0
        day = ctx.clock().astimezone().date()
        name = ctx.config.archive_name(day, zstd)
        remote = posixpath.join(ctx.abspath(REMOTE_DIR), name)
        how = "zstd" if zstd else _("gzip: no zstd there")
        yield _("packing {archive} on {host} ({how}) …").format(
            archive=name, host=ctx.host.alias, how=how
        )
        res = ctx.run_script(_PACK, "1" if zstd else "0", remote, *self.tar_args(ctx), timeout=3600)
        if res.code != 0:
            raise UserError(
                _("Packing {archive} on {host} failed (tar exit {code}).").format(
                    archive=name, host=ctx.host.alias, code=res.code
                ),
                hint=res.err.strip()[-300:],
            )
        described = self._describe(ctx, remote, [])
        if described is None:
            raise UserError(
                _("{archive} was packed but cannot be read back on the host.").format(archive=name)
            )
        yield _("downloading {archive} ({size} bytes) as a transfer job …").format(
            archive=name, size=described[1]
        )
        dest_dir = self.archive_dir(ctx)
        yield from ctx.sync.download_file(ctx.host, remote, dest_dir)
        yield _("downloaded to {path}").format(path=dest_dir / name)
