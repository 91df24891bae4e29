"""`gpu-companion doctor`: the environment check of the welcome dialog, in a terminal."""

from __future__ import annotations

import argparse
from typing import Any

from gpu_companion.core.common.i18n import _


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "doctor",
        help=_(
            "check the keyring, ssh, ssh-agent and rsync, and say how to install what is missing"
        ),
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpu_companion.core.common.paths import AppPaths
    from gpu_companion.core.ssh.agent import RuntimePaths
    from gpu_companion.core.system.envcheck import detect_os, run_checks

    os_info = detect_os()
    print(
        _("GPU Companion environment check on {system}").format(
            system=os_info.pretty or os_info.family
        )
    )
    failed = 0
    socket = RuntimePaths.for_data_dir(AppPaths.default().data_dir).socket
    for result in run_checks(os_info=os_info, agent_socket=socket):
        missing = _missing(result.detail)
        mark = _("ok ") if result.ok else _("MISSING") if missing else _("PROBLEM")
        version = f" {result.version}" if result.version else ""
        print(f"  [{mark}] {result.name}{version}: {result.detail}")
        if result.fix:
            print(f"          {result.fix}")
        failed += not result.ok
    print(
        _("everything needed is there")
        if not failed
        else _("{n} problem(s) found").format(n=failed)
    )
    return 1 if failed else 0


# core.system.envcheck's message for a tool missing from the PATH (its msgid, in its catalog)
_NOT_ON_PATH = "`{tool}` was not found on the PATH."


def _missing(detail: str) -> bool:
    """A check whose tool is not installed, in English or in the message's translation."""
    import re

    if "not found" in detail:
        return True
    pattern = re.escape(_(_NOT_ON_PATH)).replace(re.escape("{tool}"), ".+")
    return re.fullmatch(pattern, detail) is not None
