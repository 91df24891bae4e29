"""`gpu-companion watch`: the auto-release policies without a window (for an always-on
computer), logging what it does; refuses to start beside another watcher on the same data."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser(
        "watch",
        help="apply the auto-release policies without a window (Ctrl-C to stop)",
        description="Watches every billed host with an auto-release policy, notifies, runs the "
        "release checklist unattended and releases only when it passes. Messages go to stdout "
        "and the log file.",
    )
    p.add_argument("--every", type=float, default=30.0, help="seconds between checks")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpu_companion.commands.opening import open_services
    from gpu_companion.logsetup import setup_logging

    services = open_services()
    if services is None:
        return 2
    setup_logging(services.paths.log_file)
    services.notifier.subscribe(lambda m: print(f"{m.level.name.lower()}: {m.text}", flush=True))
    if not services.start_always_on(args.every):
        print(
            "gpu-companion watch: another GPU Companion (a window or a watch) already applies "
            f"the policies for {services.paths.data_dir}; not starting a second one.",
            file=sys.stderr,
        )
        services.close()
        return 1
    logging.getLogger(__name__).info("watch started")
    print(f"watching (every {args.every:g} s); Ctrl-C to stop", flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    services.close()
    return 0
