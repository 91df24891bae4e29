"""`gpu-companion transfer upload|download ALIAS SRC... DST [--json]`: the Transfers page's
queue, engines (rsync, SFTP fallback) and checksum verification, from a script.

Exit codes: 0 every job done and verified, 1 failed, 2 usage (unknown host, missing source, bad
path), 3 partial (some jobs done, the others are named), 130 stopped by Ctrl-C (jobs paused).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common.i18n import _

if TYPE_CHECKING:
    from gpu_companion.core.transfers.job import TransferJob

USAGE = 2


def register(sub: Any) -> None:
    p = sub.add_parser(
        "transfer",
        help=_("upload or download through the app's verified, resumable transfer queue"),
        description=_(
            "Each SRC becomes one job in the app's transfer queue (it shows on the "
            "Transfers page too). A folder's contents are mirrored into DST, as `rsync "
            "-a SRC/ DST/` does; a file lands inside DST. Every job ends with a "
            "checksum pass over both sides. Exit: 0 done, 1 failed, 2 usage, 3 partial "
            "(some jobs done), 130 interrupted."
        ),
    )
    actions = p.add_subparsers(dest="direction", metavar="DIRECTION", required=True)
    up = actions.add_parser("upload", help=_("local SRC... to the folder DST on the host"))
    down = actions.add_parser("download", help=_("remote SRC... into the local folder DST"))
    for a, src_help, dst_help in (
        (up, _("local file or folder"), _("folder on the host (relative to the login's home)")),
        (down, _("folder on the host (or a file, with --file)"), _("local folder")),
    ):
        a.add_argument("alias", metavar="ALIAS")
        a.add_argument("sources", nargs="+", metavar="SRC", help=src_help)
        a.add_argument("dest", metavar="DST", help=dst_help)
        a.add_argument("--json", action="store_true", help=_("print the jobs as JSON at the end"))
        a.add_argument("--bwlimit", type=int, default=0, metavar="KIB", help=_("KiB/s (0: none)"))
        a.add_argument(
            "--exclude", action="append", default=[], metavar="PATTERN", help=_("skip matches")
        )
    down.add_argument("--file", action="store_true", help=_("each SRC is a single file"))
    p.set_defaults(handler=run)


def _err(text: str) -> None:
    from gpu_companion.core.common.plain import plain

    print(_("gpu-companion transfer: {text}").format(text=plain(text)), file=sys.stderr)


def _jobs(args: argparse.Namespace) -> list[TransferJob]:
    from pathlib import Path

    from gpu_companion.core.transfers.job import TransferJob, TransferOptions
    from gpu_companion.core.transfers.presets import upload_options

    jobs = []
    for src in args.sources:
        if args.direction == "upload":
            local = Path(src).expanduser()
            if not local.exists():
                _err(_("{path} does not exist.").format(path=src))
                return []
            options = upload_options(args.bwlimit, tuple(args.exclude))
            jobs.append(
                TransferJob(args.alias, "upload", str(local.absolute()), args.dest, options)
            )
        else:
            options = TransferOptions(
                excludes=tuple(args.exclude),
                bwlimit_kbps=args.bwlimit,
                source_is_dir=not args.file,
            )
            local_dst = str(Path(args.dest).expanduser().absolute())
            jobs.append(TransferJob(args.alias, "download", local_dst, src, options))
    return jobs


class _Progress:
    """A redrawn line on a terminal; on a pipe, one line per state or message change."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.last: dict[int, tuple[str, str]] = {}
        self.width = shutil.get_terminal_size((100, 20)).columns - 1

    def __call__(self, job: TransferJob) -> None:
        from gpu_companion.core.common.plain import plain_line
        from gpu_companion.core.transfers.headless import progress_line

        assert job.id is not None
        key = (job.state.value, job.message)
        changed = self.last.get(job.id) != key
        self.last[job.id] = key
        message = plain_line(job.message)  # rsync's errors and file names are the host's text
        if self.tty:
            line = plain_line(progress_line(job))
            self.stream.write("\r" + line[: self.width].ljust(self.width))
            if changed and message:
                self.stream.write(f"\n#{job.id} {message}\n")
        elif changed:
            note = f": {message}" if message else ""
            self.stream.write(f"#{job.id} {job.state.value}{note}\n")
        self.stream.flush()


def _as_dict(job: TransferJob) -> dict[str, Any]:
    return {
        "id": job.id,
        "host": job.host_alias,
        "direction": job.direction,
        "local": job.local_path,
        "remote": job.remote_path,
        "state": job.state.value,
        "verified": job.verified,
        "engine": job.engine,
        "bytes_total": job.bytes_total,
        "bytes_sent": job.bytes_sent,
        "seconds": round(job.active_s, 3),
        "message": job.message,
    }


def run(args: argparse.Namespace) -> int:
    from gpu_companion.commands.opening import open_services
    from gpu_companion.core.common.errors import UserError
    from gpu_companion.core.common.plain import json_text, plain
    from gpu_companion.core.transfers.headless import run_batch

    jobs = _jobs(args)
    if not jobs:
        return USAGE
    services = open_services()
    if services is None:
        return 2
    try:
        host = services.registry.host(args.alias)
        if host is None or host.is_local or host.state != "active":
            _err(
                _("{alias}: no such active host (see `gpu-companion hosts list`).").format(
                    alias=args.alias
                )
            )
            return USAGE
        services.managed_ssh.sync_quietly()  # keys or hosts changed since the app last ran
        services.use_agent()  # the window's ssh-agent, or one for this command
        try:
            result = run_batch(services.transfers, jobs, _Progress(sys.stderr))
        except UserError as exc:  # a bad remote path, pattern or limit: nothing was queued
            _err(_("refused: {problem}").format(problem=exc))
            return USAGE
    finally:
        services.close()
    if _Progress(sys.stderr).tty:
        sys.stderr.write("\n")
    if args.json:
        print(json_text({"exit": result.exit_code, "jobs": [_as_dict(j) for j in result.jobs]}))
    else:
        for j in result.jobs:
            check = _("verified") if j.verified else _("not verified")
            where = f"{j.host_alias}:{j.remote_path}"
            pair = (
                f"{j.local_path} -> {where}"
                if j.direction == "upload"
                else f"{where} -> {j.local_path}"
            )
            print(plain(f"#{j.id}\t{j.state.value}\t{check}\t{pair}"))
    if result.interrupted:
        _err(_("interrupted: running jobs are paused with their partial data; resume them on "
               "the Transfers page."))  # fmt: skip
    elif result.exit_code == 3:
        names = "; ".join(f"#{j.id} {j.remote_path if j.direction == 'download' else j.local_path}"
                          f" ({j.state.value}: {j.message})" for j in result.not_done)  # fmt: skip
        _err(
            _("partial: {done} of {total} done; not done: {names}").format(
                done=len(result.done), total=len(result.jobs), names=names
            )
        )
    elif result.exit_code == 1:
        for j in result.not_done:
            _err(f"#{j.id} {j.state.value}: {j.message}")
    return result.exit_code
