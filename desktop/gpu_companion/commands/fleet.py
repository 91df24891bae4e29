"""`gpu-companion fleet export --format ansible|ray|ray-start|skypilot [--hosts a,b] [-o FILE]`:
the fleet for the engines users grow into. No private key is ever written."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from gpu_companion.core.common.i18n import _

# core.fleet.export.FORMATS, without importing it here
FORMATS = ("ansible", "ray", "ray-start", "skypilot")


def register(sub: Any) -> None:
    p = sub.add_parser("fleet", help=_("export the hosts for Ansible, Ray or SkyPilot"))
    formats = _("ansible: an inventory over the app's managed ssh config; ray: Ray's cluster "
                "config (local provider); ray-start: a script that starts Ray on each host over "
                "`ssh ALIAS`; skypilot: SSH node pools, one per host")  # fmt: skip
    fsub = p.add_subparsers(dest="fleet_command", metavar="ACTION", required=True)
    exp = fsub.add_parser(
        "export",
        help=_(
            "print (or write) an Ansible inventory, a Ray cluster config or SkyPilot node pools"
        ),
        description=_(
            "No private key is written: each export reaches the hosts through the "
            "app's managed ssh config and agent, so keep GPU Companion running while "
            "you use it."
        ),
    )
    exp.add_argument("--format", required=True, choices=FORMATS, help=formats)
    exp.add_argument("--hosts", default="",
                     help=_("comma-separated aliases (default: every host)"))  # fmt: skip
    exp.add_argument("-o", "--output", help=_("write to this file instead of printing: always "
                     "a new file, mode 0600 (a link there is replaced, not followed)"))  # fmt: skip
    exp.set_defaults(handler=run_export)


def run_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gpu_companion.commands.opening import open_services
    from gpu_companion.core.common.errors import UserError
    from gpu_companion.core.fleet.export import fleet_hosts, public_keys_in, render

    services = open_services()
    if services is None:
        return 2
    try:
        aliases = [a.strip() for a in args.hosts.split(",") if a.strip()]
        hosts = fleet_hosts(services.registry, aliases, public_keys_in(services.vault))
        services.managed_ssh.sync()  # the file the export points at holds these hosts
        text = render(args.format, hosts, services.ssh_config.config_path)
    except UserError as exc:
        print(_("gpu-companion: {problem}").format(problem=exc), file=sys.stderr)
        return 1
    finally:
        services.close()
    if args.output:
        from gpu_companion.core.fleet.export import write_private

        try:
            write_private(Path(args.output), text)  # a new 0600 file: a link is not followed
        except UserError as exc:
            print(_("gpu-companion: {problem}").format(problem=exc), file=sys.stderr)
            return 1
        print(
            _("wrote {file} ({n} hosts, {format})").format(
                file=args.output, n=len(hosts), format=args.format
            )
        )
    else:
        sys.stdout.write(text)
    return 0
