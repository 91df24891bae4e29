"""A child process started while another thread holds the store's lock still starts.

`child_options()` sets the parent-death signal in a `preexec_fn`, so Python runs its after-fork
clean-up in the child: the other threads' slots are dropped and the store's finaliser for their
connections runs there. Before the fix it waited on the store's lock, held in the parent by a
thread the child does not have: the child never reached exec, and the transfer lane that
started it (rsync) waited on it for ever."""

from __future__ import annotations

import os
import signal
import threading

from gpu_companion.core.common.children import run_group


def test_a_child_started_while_the_store_lock_is_held_reaches_exec(store) -> None:  # type: ignore[no-untyped-def]
    opened, finish = threading.Event(), threading.Event()

    def worker() -> None:  # a thread with its own connection, alive while the child forks
        store.db.execute("SELECT 1")
        opened.set()
        finish.wait(30)

    other = threading.Thread(target=worker)
    other.start()
    assert opened.wait(10)
    results: list[int] = []
    lane = threading.Thread(target=lambda: results.append(run_group(["true"]).returncode))
    try:
        with store._lock:  # another thread opening or closing a connection at that moment
            lane.start()
            lane.join(10)
        stuck = lane.is_alive()
    finally:
        finish.set()
        other.join(10)
    if stuck:  # end the child that never reached exec, so the run does not hang
        for pid in os.listdir("/proc"):
            if pid.isdigit() and int(pid) != os.getpid():
                try:
                    with open(f"/proc/{pid}/stat") as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                except OSError:
                    continue
                if ppid == os.getpid():
                    os.kill(int(pid), signal.SIGKILL)
        lane.join(10)
    assert not stuck and results == [0]
