"""`gpu-companion notify list|add|set|remove|test`: where alerts reach you away from the desk.

Secrets (an ntfy access token, a webhook's URL or secret, an SMTP password) are read from stdin
(a prompt without echo on a terminal), never from argv, and kept in the OS keyring; `list` never
shows them. With `--url-stdin` and `--secret-stdin` together, the URL is the first line.
Exit codes: 0 done (`test`: every tested channel delivered), 1 refused or not delivered, 2 an
unusable data dir or keyring.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common.i18n import N_, _

if TYPE_CHECKING:
    from gpu_companion.core.notify.model import Channel, ChannelStatus
    from gpu_companion.services import Services

KIND_HELP = N_(
    "alert kinds, comma-separated: budget, runtime, overnight, idle, spot-sync, autorelease, "
    "unreachable, orphan, gone, release, other; 'all' or 'default' (every kind but other)"
)


def _filters(p: argparse.ArgumentParser, *, for_set: bool = False) -> None:
    p.add_argument("--kinds", default=None, help=_(KIND_HELP))
    p.add_argument(
        "--quiet",
        default=None,
        metavar="HH:MM-HH:MM",
        help=_(
            "quiet hours in local time (e.g. 23:00-07:00; 'off' for none): only "
            "money-critical alerts (budget, auto-release, forgotten instances, unreachable "
            "billed hosts, errors) pass"
        ),
    )
    p.add_argument(
        "--remind-minutes",
        type=int,
        default=None,
        metavar="N",
        help=_("an alert whose text changed is sent again at most every N minutes (default 30)"),
    )
    p.add_argument("--name", default=None, help=_("a name of your own for the channel"))
    if for_set:
        state = p.add_mutually_exclusive_group()
        state.add_argument("--enable", dest="enabled", action="store_true", default=None)
        state.add_argument("--disable", dest="enabled", action="store_false")


def register(sub: Any) -> None:
    p = sub.add_parser(
        "notify",
        help=_(
            "send alerts off the desk: ntfy, webhooks (Slack, Discord, Feishu, DingTalk), "
            "e-mail, desktop"
        ),
        description=_(
            "Channels that get the app's alerts where you are. Secrets are read from "
            "stdin and kept in the OS keyring."
        ),
    )
    actions = p.add_subparsers(dest="notify_action", metavar="ACTION", required=True)
    ls = actions.add_parser("list", help=_("the channels, their filters and delivery status"))
    ls.add_argument("--json", action="store_true")

    add = actions.add_parser("add", help=_("add a channel"))
    kinds = add.add_subparsers(dest="channel_type", metavar="TYPE", required=True)

    ntfy = kinds.add_parser("ntfy", help=_("ntfy.sh or a self-hosted ntfy server"))
    ntfy.add_argument("--server", default="https://ntfy.sh")
    ntfy.add_argument("--topic", required=True)
    ntfy.add_argument(
        "--token-stdin", action="store_true", help=_("read an access token (tk_...) from stdin")
    )

    hook = kinds.add_parser(
        "webhook", help=_("a JSON webhook: json, slack, discord, feishu, dingtalk")
    )
    hook.add_argument("--url", default="",
                      help=_("the webhook URL (or --url-stdin: it is a secret)"))  # fmt: skip
    hook.add_argument("--url-stdin", action="store_true", help=_("read the URL from stdin"))
    hook.add_argument(
        "--format", default="json", choices=["json", "slack", "discord", "feishu", "dingtalk"]
    )
    hook.add_argument(
        "--secret-stdin",
        action="store_true",
        help=_(
            "read a secret from stdin: a bearer token (json/slack/discord) or the signing "
            "secret of a Feishu or DingTalk bot"
        ),
    )
    hook.add_argument(
        "--secret-header", default="", help=_("the header for the token (default Authorization)")
    )

    mail = kinds.add_parser("email", help=_("e-mail through your SMTP server"))
    mail.add_argument("--host", required=True)
    mail.add_argument("--port", type=int, default=None, help=_("default: 587 starttls, 465 tls"))
    mail.add_argument("--security", choices=["starttls", "tls", "none"], default="starttls")
    mail.add_argument("--user", default="")
    mail.add_argument("--password-stdin", action="store_true",
                      help=_("read the password from stdin"))  # fmt: skip
    mail.add_argument("--from", dest="sender", required=True)
    mail.add_argument("--to", action="append", required=True, help=_("a recipient (repeatable)"))

    desk = kinds.add_parser("desktop", help=_("desktop notifications (for `gpu-companion watch`)"))
    for q in (ntfy, hook, mail):
        q.add_argument("--ca-file", default="",
                       help=_("trust this CA (PEM) for a self-hosted server"))  # fmt: skip
    for q in (ntfy, hook):
        q.add_argument(
            "--allow-http", action="store_true", help=_("allow plain http to another computer")
        )
    for q in (ntfy, hook, mail, desk):
        _filters(q)

    st = actions.add_parser(
        "set", help=_("change a channel's kinds, quiet hours, reminders, state")
    )
    st.add_argument("channel", help=_("the channel's number (see notify list)"))
    _filters(st, for_set=True)

    rm = actions.add_parser("remove", help=_("remove a channel and its secrets"))
    rm.add_argument("channel")

    test = actions.add_parser(
        "test", help=_("send a test message through one channel, or through every enabled one")
    )
    test.add_argument("channel", nargs="?", default=None)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpu_companion.commands.opening import run_action

    actions = {"list": _list, "add": _add, "set": _set, "remove": _remove, "test": _test}
    return run_action("notify", actions, args.notify_action, args)


# --- reading secrets -------------------------------------------------------------------------


def _read_secret(prompt: str) -> str:
    if sys.stdin.isatty():
        return getpass.getpass(_("{prompt} (not shown): ").format(prompt=prompt))
    return sys.stdin.readline().strip()


def _common(args: argparse.Namespace) -> dict[str, Any]:
    from gpu_companion.core.notify.kinds import QuietHours, parse_kinds
    from gpu_companion.core.notify.model import DEFAULT_REMIND_MINUTES

    common: dict[str, Any] = {"name": args.name or ""}
    if args.kinds is not None:
        common["kinds"] = parse_kinds(args.kinds)
    if args.quiet is not None and args.quiet.strip().lower() not in ("off", "none", ""):
        common["quiet"] = QuietHours.parse(args.quiet)
    remind = args.remind_minutes
    common["remind_minutes"] = DEFAULT_REMIND_MINUTES if remind is None else remind
    return common


# --- actions ---------------------------------------------------------------------------------


def _add(services: Services, args: argparse.Namespace) -> int:
    from gpu_companion.core.common.errors import ValidationError

    store = services.notify.channels
    common = _common(args)
    kind = args.channel_type
    if kind == "ntfy":
        token = _read_secret(_("ntfy access token")) if args.token_stdin else ""
        channel = store.add_ntfy(args.server, args.topic, token=token, ca_file=args.ca_file,
                                 allow_http=args.allow_http, **common)  # fmt: skip
    elif kind == "webhook":
        if args.url and args.url_stdin:
            raise ValidationError("url", _("Give the URL either with --url or on stdin, not both."))
        url = _read_secret(_("webhook URL")) if args.url_stdin or not args.url else args.url
        secret = _read_secret(_("webhook secret")) if args.secret_stdin else ""
        channel = store.add_webhook(url, args.format, secret=secret,
                                    secret_header=args.secret_header, ca_file=args.ca_file,
                                    allow_http=args.allow_http, **common)  # fmt: skip
    elif kind == "email":
        password = (
            _read_secret(_("SMTP password for {user}").format(user=args.user))
            if args.password_stdin
            else ""
        )
        port = args.port or {"starttls": 587, "tls": 465, "none": 25}[args.security]
        channel = store.add_email(args.host, port, args.security, args.sender, args.to,
                                  user=args.user, password=password, ca_file=args.ca_file,
                                  **common)  # fmt: skip
    else:
        channel = store.add_desktop(**common)
    if channel.secrets:
        added = _("Added channel {label}: {target}; {secrets} in the keyring.")
    else:
        added = _("Added channel {label}: {target}.")
    print(added.format(label=channel.label(), target=channel.target(),
                       secrets=", ".join(sorted(channel.secrets))))  # fmt: skip
    print(_("Send a test message with: gpu-companion notify test {id}").format(id=channel.id))
    return 0


def _set(services: Services, args: argparse.Namespace) -> int:
    from gpu_companion.core.notify.kinds import QuietHours, parse_kinds

    changes: dict[str, Any] = {}
    if args.kinds is not None:
        changes["kinds"] = parse_kinds(args.kinds)
    if args.quiet is not None:
        off = args.quiet.strip().lower() in ("off", "none", "")
        changes["quiet"] = None if off else QuietHours.parse(args.quiet)
    if args.remind_minutes is not None:
        changes["remind_minutes"] = args.remind_minutes
    if args.enabled is not None:
        changes["enabled"] = args.enabled
    if args.name is not None:
        changes["name"] = args.name
    channel = services.notify.channels.require(args.channel)
    if not changes:
        print(_line(channel, None))
        return 0
    channel = services.notify.channels.update(channel.id, **changes)
    print(_("Changed {channel}").format(channel=_line(channel, None)))
    return 0


def _remove(services: Services, args: argparse.Namespace) -> int:
    channel = services.notify.channels.remove(services.notify.channels.require(args.channel).id)
    print(_("Removed channel {label} and its secrets.").format(label=channel.label()))
    return 0


def _test(services: Services, args: argparse.Namespace) -> int:
    center = services.notify
    if args.channel is not None:
        channels = [center.channels.require(args.channel)]
    else:
        channels = center.channels.enabled()
        if not channels:
            print(_("gpu-companion notify: no enabled channels to test. Add one: gpu-companion "
                    "notify add ntfy --topic ..."), file=sys.stderr)  # fmt: skip
            return 1
    failed = 0
    for channel in channels:
        result = center.send_test(channel.id)
        if result.ok:
            print(f"{channel.label()}: {result.text}")
        else:
            failed += 1
            print(_("{label}: not delivered: {text}").format(label=channel.label(),
                                                            text=result.text))  # fmt: skip
    return 1 if failed else 0


def _line(channel: Channel, status: ChannelStatus | None) -> str:
    from gpu_companion.core.notify.kinds import DEFAULT_KINDS, KINDS, format_kinds

    kinds = channel.kinds
    shown = "all" if kinds == frozenset(KINDS) else "default" if kinds == DEFAULT_KINDS else None
    parts = [
        channel.label(),
        channel.type,
        channel.target(),
        f"kinds={shown or format_kinds(kinds)}",
        f"quiet={channel.quiet or 'off'}",
        f"remind={channel.remind_minutes}m",
        _("enabled") if channel.enabled else _("disabled"),
    ]
    if status is not None:
        parts.append(_status_text(status))
    return "\t".join(parts)


def _status_text(status: ChannelStatus) -> str:
    def when(t: Any) -> str:
        return t.astimezone().strftime("%Y-%m-%d %H:%M") if t else _("never")

    text = _("last sent {when}, {pending} pending, {failed} failed").format(
        when=when(status.last_ok_at), pending=status.pending, failed=status.failed
    )
    if status.last_error and (
        status.last_ok_at is None
        or (status.last_error_at is not None and status.last_error_at >= status.last_ok_at)
    ):
        text += _("; last error {when}: {error}").format(
            when=when(status.last_error_at), error=status.last_error
        )
    return text


def _list(services: Services, args: argparse.Namespace) -> int:
    from gpu_companion.core.common.clock import to_iso
    from gpu_companion.core.notify.kinds import format_kinds
    from gpu_companion.core.notify.model import config_to_json

    center = services.notify
    channels = center.channels.all()
    statuses = center.statuses()
    if args.json:
        rows = []
        for c in channels:
            s = statuses[c.id]
            rows.append({
                "id": c.id, "type": c.type, "name": c.name, "target": c.target(),
                "config": config_to_json(c.config), "secrets_in_keyring": sorted(c.secrets),
                "kinds": format_kinds(c.kinds).split(","), "quiet": str(c.quiet or ""),
                "remind_minutes": c.remind_minutes, "enabled": c.enabled,
                "last_ok_at": to_iso(s.last_ok_at) if s.last_ok_at else None,
                "last_error": s.last_error,
                "last_error_at": to_iso(s.last_error_at) if s.last_error_at else None,
                "pending": s.pending, "failed": s.failed,
            })  # fmt: skip
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    if not channels:
        print(_("No notification channels. Add one: gpu-companion notify add ntfy --topic NAME"))
    for c in channels:
        print(_line(c, statuses.get(c.id)))
    return 0
