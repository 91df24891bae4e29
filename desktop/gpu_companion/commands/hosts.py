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

from gpu_companion.core.common.i18n import _

if TYPE_CHECKING:
    from gpu_companion.core.hosts.registry import Host, HostRegistry
    from gpu_companion.services import Services

USAGE = 2


def register(sub: Any) -> None:
    p = sub.add_parser(
        "hosts",
        help=_("list, add, edit, remove hosts and trust their host keys"),
        description=_("Manage the rented hosts kept in GPU Companion (the Hosts page, scripted)."),
    )
    actions = p.add_subparsers(dest="hosts_action", metavar="ACTION", required=True)

    ls = actions.add_parser("list", help=_("every host, one per line (tab-separated)"))
    ls.add_argument("--json", action="store_true", help=_("print JSON for scripts"))
    ls.add_argument("--active", action="store_true", help=_("leave released hosts out"))

    add = actions.add_parser("add", help=_("add a host"))
    add.add_argument("alias", help=_("the name `ssh ALIAS` and the app use"))
    add.add_argument("host", help=_("host name or IP address"))
    _host_fields(add, defaults=True)

    edit = actions.add_parser("edit", help=_("change a host's fields"))
    edit.add_argument("alias")
    edit.add_argument("--alias", dest="new_alias", help=_("rename the host"))
    edit.add_argument("--host", dest="host", help=_("host name or IP address"))
    _host_fields(edit, defaults=False)

    rm = actions.add_parser("remove", help=_("remove a host (its spend history is kept)"))
    rm.add_argument("alias")

    trust = actions.add_parser(
        "trust",
        help=_("show a host's key fingerprint; with --fingerprint, trust it"),
        description=_(
            "Connects, shows the host key's SHA256 fingerprint and, when --fingerprint "
            "matches it, adds it to the app's known_hosts. Compare it with the "
            "fingerprint your provider shows before passing it."
        ),
    )
    trust.add_argument("alias")
    trust.add_argument("--fingerprint", metavar="SHA256:…", help=_("the fingerprint to accept"))
    trust.add_argument(
        "--replace",
        action="store_true",
        help=_("forget a different key trusted before (a new instance behind a recycled address)"),
    )
    trust.add_argument("--timeout", type=float, default=10.0, help=_("seconds (default 10)"))
    p.set_defaults(handler=run)


def _host_fields(p: argparse.ArgumentParser, defaults: bool) -> None:
    p.add_argument("--port", type=int, default=22 if defaults else None, help=_("ssh port (22)"))
    p.add_argument("--user", default="root" if defaults else None, help=_("login user (root)"))
    p.add_argument("--platform", help=_("platform name as on the Hosts page (e.g. vast.ai)"))
    p.add_argument("--instance-id", dest="instance_id", help=_("the platform's instance id"))
    p.add_argument("--gpu-model", dest="gpu_model", help=_("e.g. 'RTX 4090'"))
    p.add_argument("--gpu-count", dest="gpu_count", type=int, help=_("number of GPUs"))
    p.add_argument("--notes", help=_("free text"))


def _err(text: str) -> None:
    print(_("gpu-companion hosts: {text}").format(text=text), file=sys.stderr)


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
        _err(
            _("refused ({field}): {message} Nothing was changed.").format(
                field=exc.field, message=exc.message
            )
        )
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
        _err(_("{alias}: no such host (see `gpu-companion hosts list`).").format(alias=alias))
        return None
    return host


def _platform_id(registry: HostRegistry, name: str | None) -> tuple[bool, int | None]:
    """(found, id); an empty name means no platform."""
    if name is None or not name.strip():
        return True, None
    for p in registry.platforms():
        if p.name.lower() == name.strip().lower():
            return True, p.id
    known = ", ".join(p.name for p in registry.platforms()) or _("none yet")
    _err(
        _(
            "no platform named {name} (known: {known}). Add it first: "
            "gpu-companion platforms add {quoted} (or on the Hosts page)."
        ).format(name=repr(name), known=known, quoted=repr(name.strip()))
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
        print(_("No hosts yet: gpu-companion hosts add ALIAS HOSTNAME (or providers sync)."))
        return 0
    from gpu_companion.core.common.text import format_table

    headers = (_("ALIAS"), _("ADDRESS"), _("PLATFORM"), _("INSTANCE"), _("STATE"), _("HOST KEY"))
    print(format_table(headers, [
        (r["alias"], f"{r['user']}@{r['host']}:{r['port']}", r["platform"], r["instance_id"],
         r["state"], _("trusted") if r["host_key_trusted"] else _("not trusted"))
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
    print(
        _("added {alias} ({address})").format(
            alias=host.alias, address=f"{host.user}@{host.hostname}:{host.port}"
        )
    )
    if not services.sessions.known_keys(host):
        print(
            _("next: gpu-companion hosts trust {alias}").format(alias=host.alias), file=sys.stderr
        )
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
    print(
        _("saved {alias} ({address})").format(
            alias=saved.alias, address=f"{saved.user}@{saved.hostname}:{saved.port}"
        )
    )
    return 0


def _remove(services: Services, args: argparse.Namespace) -> int:
    host = _known(services, args.alias)
    if host is None:
        return USAGE
    assert host.id is not None
    services.registry.delete_host(host.id)
    print(_("removed {alias}").format(alias=host.alias))
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
    print(
        _("{alias} ({where}) offers {key_type} {fingerprint}").format(
            alias=host.alias,
            where=where,
            key_type=offered.key_type,
            fingerprint=offered.fingerprint,
        )
    )
    if args.fingerprint is None:
        known = services.sessions.known_keys(host)
        if any(k.fingerprint == offered.fingerprint for k in known.values()):
            print(_("{alias}: this key is already trusted.").format(alias=host.alias))
            return 0
        _err(
            _(
                "not trusted. Compare the fingerprint above with the one your provider shows, "
                "then run: gpu-companion hosts trust {alias} --fingerprint {fingerprint}"
            ).format(alias=host.alias, fingerprint=offered.fingerprint)
        )
        return 1
    outcome = trust_host(services.sessions, host, offered, args.fingerprint, replace=args.replace)
    print(f"{host.alias}: {outcome}.")
    return 0
