"""`gpu-companion tunnel ALIAS REMOTE_PORT [--local PORT]`: forward a port of a rented host to this
computer over the app's verified connection, in the foreground until Ctrl-C."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from typing import Any

from gpu_companion.core.common.i18n import _


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "tunnel",
        help=_("forward a port of a host to 127.0.0.1 (foreground, Ctrl-C to stop)"),
        description=_(
            "Serves REMOTE_PORT of the host (e.g. Jupyter 8888, TensorBoard 6006) on "
            "127.0.0.1 through the app's own connection: host key checked, key from "
            "the keyring, made again when the link drops. Without --local the same "
            "port is used, or the next free one."
        ),
    )
    p.add_argument("alias", help=_("the host's alias in GPU Companion"))
    p.add_argument("remote_port", type=int, help=_("the port on the host"))
    p.add_argument("--local", type=int, default=0,
                   help=_("this exact local port (fails if taken)"))  # fmt: skip
    p.set_defaults(handler=run)


def run(args: argparse.Namespace, stop: threading.Event | None = None) -> int:
    from gpu_companion.commands.opening import open_services
    from gpu_companion.core.access.specs import TunnelSpec
    from gpu_companion.core.common.errors import UserError

    # paramiko logs each refused channel; the state lines below say it in words instead
    logging.getLogger("paramiko").addHandler(logging.NullHandler())
    services = open_services()
    if services is None:
        return 2
    stop = stop or threading.Event()
    try:
        host = services.registry.host(args.alias)
        if host is None or host.is_local or host.state != "active":
            print(
                _("gpu-companion: no active rented host named {alias}.").format(
                    alias=repr(args.alias)
                ),
                file=sys.stderr,
            )
            return 1
        spec = TunnelSpec(
            _("Port {port}").format(port=args.remote_port), args.remote_port, args.local
        )
        try:
            status = services.tunnels.start(host, spec, exact_port=bool(args.local))
        except UserError as exc:
            print(
                _("gpu-companion: the tunnel did not start: {problem}").format(problem=exc),
                file=sys.stderr,
            )
            return 1
        if status.message:
            print(status.message)
        print(
            _("{host}:{port} → {url}  (Ctrl-C to stop)").format(
                host=host.alias, port=args.remote_port, url=status.url
            ),
            flush=True,
        )
        last = [(status.state, status.message)]
        rc = [0]

        def report(s: Any) -> None:
            if (s.state, s.message) != last[0]:
                last[0] = (s.state, s.message)
                print(f"{s.state}: {s.message}".rstrip(": "), flush=True)
            if s.state == "blocked":  # a changed host key: retrying cannot help
                rc[0] = 1
                stop.set()

        services.tunnels.on_change.subscribe(report)
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, lambda *_args: stop.set())
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        print(_("tunnel closed"), flush=True)
        return rc[0]
    finally:
        services.close()
