"""`gpu-companion platforms list|add|edit|remove`: the platforms of the Hosts page for scripts.

Same registry, validation and messages as the page's *Add platform* / *Edit* / *Remove*.
Exit codes: 0 done, 1 refused (bad value, hosts, ledger rows or a key still on it; nothing
changed), 2 usage (unknown platform).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.money import default_currency

if TYPE_CHECKING:
    from gpu_companion.core.hosts.registry import HostRegistry, Platform
    from gpu_companion.services import Services

USAGE = 2


def register(sub: Any) -> None:
    p = sub.add_parser(
        "platforms",
        help=_("list, add, edit and remove the platforms you rent from"),
        description=_(
            "Manage the platforms (provider accounts) kept in GPU Companion: how each "
            "bills and in which currency (the Hosts page's platforms, scripted)."
        ),
    )
    actions = p.add_subparsers(dest="platforms_action", metavar="ACTION", required=True)

    ls = actions.add_parser("list", help=_("every platform, one per line (tab-separated)"))
    ls.add_argument("--json", action="store_true", help=_("print JSON for scripts"))

    add = actions.add_parser("add", help=_("add a platform"))
    add.add_argument("name", help=_("e.g. vast.ai, RunPod, university cluster"))
    _platform_fields(add, defaults=True)

    edit = actions.add_parser("edit", help=_("change a platform's fields"))
    edit.add_argument("name", help=_("the platform's name now (any case)"))
    edit.add_argument("--name", dest="new_name", help=_("rename the platform (its key stays)"))
    _platform_fields(edit, defaults=False)

    rm = actions.add_parser(
        "remove", help=_("remove a platform that no host, ledger row or key uses any more")
    )
    rm.add_argument("name")
    p.set_defaults(handler=run)


def _platform_fields(p: argparse.ArgumentParser, defaults: bool) -> None:
    p.add_argument(
        "--console-url", dest="console_url", default="" if defaults else None, metavar="URL",
        help=_("the provider's web console (https://…)"),
    )  # fmt: skip
    p.add_argument(
        "--granularity", default="second" if defaults else None, metavar="second|minute|hour",
        help=_("how the platform bills (default second)"),
    )  # fmt: skip
    p.add_argument(
        "--currency", default=default_currency() if defaults else None, metavar="CODE",
        help=_("ISO currency code the platform bills in (default {currency})").format(
            currency=default_currency()
        ),
    )  # fmt: skip


def find_platform(registry: HostRegistry, name: str, command: str) -> Platform | None:
    """The platform called `name` (any case), or None once `gpu-companion COMMAND: no platform
    named …` with the known names was printed."""
    wanted = name.strip().lower()
    platforms = registry.platforms()
    for p in platforms:
        if p.name.lower() == wanted:
            return p
    known = ", ".join(p.name for p in platforms) or _("none yet")
    print(
        _(
            "gpu-companion {command}: no platform named {name} (known: {known}). "
            "Add it first: gpu-companion platforms add {quoted}"
        ).format(command=command, name=repr(name), known=known, quoted=repr(name.strip())),
        file=sys.stderr,
    )
    return None


def run(args: argparse.Namespace) -> int:
    from gpu_companion.commands.opening import run_action

    actions = {"list": _list, "add": _add, "edit": _edit, "remove": _remove}
    return run_action("platforms", actions, args.platforms_action, args)


def _hosts_by_platform(services: Services) -> dict[int, list[str]]:
    found: dict[int, list[str]] = {}
    for h in services.registry.hosts():
        if h.platform_id is not None:
            found.setdefault(h.platform_id, []).append(h.alias)
    return found


def _list(services: Services, args: argparse.Namespace) -> int:
    hosts = _hosts_by_platform(services)
    keys = {k.platform_id: k for k in services.vault.keys()}  # the store only, not the keyring
    rows: list[dict[str, Any]] = [
        {
            "name": p.name,
            "console_url": p.console_url or None,
            "billing_granularity": p.billing_granularity,
            "currency": p.currency,
            "hosts": hosts.get(p.id, []) if p.id is not None else [],
            "key_fingerprint": keys[p.id].fingerprint if p.id in keys else None,
        }
        for p in services.registry.platforms()
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    no_hosts, no_key = _("no hosts"), _("no key")
    for r in rows:
        print(
            f"{r['name']}\tper {r['billing_granularity']}\t{r['currency']}\t"
            f"{r['console_url'] or '-'}\t{', '.join(r['hosts']) or no_hosts}\t"
            f"{r['key_fingerprint'] or no_key}"
        )
    return 0


def _describe(p: Platform) -> str:
    url = f", {p.console_url}" if p.console_url else ""
    return _("{name} (billed per {granularity}, {currency}{url})").format(
        name=p.name, granularity=p.billing_granularity, currency=p.currency, url=url
    )


def _add(services: Services, args: argparse.Namespace) -> int:
    from gpu_companion.core.hosts.registry import Platform

    saved = services.registry.save_platform(
        Platform(
            name=args.name,
            console_url=args.console_url,
            billing_granularity=args.granularity,
            currency=args.currency.strip().upper(),
        )
    )
    print(_("added {platform}").format(platform=_describe(saved)))
    if services.vault.key(saved.name) is None:
        print(
            _("next: gpu-companion keys generate {name}").format(name=repr(saved.name)),
            file=sys.stderr,
        )
    return 0


def _edit(services: Services, args: argparse.Namespace) -> int:
    from dataclasses import replace

    platform = find_platform(services.registry, args.name, "platforms")
    if platform is None:
        return USAGE
    changes: dict[str, Any] = {}
    if args.new_name is not None:
        changes["name"] = args.new_name
    if args.console_url is not None:
        changes["console_url"] = args.console_url
    if args.granularity is not None:
        changes["billing_granularity"] = args.granularity
    if args.currency is not None:
        changes["currency"] = args.currency.strip().upper()
    saved = services.registry.save_platform(replace(platform, **changes))
    print(_("saved {platform}").format(platform=_describe(saved)))
    return 0


def _remove(services: Services, args: argparse.Namespace) -> int:
    from gpu_companion.core.common.errors import UserError

    platform = find_platform(services.registry, args.name, "platforms")
    if platform is None:
        return USAGE
    assert platform.id is not None
    key = services.vault.key(platform.name)
    if key is not None and platform.id not in _hosts_by_platform(services):
        # The key's record is kept by platform id, and ids are reused: a platform added later
        # would inherit this key. The key goes first, on purpose.
        raise UserError(
            _(
                "The platform {name} still has an SSH key ({fingerprint}); nothing was changed."
            ).format(name=repr(platform.name), fingerprint=key.fingerprint),
            hint=_("Delete it first: gpu-companion keys delete {name} --yes").format(
                name=repr(platform.name)
            ),
        )
    services.registry.delete_platform(platform.id)  # hosts or ledger rows: the registry refuses
    print(_("removed {name}").format(name=platform.name))
    return 0
