"""A command's own ssh-agent lives only as long as the command: `kill -9` of the command ends it
(the keys leave memory), and two commands started together share one agent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.harness.util import wait_for

COMMAND = """
import sys, time
from gpu_companion.services import build_services
s = build_services()
s.use_agent()  # what `transfer` and `run` do: attach to the window's agent, or start one
print(s.runtime_paths.root, flush=True)
time.sleep(60)
"""


def _command() -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", COMMAND], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"  # a zombie no init reaped is gone too


def test_kill_9_of_a_command_ends_the_agent_it_started(app_paths) -> None:  # type: ignore[no-untyped-def]
    proc = _command()
    try:
        root = Path(proc.stdout.readline().strip())  # type: ignore[union-attr]
        assert root.is_dir(), proc.stderr.read() if proc.stderr else ""
        agent = int((root / "agent.pid").read_text())
        assert _alive(agent)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        wait_for(lambda: not _alive(agent), 10, "the command's agent to end with it")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_two_commands_started_together_share_one_agent(app_paths) -> None:  # type: ignore[no-untyped-def]
    procs = [_command(), _command()]
    try:
        roots = {p.stdout.readline().strip() for p in procs}  # type: ignore[union-attr]
        assert len(roots) == 1
        root = Path(roots.pop())
        agent = int((root / "agent.pid").read_text())
        agents = [
            pid for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
            if _alive(pid) and b"ssh-agent" in _cmdline(pid) and str(root).encode() in _cmdline(pid)
        ]  # fmt: skip
        assert agents == [agent]
    finally:
        for p in procs:
            p.kill()
            p.wait(10)
    time.sleep(0.1)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
