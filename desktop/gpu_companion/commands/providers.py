"""`gpu-companion providers list|add|remove|test|sync|import`: vast.ai and RunPod accounts.

The API key is read from stdin (never argv, never a file of ours) and kept in the OS keyring.
Exit codes: 0 done, 1 refused (bad value, the provider refused, an orphan found by `sync
--check`), 2 usage (unknown account, unusable data or keyring)."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common.i18n import _

if TYPE_CHECKING:
    from gpu_companion.core.providers.reconcile import SyncReport
    from gpu_companion.services import Services

USAGE = 2


def register(sub: Any) -> None:
    p = sub.add_parser(
        "providers",
        help=_("vast.ai and RunPod accounts: add, test, sync instances, import orphans"),
        description=_("Link a platform to its provider's API (the key goes to the OS keyring), "
                      "list the account's instances and reconcile them with your hosts."),
    )
    actions = p.add_subparsers(dest="providers_action", metavar="ACTION", required=True)
    ls = actions.add_parser("list", help=_("the accounts, one per line"))
    ls.add_argument("--json", action="store_true")

    add = actions.add_parser(
        "add",
        help=_("add an account; the API key is read from stdin"),
        description=_("Reads the API key from stdin (a prompt without echo on a terminal), "
                      "stores it in the OS keyring, then lists the account's instances once to "
                      "check it."),
    )
    add.add_argument("kind", help=_("vast.ai or runpod"))
    add.add_argument("--platform", default="",
                     help=_("the platform to link (made when missing)"))  # fmt: skip
    add.add_argument("--api-base", default="", help=_("vast.ai only: another API address"))

    rm = actions.add_parser("remove", help=_("remove an account and its key from the keyring"))
    rm.add_argument("account", help=_("platform name or provider"))

    test = actions.add_parser("test", help=_("list the account's instances (read-only)"))
    test.add_argument("account", help=_("platform name or provider"))
    test.add_argument("--json", action="store_true")

    sync = actions.add_parser(
        "sync",
        help=_("import every instance that runs (or is stopped) at the providers as a metered "
               "host, update known ones, mark gone ones"),
    )
    sync.add_argument(
        "--check",
        action="store_true",
        help=_("change nothing that is not known: report orphans instead of importing (exit 1)"),
    )
    sync.add_argument("--json", action="store_true")

    imp = actions.add_parser("import", help=_("import one instance by its id"))
    imp.add_argument("account", help=_("platform name or provider"))
    imp.add_argument("instance_id")
    p.set_defaults(handler=run)


def _err(text: str) -> None:
    print(_("gpu-companion providers: {text}").format(text=text), file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from gpu_companion.commands.opening import run_action

    actions = {
        "list": _list,
        "add": _add,
        "remove": _remove,
        "test": _test,
        "sync": _sync,
        "import": _import,
    }
    return run_action("providers", actions, args.providers_action, args)


def _list(services: Services, args: argparse.Namespace) -> int:
    accounts = services.providers.accounts()
    if args.json:
        rows = [
            {"platform": a.platform_name, "provider": a.kind, "api_base": a.api_base}
            for a in accounts
        ]
        print(json.dumps(rows, indent=2))
        return 0
    if not accounts:
        print(_("No provider accounts. Add one: gpu-companion providers add vast.ai|runpod"))
    for a in accounts:
        print("\t".join([a.platform_name, a.kind, a.api_base or _("(default API)")]))
    return 0


def _read_key() -> str:
    if sys.stdin.isatty():
        return getpass.getpass(_("API key (not shown): "))
    return sys.stdin.readline().strip()


def _add(services: Services, args: argparse.Namespace) -> int:
    from gpu_companion.core.providers.model import ProviderError

    key = _read_key()
    account = services.providers.add(
        args.kind, key, platform=args.platform, api_base=args.api_base
    )
    print(_("Added {platform} ({kind}); the API key is in the keyring.").format(
        platform=account.platform_name, kind=account.kind))
    try:
        count = len(services.providers.provider(account).instances())
    except ProviderError as exc:
        _err(_("kept, but the first call failed: {problem}").format(problem=exc))
        return 1
    print(_("{provider} answered: {n} instance(s) on this account.").format(
        provider=account.provider_name, n=count))
    print(_("Import them with: gpu-companion providers sync"))
    return 0


def _account(services: Services, name: str) -> Any:
    from gpu_companion.core.providers.accounts import require_account

    return require_account(services.providers, name)


def _remove(services: Services, args: argparse.Namespace) -> int:
    account = _account(services, args.account)
    services.providers.remove(account)
    print(_("Removed the {kind} account of {platform} and its key.").format(
        kind=account.kind, platform=account.platform_name))
    return 0


def _test(services: Services, args: argparse.Namespace) -> int:
    account = _account(services, args.account)
    instances = services.providers.provider(account).instances()
    if args.json:
        print(json.dumps([_instance_json(i) for i in instances], indent=2))
        return 0
    print(_("{provider} answered: {n} instance(s).").format(
        provider=account.provider_name, n=len(instances)))
    for i in instances:
        price = f"{i.hourly}/h" if i.hourly is not None else "?"
        print("\t".join([i.id, i.provider_state or i.state, i.label, i.gpu_model, price]))
    return 0


def _instance_json(i: Any) -> dict[str, Any]:
    return {
        "id": i.id,
        "state": i.state,
        "provider_state": i.provider_state,
        "label": i.label,
        "ssh": f"{i.ssh_user}@{i.ssh_host}:{i.ssh_port}" if i.ssh_host else "",
        "gpu_model": i.gpu_model,
        "gpu_count": i.gpu_count,
        "hourly": str(i.hourly) if i.hourly is not None else None,
        "storage_hourly": str(i.storage_hourly) if i.storage_hourly is not None else None,
        "currency": i.currency,
        "billing_mode": i.billing_mode,
    }


def _sync(services: Services, args: argparse.Namespace) -> int:
    if not services.providers.accounts():
        _err(_("no provider accounts. Add one: gpu-companion providers add vast.ai|runpod"))
        return USAGE
    report = services.provider_sync.sync(import_all=not args.check)
    if args.json:
        print(json.dumps(_report_json(report), indent=2))
    else:
        _print_report(report)
    return 1 if report.errors or report.orphans else 0


def _report_json(r: SyncReport) -> dict[str, Any]:
    return {
        "imported": r.imported,
        "updated": r.updated,
        "stopped": r.stopped,
        "gone": r.gone,
        "orphans": [
            {
                "platform": o.account.platform_name,
                "instance": _instance_json(o.instance),
                "released_host": o.released_alias,
                "text": o.text(),
            }
            for o in r.orphans
        ],
        "errors": r.errors,
    }


def _print_report(r: SyncReport) -> None:
    for name, aliases in (
        (_("imported"), r.imported),
        (_("updated"), r.updated),
        (_("stopped (disk metered)"), r.stopped),
        (_("gone at the provider"), r.gone),
    ):
        if aliases:
            print(f"{name}: {', '.join(aliases)}")
    for o in r.orphans:
        print(_("orphan: {text}").format(text=o.text()))
    for e in r.errors:
        print(_("error: {problem}").format(problem=e))
    if not any((r.imported, r.updated, r.stopped, r.gone, r.orphans, r.errors)):
        print(_("Nothing runs at the providers."))


def _import(services: Services, args: argparse.Namespace) -> int:
    account = _account(services, args.account)
    alias = services.provider_sync.import_instance(account, args.instance_id)
    print(_("Imported {provider} instance {instance} as {alias}.").format(
        provider=account.provider_name, instance=args.instance_id, alias=alias))
    return 0
