"""`gpu-companion watch`: the auto-release policies without a window (for an always-on
computer), logging what it does; refuses to start beside another watcher on the same data."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from typing import Any

from gpu_companion.core.common.i18n import _


class _EveryAction(argparse.Action):
    """Stores --every and notes that it was given, so only a given value goes into a service."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        setattr(namespace, self.dest, values)
        namespace.every_given = True


def register(sub: Any) -> None:
    p = sub.add_parser(
        "watch",
        help=_("apply the auto-release policies without a window (Ctrl-C to stop)"),
        description=_(
            "Watches every billed host with an auto-release policy, notifies, runs "
            "the release checklist unattended and releases only when it passes. "
            "Messages go to stdout and the log file."
        ),
    )
    p.add_argument(
        "--every", type=float, default=30.0, action=_EveryAction,
        help=_("seconds between checks"),
    )  # fmt: skip
    service = p.add_mutually_exclusive_group()
    service.add_argument(
        "--install",
        action="store_true",
        help=_(
            "install `watch` as a user service that starts at login and restarts on failure "
            "(Linux: systemd user unit; macOS: launchd agent); --every carries into it"
        ),
    )
    service.add_argument(
        "--uninstall", action="store_true", help=_("stop the service and remove its definition")
    )
    service.add_argument(
        "--status", action="store_true", help=_("say whether the service is installed, enabled "
        "and running, and where its logs are"),
    )  # fmt: skip
    p.set_defaults(handler=run)


def run_service_action(args: argparse.Namespace) -> int:
    """--install / --uninstall / --status: 0 ok, 1 failed, 2 not supported on this OS."""
    import math

    from gpu_companion.core.system.service_unit import WatchService, watch_command

    every = args.every if getattr(args, "every_given", False) else None
    if args.install and every is not None and not (math.isfinite(every) and every > 0):
        print(_("gpu-companion watch: --every must be a positive number of seconds, not "
                "{every}").format(every=f"{every:g}"), file=sys.stderr)  # fmt: skip
        return 1
    service = WatchService()
    if args.install:
        outcome = service.install(watch_command(every))
    elif args.uninstall:
        outcome = service.uninstall()
    else:
        outcome = service.status()
    print(outcome.text, file=sys.stdout if outcome.code == 0 else sys.stderr, flush=True)
    return outcome.code


def run(args: argparse.Namespace) -> int:
    if args.install or args.uninstall or args.status:
        return run_service_action(args)
    from gpu_companion.commands.opening import open_services
    from gpu_companion.logsetup import setup_logging

    services = open_services()
    if services is None:
        return 2
    setup_logging(services.paths.log_file)
    services.notifier.subscribe(lambda m: print(f"{m.level.name.lower()}: {m.text}", flush=True))
    if not services.start_always_on(args.every):
        print(
            _(
                "gpu-companion watch: another GPU Companion (a window or a watch) already applies "
                "the policies for {folder}; not starting a second one."
            ).format(folder=services.paths.data_dir),
            file=sys.stderr,
        )
        services.close()
        return 1
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_args: done.set())  # before "watching": a stop right
    logging.getLogger(__name__).info("watch started")  # after the start is never lost
    print(
        _("watching (every {seconds} s); Ctrl-C to stop").format(seconds=f"{args.every:g}"),
        flush=True,
    )
    try:
        while not done.wait(0.5):  # short waits: Python runs the handler between them
            pass
    except KeyboardInterrupt:
        pass
    services.close()
    return 0
