"""`gpu-companion doctor`: the environment check of the welcome dialog, in a terminal."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "doctor",
        help="check the keyring, ssh, ssh-agent and rsync, and say how to install what is missing",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpu_companion.core.common.paths import AppPaths
    from gpu_companion.core.ssh.agent import RuntimePaths
    from gpu_companion.core.system.envcheck import detect_os, run_checks

    os_info = detect_os()
    print(f"GPU Companion environment check on {os_info.pretty or os_info.family}")
    failed = 0
    socket = RuntimePaths.for_data_dir(AppPaths.default().data_dir).socket
    for result in run_checks(os_info=os_info, agent_socket=socket):
        mark = "ok " if result.ok else "MISSING" if "not found" in result.detail else "PROBLEM"
        version = f" {result.version}" if result.version else ""
        print(f"  [{mark}] {result.name}{version}: {result.detail}")
        if result.fix:
            print(f"          {result.fix}")
        failed += not result.ok
    print("everything needed is there" if not failed else f"{failed} problem(s) found")
    return 1 if failed else 0
