"""`gpu-companion ssh-config --print | --write | --remove`: the generated ssh config from a
terminal or a script, with the same files, rules and messages as the app (exit 1 on refusal)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.i18n import _


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "ssh-config",
        help=_("print, write or remove the generated ssh config (~/.ssh/gpu-companion/config)"),
        description=_(
            "Makes `ssh ALIAS` work in any terminal for the hosts kept in GPU "
            "Companion: one managed file plus one Include line at the top of "
            "~/.ssh/config (backed up first, every other byte kept)."
        ),
    )
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "--print",
        dest="action",
        action="store_const",
        const="print",
        help=_("print the managed file without writing anything"),
    )
    group.add_argument(
        "--write",
        dest="action",
        action="store_const",
        const="write",
        help=_("write the managed file and add the Include line"),
    )
    group.add_argument(
        "--remove",
        dest="action",
        action="store_const",
        const="remove",
        help=_("remove the Include line and the managed file"),
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpu_companion.commands.opening import open_services

    services = open_services()
    if services is None:
        return 2
    writer = services.ssh_config
    try:
        if args.action == "remove":
            changed = writer.remove()
            print(
                "\n".join(_("changed: {path}").format(path=p) for p in changed)
                or _("nothing to remove")
            )
            return 0
        try:
            entries = services.managed_ssh.entries()
            if args.action == "print":
                text, skipped = writer.plan(entries)
                sys.stdout.write(text)
            else:
                result = writer.write(entries)
                skipped = {}
                print(result.summary())
        finally:
            services.close()
        for alias, why in skipped.items():
            print(_("skipped {alias}: {why}").format(alias=alias, why=why), file=sys.stderr)
        return 0
    except ValidationError as exc:
        print(
            _("gpu-companion: refused ({field}): {message} Nothing was written.").format(
                field=exc.field, message=exc.message
            ),
            file=sys.stderr,
        )
        return 1
    except UserError as exc:
        print(_("gpu-companion: refused: {problem}").format(problem=exc), file=sys.stderr)
        return 1
