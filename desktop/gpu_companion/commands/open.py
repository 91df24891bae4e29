"""`gpu-companion open ALIAS --terminal [--tmux] | --code PATH`: the system terminal running
`ssh ALIAS`, or VS Code on the host, through the user's own ssh config."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gpu_companion.core.common.i18n import _


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "open",
        help=_("open a terminal (ssh ALIAS) or VS Code on a host"),
        description=_(
            "Needs `ssh ALIAS` to work in a terminal: run `gpu-companion ssh-config "
            "--write` once. The terminal is the one chosen in Settings (automatic by "
            "default)."
        ),
    )
    p.add_argument("alias", help=_("the host's alias"))
    group = p.add_mutually_exclusive_group(required=True)
    group.add_argument("--terminal", action="store_true", help=_("open a terminal on the host"))
    group.add_argument("--code", metavar="PATH", help=_("open PATH on the host in VS Code"))
    p.add_argument(
        "--tmux",
        action="store_true",
        help=_(
            "with --terminal: attach to the tmux session (made if missing) so a dropped link "
            "keeps the work running"
        ),
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpu_companion.commands.opening import open_services
    from gpu_companion.core.common.errors import UserError

    services = open_services()
    if services is None:
        return 2
    try:
        host = services.registry.host(args.alias)
        if host is None or host.is_local:
            print(
                _("gpu-companion: no rented host named {alias}.").format(alias=repr(args.alias)),
                file=sys.stderr,
            )
            return 1
        launcher = services.launcher
        try:
            if args.terminal:
                plan = launcher.plan_terminal(host.alias, tmux=args.tmux)
            else:
                plan = launcher.plan_code(host.alias, args.code)
            launcher.launch(plan)
        except UserError as exc:
            print(_("gpu-companion: {problem}").format(problem=exc), file=sys.stderr)
            return 1
        print(_("opened {what}").format(what=plan.what))
        return 0
    finally:
        services.close()
