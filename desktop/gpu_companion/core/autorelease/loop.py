"""The always-on loop: one process per data dir (the window, the tray or `gpu-companion watch`,
whichever claims the lock first) runs every rule that must work while the user is away: spend
alerts, auto-release, the providers' instances, a release a dead process left half-done.

Each job runs on a thread of its own, so a checklist that takes minutes on a slow host never
delays a budget alert; nothing here runs on a GUI thread. A second process on the same data
finds the lock taken and leaves the rules to the first (they would fire twice).
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

LOCK_NAME = "autorelease.lock"  # the name earlier versions used: an older process still counts


@dataclass(frozen=True)
class Job:
    name: str
    fn: Callable[[], object]
    every_s: float


def holder(lock_path: Path) -> int | None:
    """The pid written by the process that holds the loop, None when nobody does."""
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:  # held: the holder wrote its pid
            text = os.read(fd, 32).decode("ascii", "replace").strip()
            return int(text) if text.isdigit() else 0
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


class CoreLoop:
    def __init__(self, lock_path: Path) -> None:
        self.lock_path = lock_path
        self.jobs: list[Job] = []
        self._fd: int | None = None
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def claim(self) -> bool:
        """Take the data dir's loop; False when another live process holds it."""
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    @property
    def claimed(self) -> bool:
        return self._fd is not None

    def every(self, name: str, fn: Callable[[], object], every_s: float) -> None:
        self.jobs.append(Job(name, fn, every_s))

    def start(self, first: tuple[Callable[[], object], ...] = ()) -> None:
        """`first` once, in order, then every job on its own thread (first round at once)."""

        def begin() -> None:
            for fn in first:
                self._run(fn, "start-up")
            for job in self.jobs:
                t = threading.Thread(target=self._repeat, args=(job,), name=f"core:{job.name}",
                                     daemon=True)  # fmt: skip
                self._threads.append(t)
                t.start()

        t = threading.Thread(target=begin, name="core:start", daemon=True)
        self._threads.append(t)
        t.start()

    def _run(self, fn: Callable[[], object], name: str) -> None:
        try:
            fn()
        except Exception:  # one failing rule never stops the others
            log.exception("the always-on loop's %s failed", name)

    def _repeat(self, job: Job) -> None:
        while not self._stop.is_set():
            self._run(job.fn, job.name)
            self._stop.wait(job.every_s)

    def stop(self) -> None:
        self._stop.set()
        for t in list(self._threads):
            t.join(10)
        if self._fd is not None:
            os.close(self._fd)  # closing drops the lock
            self._fd = None
