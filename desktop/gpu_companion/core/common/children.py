"""Child processes that end with the app: their own process group, and a parent-death signal.

A child started with `child_options()` runs in a session (and process group) of its own, so a
stop reaches it and everything it started (rsync and its ssh) with one `killpg`, and a Ctrl-C in
the terminal reaches only the app, which stops its children in order. On Linux it also receives
SIGTERM when its parent dies (`prctl(PR_SET_PDEATHSIG)`): a `kill -9` of the app no longer leaves
rsync writing as an orphan (rsync, told SIGTERM, keeps its partial file for the resume).

The kernel sends the signal when the *thread* that forked the child ends, not the process: start
such a child only from a thread that waits for it (a transfer lane, a blocking `run_group`), never
from a short-lived thread that returns while the child runs on.

Because of that `preexec_fn`, Python runs its after-fork clean-up in the child before exec: the
other threads' thread-local slots are dropped there and their finalisers run. A finaliser must
not take a lock another thread may hold (it would wait for ever, and the parent with it): the
store's connection finaliser does nothing outside the process that made it.

The setting is not inherited by the child's own children (a fork clears it): ssh under rsync
ends because rsync closes its pipe, and a daemon the child forks is not covered at all.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

PR_SET_PDEATHSIG = 1

_prctl: Callable[..., int] | None = None
if sys.platform.startswith("linux"):
    try:  # looked up now: the child may only call it, between fork and exec
        _prctl = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        _prctl = None


def _die_with_parent(parent: int, sig: int) -> Callable[[], None]:
    prctl = _prctl
    assert prctl is not None

    def preexec() -> None:  # in the child, between fork and exec: no imports, no locks
        prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the prctl: nobody will signal us
            os.kill(os.getpid(), sig)

    return preexec


def child_options(death_signal: int = signal.SIGTERM) -> dict[str, Any]:
    """Keyword arguments for `subprocess.Popen`/`run`: a new session (its own process group)
    and, on Linux, `death_signal` when the forking thread ends."""
    options: dict[str, Any] = {"start_new_session": True}
    if _prctl is not None:
        options["preexec_fn"] = _die_with_parent(os.getpid(), death_signal)
    return options


def kill_group(proc: subprocess.Popen[Any], sig: int = signal.SIGTERM) -> None:
    """Signal the child's whole process group (it leads it: `child_options`) until the child has
    been waited for (its pid, and so the group's id, cannot be reused before that)."""
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def run_group(
    argv: Sequence[str],
    *,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
    text: bool = False,
) -> subprocess.CompletedProcess[Any]:
    """`subprocess.run(argv, capture_output=True, stdin=DEVNULL)` in a group of its own with the
    parent-death signal; a timeout kills the whole group (rsync and its ssh), not only argv[0]."""
    with subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=text,
        **child_options(),
    ) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc, signal.SIGKILL)
            proc.communicate()
            raise
        except BaseException:
            kill_group(proc, signal.SIGKILL)
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
