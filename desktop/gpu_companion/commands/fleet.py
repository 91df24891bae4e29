"""`gpu-companion fleet export --format ansible|ray|skypilot [--hosts a,b] [-o FILE]`: the fleet
for the engines users grow into, reached through the app's managed ssh config (no key written)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

FORMATS = ("ansible", "ray", "skypilot")  # core.fleet.export.FORMATS, without importing it here


def register(sub: Any) -> None:
    p = sub.add_parser("fleet", help="export the hosts for Ansible, Ray or SkyPilot")
    fsub = p.add_subparsers(dest="fleet_command", metavar="ACTION", required=True)
    exp = fsub.add_parser(
        "export",
        help="print (or write) an Ansible inventory, a Ray cluster config or SkyPilot node pools",
        description="No private key is written: each export reaches the hosts through the app's "
        "managed ssh config and agent, so keep GPU Companion running while you use it.",
    )
    exp.add_argument("--format", required=True, choices=FORMATS)
    exp.add_argument("--hosts", default="", help="comma-separated aliases (default: every host)")
    exp.add_argument("-o", "--output", help="write to this file (0600) instead of printing")
    exp.set_defaults(handler=run_export)


def run_export(args: argparse.Namespace) -> int:
    from gpu_companion.commands.opening import open_services
    from gpu_companion.core.common.errors import UserError
    from gpu_companion.core.fleet.export import fleet_hosts, render

    services = open_services()
    if services is None:
        return 2
    try:
        aliases = [a.strip() for a in args.hosts.split(",") if a.strip()]
        hosts = fleet_hosts(services.registry, aliases)
        services.managed_ssh.sync()  # the file the export points at holds these hosts
        text = render(args.format, hosts, services.ssh_config.config_path)
    except UserError as exc:
        print(f"gpu-companion: {exc}", file=sys.stderr)
        return 1
    finally:
        services.close()
    if args.output:
        import os

        fd = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote {args.output} ({len(hosts)} hosts, {args.format})")
    else:
        sys.stdout.write(text)
    return 0
