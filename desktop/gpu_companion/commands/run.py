"""`gpu-companion run`: one command over many inputs, sharded across rented hosts by GNU
parallel, through the app's managed ssh config; `--resume-failed RUN_ID` reruns only the failed
shards. Exit 0 when every shard is done, 1 when some failed, 2 for usage, 3 when cancelled."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common.i18n import _

if TYPE_CHECKING:
    from gpu_companion.core.fleet.runs import RunStatus
    from gpu_companion.services import Services


def register(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help=_("run a command over many inputs across hosts (GNU parallel), or resume a run"),
        description=_(
            "Shards inputs across hosts with GNU parallel; {} in COMMAND is the shard "
            "(with --range, {1} is its first id and {2} one past its last). Each "
            "shard's stdout and stderr are kept under the run's folder; the joblog is "
            "the record."
        ),
    )
    p.add_argument("--hosts", default="", help=_("comma-separated aliases"))
    p.add_argument("--slots", default="", help=_("jobs at once per host, e.g. a=2,b=1 "
                   "(default: each host's GPU count, at least 1)"))  # fmt: skip
    src = p.add_mutually_exclusive_group()
    src.add_argument("--inputs", help=_("a file with one input per line (paths on the hosts)"))
    src.add_argument("--range", help=_("START:STOP ids (STOP excluded), split into --shards"))
    p.add_argument("--shards", type=int, default=0, help=_("how many shards for --range"))
    p.add_argument("--retries", type=int, default=2, help=_("attempts per shard (default 2)"))
    p.add_argument("--return", dest="returns", action="append", default=[],
                   help=_("a file each shard leaves on its host to copy back: {}.out"))  # fmt: skip
    p.add_argument("--transfer", action="store_true",
                   help=_("--inputs are local files: copy each to its host first"))  # fmt: skip
    p.add_argument("--resume-failed", metavar="RUN_ID", help=_("rerun only the failed shards"))
    p.add_argument("--status", metavar="RUN_ID", help=_("show a run's shards and exit"))
    p.add_argument("--cancel", metavar="RUN_ID", help=_("stop a run and its remote processes"))
    p.add_argument("--list", action="store_true", help=_("list the runs"))
    p.add_argument("--detach", action="store_true", help=_("start and return at once"))
    p.add_argument("--json", action="store_true", help=_("print the final status as JSON"))
    p.add_argument("command", nargs=argparse.REMAINDER,
                   help=_("-- COMMAND ARGS with {} (or {1} {2}): each word reaches the host as "
                   "given; a single word is a shell line ('a {} | b > {}.out')"))  # fmt: skip
    p.set_defaults(handler=run)


def _usage(text: str) -> int:
    print(_("gpu-companion run: {text}").format(text=text), file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    from gpu_companion.commands.opening import open_services
    from gpu_companion.core.common.errors import UserError

    services = open_services()
    if services is None:
        return 2
    try:
        return _dispatch(args, services)
    except UserError as exc:
        print(_("gpu-companion: {problem}").format(problem=exc)
              + (f"\n{exc.hint}" if exc.hint else ""), file=sys.stderr)  # fmt: skip
        return 1
    finally:
        services.close()


def _dispatch(args: argparse.Namespace, services: Services) -> int:
    runs = services.runs
    if args.list:
        for run_id in runs.ids():
            print(runs.status(run_id).summary())
        return 0
    if args.status:
        return _report(services, runs.status(args.status), args.json)
    if args.cancel:
        print(_("cancelled") if runs.cancel(args.cancel) else _("not running"))
        return 0
    services.use_agent()  # the window's ssh-agent, or one while this command follows the run
    if args.resume_failed:
        runs.resume_failed(args.resume_failed)
        run_id = args.resume_failed
    else:
        spec = _spec(args, services)
        if isinstance(spec, int):
            return spec
        services.managed_ssh.sync()  # parallel's ssh reads the managed file
        run_id = runs.start(spec)
        print(
            _("run {id}: {shards} shards on {hosts} hosts").format(
                id=run_id, shards=len(spec.inputs), hosts=len(spec.hosts)
            )
        )
    if args.detach:
        return 0
    return _follow(services, run_id, args.json)


def _spec(args: argparse.Namespace, services: Services) -> Any:
    from gpu_companion.core.fleet.runs import (
        HostSlots,
        RunSpec,
        command_from_words,
        parse_range,
        split_range,
    )

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        return _usage(_("give the command after --, e.g. -- python work.py {}"))
    aliases = [a.strip() for a in args.hosts.split(",") if a.strip()]
    if not aliases:
        return _usage(_("--hosts a,b is needed"))
    known = {h.alias: h for h in services.registry.hosts(include_released=False)}
    missing = [a for a in aliases if a not in known]
    if missing:
        return _usage(_("no active host named {names}").format(names=", ".join(missing)))
    slots = {a: max(known[a].gpu_count, 1) for a in aliases}
    for item in filter(None, args.slots.split(",")):
        alias, _sep, n = item.partition("=")
        if alias.strip() not in slots or not n.strip().isdigit():
            return _usage(
                _("--slots: {item} is not ALIAS=N for a chosen host").format(item=repr(item))
            )
        slots[alias.strip()] = int(n)
    if args.range:
        if args.shards < 1:
            return _usage(_("--range needs --shards N"))
        inputs, by_range = split_range(*parse_range(args.range), args.shards), True
    elif args.inputs:
        with open(args.inputs, encoding="utf-8") as f:
            inputs, by_range = tuple(line.strip() for line in f if line.strip()), False
    else:
        return _usage(_("give --inputs FILE or --range START:STOP --shards N"))
    return RunSpec(
        hosts=tuple(HostSlots(a, slots[a]) for a in aliases),
        # several words: each kept whole on the host; one word: a shell line, as written
        command=command[0] if len(command) == 1 else command_from_words(command),
        inputs=inputs,
        by_range=by_range,
        retries=args.retries,
        returns=tuple(args.returns),
        transfer_inputs=args.transfer,
    )


def _follow(services: Services, run_id: str, as_json: bool) -> int:
    runs, last = services.runs, ""
    tty = sys.stderr.isatty()
    try:
        while True:
            status = runs.status(run_id)
            line = status.summary()
            if line != last and not as_json:
                print(("\r" if tty else "") + line, end="" if tty else "\n", file=sys.stderr)
                last = line
            if not status.running:
                break
            time.sleep(0.3)
    except KeyboardInterrupt:
        runs.cancel(run_id)
        print("\n" + _("cancelled: the remote processes were stopped"), file=sys.stderr)
        return 3
    if tty and not as_json:
        print(file=sys.stderr)
    runs.settle(run_id)  # verified results leave the hosts; the others stay there
    return _report(services, runs.status(run_id), as_json)


def _report(services: Services, status: RunStatus, as_json: bool) -> int:
    from gpu_companion.core.fleet.runs import run_cost

    cost = run_cost(services.ledger, status)
    if as_json:
        print(json.dumps({
            "run": status.run_id, "running": status.running,
            "elapsed_s": round(status.elapsed_s(), 1), "cost": cost,
            "shards": [s.__dict__ for s in status.shards],
        }, indent=1))  # fmt: skip
    else:
        for s in status.shards:
            if s.state == "failed":
                why = s.reason or _("exit {code}").format(code=s.exit_code)
                if s.signal:
                    why += _(", signal {signal}").format(signal=s.signal)
                print(
                    _("shard {seq} ({input}) failed on {host}: {why}").format(
                        seq=s.seq, input=s.input, host=s.host, why=why
                    )
                )
        print(_("{summary}; {seconds} s").format(summary=status.summary(),
                                                  seconds=f"{status.elapsed_s():.1f}")
              + (f"; {cost}" if cost else ""))  # fmt: skip
    if status.running or status.count("pending"):
        return 3 if not status.running else 0
    return 1 if status.count("failed") else 0
