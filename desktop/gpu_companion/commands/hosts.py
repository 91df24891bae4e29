"""`gpu-companion hosts list|add|edit|remove|trust`: the Hosts page for scripts.

Same registry, validation and messages as the page; the managed ssh config follows every change.
Exit codes: 0 done, 1 refused (bad value, fingerprint mismatch; nothing changed), 2 usage
(unknown alias or platform).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpu_companion.core.hosts.registry import Host, HostRegistry
    from gpu_companion.services import Services

USAGE = 2


def register(sub: Any) -> None:
    p = sub.add_parser(
        "hosts",
        help="list, add, edit, remove hosts and trust their host keys",
        description="Manage the rented hosts kept in GPU Companion (the Hosts page, scripted).",
    )
    actions = p.add_subparsers(dest="hosts_action", metavar="ACTION", required=True)

    ls = actions.add_parser("list", help="every host, one per line (tab-separated)")
    ls.add_argument("--json", action="store_true", help="print JSON for scripts")
    ls.add_argument("--active", action="store_true", help="leave released hosts out")

    add = actions.add_parser("add", help="add a host")
    add.add_argument("alias", help="the name `ssh ALIAS` and the app use")
    add.add_argument("host", help="host name or IP address")
    _host_fields(add, defaults=True)

    edit = actions.add_parser("edit", help="change a host's fields")
    edit.add_argument("alias")
    edit.add_argument("--alias", dest="new_alias", help="rename the host")
    edit.add_argument("--host", dest="host", help="host name or IP address")
    _host_fields(edit, defaults=False)

    rm = actions.add_parser("remove", help="remove a host (its spend history is kept)")
    rm.add_argument("alias")

    trust = actions.add_parser(
        "trust",
        help="show a host's key fingerprint; with --fingerprint, trust it",
        description="Connects, shows the host key's SHA256 fingerprint and, when --fingerprint "
        "matches it, adds it to the app's known_hosts. Compare it with the fingerprint your "
        "provider shows before passing it.",
    )
    trust.add_argument("alias")
    trust.add_argument("--fingerprint", metavar="SHA256:…", help="the fingerprint to accept")
    trust.add_argument(
        "--replace",
        action="store_true",
        help="forget a different key trusted before (a new instance behind a recycled address)",
    )
    trust.add_argument("--timeout", type=float, default=10.0, help="seconds (default 10)")
    p.set_defaults(handler=run)


def _host_fields(p: argparse.ArgumentParser, defaults: bool) -> None:
    p.add_argument("--port", type=int, default=22 if defaults else None, help="ssh port (22)")
    p.add_argument("--user", default="root" if defaults else None, help="login user (root)")
    p.add_argument("--platform", help="platform name as on the Hosts page (e.g. vast.ai)")
    p.add_argument("--instance-id", dest="instance_id", help="the platform's instance id")
    p.add_argument("--gpu-model", dest="gpu_model", help="e.g. 'RTX 4090'")
    p.add_argument("--gpu-count", dest="gpu_count", type=int, help="number of GPUs")
    p.add_argument("--notes", help="free text")


def _err(text: str) -> None:
    print(f"gpu-companion hosts: {text}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from gpu_companion.commands.opening import open_services
    from gpu_companion.core.common.errors import UserError, ValidationError

    services = open_services()
    if services is None:
        return 2
    try:
        action = {"list": _list, "add": _add, "edit": _edit, "remove": _remove, "trust": _trust}
        return action[args.hosts_action](services, args)
    except ValidationError as exc:
        _err(f"refused ({exc.field}): {exc.message} Nothing was changed.")
        return 1
    except UserError as exc:
        _err(str(exc))
        return 1
    finally:
        services.close()  # writes the managed ssh config for a change made here


def _platform_names(services: Services) -> dict[int, str]:
    return {p.id: p.name for p in services.registry.platforms() if p.id is not None}


def _known(services: Services, alias: str) -> Host | None:
    host = services.registry.host(alias)
    if host is None or host.is_local:
        _err(f"{alias}: no such host (see `gpu-companion hosts list`).")
        return None
    return host


def _platform_id(registry: HostRegistry, name: str | None) -> tuple[bool, int | None]:
    """(found, id); an empty name means no platform."""
    if name is None or not name.strip():
        return True, None
    for p in registry.platforms():
        if p.name.lower() == name.strip().lower():
            return True, p.id
    known = ", ".join(p.name for p in registry.platforms()) or "none yet"
    _err(
        f"no platform named {name!r} (known: {known}). Add it first: "
        f"gpu-companion platforms add {name.strip()!r} (or on the Hosts page)."
    )
    return False, None


def _list(services: Services, args: argparse.Namespace) -> int:
    names = _platform_names(services)
    hosts = services.registry.hosts(include_released=not args.active)
    rows = [
        {
            "alias": h.alias,
            "host": h.hostname,
            "port": h.port,
            "user": h.user,
            "platform": names.get(h.platform_id) if h.platform_id is not None else None,
            "instance_id": h.instance_id or None,
            "state": h.state,
            "gpu_model": h.gpu_model or None,
            "gpu_count": h.gpu_count,
            "host_key_trusted": bool(services.sessions.known_keys(h)),
        }
        for h in hosts
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("No hosts yet: gpu-companion hosts add ALIAS HOSTNAME (or providers sync).")
        return 0
    from gpu_companion.core.common.text import format_table

    headers = ("ALIAS", "ADDRESS", "PLATFORM", "INSTANCE", "STATE", "HOST KEY")
    print(format_table(headers, [
        (r["alias"], f"{r['user']}@{r['host']}:{r['port']}", r["platform"], r["instance_id"],
         r["state"], "trusted" if r["host_key_trusted"] else "not trusted")
        for r in rows
    ]))  # fmt: skip
    return 0


def _changes(services: Services, args: argparse.Namespace) -> dict[str, Any] | None:
    found, platform_id = _platform_id(services.registry, args.platform)
    if not found:
        return None
    changes: dict[str, Any] = {
        k: getattr(args, k)
        for k in ("port", "user", "instance_id", "gpu_model", "gpu_count", "notes")
        if getattr(args, k) is not None
    }
    if args.platform is not None:
        changes["platform_id"] = platform_id
    if getattr(args, "host", None) is not None:
        changes["hostname"] = args.host
    return changes


def _add(services: Services, args: argparse.Namespace) -> int:
    from gpu_companion.core.hosts.registry import Host

    changes = _changes(services, args)
    if changes is None:
        return USAGE
    host = services.registry.save_host(Host(alias=args.alias, **changes))
    print(f"added {host.alias} ({host.user}@{host.hostname}:{host.port})")
    if not services.sessions.known_keys(host):
        print(f"next: gpu-companion hosts trust {host.alias}", file=sys.stderr)
    return 0


def _edit(services: Services, args: argparse.Namespace) -> int:
    from dataclasses import replace

    host = _known(services, args.alias)
    if host is None:
        return USAGE
    changes = _changes(services, args)
    if changes is None:
        return USAGE
    if args.new_alias is not None:
        changes["alias"] = args.new_alias
    saved = services.registry.save_host(replace(host, **changes))
    print(f"saved {saved.alias} ({saved.user}@{saved.hostname}:{saved.port})")
    return 0


def _remove(services: Services, args: argparse.Namespace) -> int:
    host = _known(services, args.alias)
    if host is None:
        return USAGE
    assert host.id is not None
    services.registry.delete_host(host.id)
    print(f"removed {host.alias}")
    return 0


def _trust(services: Services, args: argparse.Namespace) -> int:
    from gpu_companion.core.ssh.host_trust import (
        normalize_fingerprint,
        offered_host_key,
        trust_host,
    )

    host = _known(services, args.alias)
    if host is None:
        return USAGE
    if args.fingerprint is not None:
        normalize_fingerprint(args.fingerprint)  # a malformed value fails before connecting
    offered = offered_host_key(host, args.timeout)
    where = f"{host.hostname}:{host.port}"
    print(f"{host.alias} ({where}) offers {offered.key_type} {offered.fingerprint}")
    if args.fingerprint is None:
        known = services.sessions.known_keys(host)
        if any(k.fingerprint == offered.fingerprint for k in known.values()):
            print(f"{host.alias}: this key is already trusted.")
            return 0
        _err(
            "not trusted. Compare the fingerprint above with the one your provider shows, then "
            f"run: gpu-companion hosts trust {host.alias} --fingerprint {offered.fingerprint}"
        )
        return 1
    outcome = trust_host(services.sessions, host, offered, args.fingerprint, replace=args.replace)
    print(f"{host.alias}: {outcome}.")
    return 0
