"""`gpu-companion release ALIAS`: the Release page for scripts and terminals.

The same gate as the window: the host's checklist runs (over the app's verified connection),
only a passed checklist releases (or `--override REASON`, recorded), the plan is shown and
confirmed (a question on a terminal, `--yes` in a script), the provider is asked and the
instance read back; the meter ends only once the provider confirms.

Exit codes: 0 released (or stopped) and confirmed by the provider; 1 not released: the
checklist did not pass, or the confirmation was declined; 3 the provider refused or did not
confirm within the deadline: the instance may still bill, the meter keeps going; 2 usage (unknown
alias, unusable data, keyring)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common.i18n import _

if TYPE_CHECKING:
    from gpu_companion.core.release import ReleaseChecklist
    from gpu_companion.services import Services

USAGE, NOT_RELEASED, PROVIDER = 2, 1, 3


def register(sub: Any) -> None:
    p = sub.add_parser(
        "release",
        help=_(
            "run a host's release checklist, then release (or stop) its instance, confirmed "
            "by the provider"
        ),
        description=_(
            "Runs the host's backup checklist; when it passes (or with --override), "
            "asks the provider to destroy (or --stop) the instance and reads it back "
            "until the provider reports it gone (or stopped). Exit 0 released, 1 not "
            "released, 3 the provider refused or did not confirm (meter kept), 2 "
            "usage."
        ),
    )
    p.add_argument("alias")
    p.add_argument("--override", metavar="REASON", help=_("release although items fail"))
    p.add_argument("--stop", action="store_true", help=_("stop instead of destroy (disk kept)"))
    p.add_argument(
        "--confirm",
        action="append",
        default=[],
        metavar="TEXT",
        help=_("tick the checklist's confirmation whose label is TEXT (repeatable)"),
    )
    p.add_argument("--yes", action="store_true", help=_("do not ask before releasing"))
    p.add_argument("--json", action="store_true", help=_("print the outcome as JSON"))
    p.add_argument(
        "--within", type=float, default=180.0, help=_("seconds to wait for the provider (180)")
    )
    p.set_defaults(handler=run)


def _err(text: str) -> None:
    print(_("gpu-companion release: {text}").format(text=text), file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    from gpu_companion.commands.opening import open_services
    from gpu_companion.core.ssh.keyring_errors import KeyringUnavailable

    services = open_services()
    if services is None:
        return USAGE
    try:
        return _release(services, args)
    except KeyringUnavailable as exc:
        print(_("error: {problem}").format(problem=exc), file=sys.stderr)
        return USAGE
    finally:
        services.close()


def _release(services: Services, args: argparse.Namespace) -> int:
    from dataclasses import replace

    from gpu_companion.core.common.errors import UserError
    from gpu_companion.core.release import Override, ReleaseChecklist, release_host
    from gpu_companion.core.release.items import ManualConfirmation

    host = services.registry.host(args.alias)
    if host is None or host.is_local:
        _err(_("{alias}: no such host (see `gpu-companion hosts list`).").format(alias=args.alias))
        return USAGE
    if host.state not in ("active", "stopped"):
        _err(_("{alias} is {state} already.").format(alias=host.alias, state=host.state))
        return NOT_RELEASED
    for line in services.resolve_interrupted_releases():
        print(line)
    wiring = services.release
    try:
        action = wiring.instance_action(host, "stop" if args.stop else "destroy")
    except UserError as exc:
        _err(str(exc))
        return NOT_RELEASED
    settings = wiring.settings
    checklist = ReleaseChecklist.build(
        host, settings.config(host.alias), settings.confirmations(host.alias)
    )
    wanted = {t.strip().lower() for t in args.confirm}
    for item in checklist.items:
        if isinstance(item, ManualConfirmation) and (
            item.label.strip().lower() in wanted or item.title.strip().lower() in wanted
        ):
            item.tick(_("confirmed on the command line"))
    if host.state == "active":
        if any(it.key in ("checkpoints", "archive") for it in checklist.items):
            services.use_agent()  # their rsync reaches the host through the app's agent
        _run_checklist(services, checklist)
    _print_checklist(checklist)
    override = Override(host.alias, args.override) if args.override else None
    if override is None and not checklist.ready():
        _err(
            _(
                "{alias} cannot be released yet: the items above did not pass. Fix them, "
                "or release anyway: --override REASON."
            ).format(alias=host.alias)
        )
        return NOT_RELEASED
    plan = action.describe() if action else _(
        "send nothing to a provider (no account or release command): release the instance in "
        "its console yourself"
    )  # fmt: skip
    print(
        _("Release {alias}: {plan}; end the meter once confirmed; drop its ssh block.").format(
            alias=host.alias, plan=plan
        )
    )
    if not args.yes and not _ask(_("Release {alias}? [y/N] ").format(alias=host.alias)):
        _err(_("not confirmed; nothing was sent."))
        return NOT_RELEASED
    release_services = replace(wiring.services(), confirm_within_s=args.within)
    try:
        record = release_host(checklist, release_services, action, override)
    except UserError as exc:
        _err(str(exc))
        if args.json:
            print(json.dumps({"released": False, "alias": host.alias, "message": str(exc)}))
        return NOT_RELEASED if action is None else PROVIDER
    if args.json:
        print(json.dumps({
            "released": True,
            "alias": host.alias,
            "kind": record.kind,
            "at": record.at.isoformat(),
            "state": "stopped" if args.stop else "released",
            "provider_said": record.command_output,
        }, indent=2))  # fmt: skip
    else:
        done = (_("{alias} stopped ({kind}) at {at} UTC; {output}") if args.stop
                else _("{alias} released ({kind}) at {at} UTC; {output}"))  # fmt: skip
        print(done.format(alias=host.alias, kind=record.kind, at=f"{record.at:%Y-%m-%d %H:%M:%S}",
                          output=record.command_output))  # fmt: skip
    return 0


def _run_checklist(services: Services, checklist: ReleaseChecklist) -> None:
    ctx = services.release.context(checklist.host)
    try:
        for update in checklist.run_all(ctx):
            if update.message:
                print(f"  … {update.message}", flush=True)
    finally:
        ctx.close()


def _print_checklist(checklist: ReleaseChecklist) -> None:
    for item in checklist.items:
        summary = f": {item.evidence.summary}" if item.evidence else ""
        print(f"[{item.state.value}] {item.title}{summary}")


def _ask(question: str) -> bool:
    if not sys.stdin.isatty():
        _err(_("stdin is not a terminal: pass --yes to release without a question."))
        return False
    return input(question).strip().lower() in ("y", "yes")
