"""Which process owns a record, and whether that process still runs.

An owner is `boot id:pid:start time of the pid` (Linux; elsewhere the boot id and start time are
empty and the pid alone is asked): a pid reused after a reboot or by a later process is not taken
for the one that wrote the record. The release journal and the transfer queue both write it.
"""

from __future__ import annotations

import os
from pathlib import Path


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux), so a reused pid is not
    mistaken for the process that wrote the entry."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[-1].split()[19]


def this_owner() -> str:
    pid = os.getpid()
    return f"{_boot_id()}:{pid}:{_start_time(pid)}"


def this_machine() -> str:
    """The name of this computer, for records a process on another computer may read (a data
    dir on a shared disk): there, `owner_alive` cannot look at the owner's process table."""
    import socket  # here: the host registry imports this module before the first paint

    return socket.gethostname()


def owner_alive(owner: str) -> bool:
    """Whether the process `owner` names runs on this computer now (False for another boot)."""
    boot, _, rest = owner.partition(":")
    pid_text, _, started = rest.partition(":")
    if not pid_text.isdigit() or boot != _boot_id():
        return False
    pid = int(pid_text)
    if started and Path("/proc").is_dir():
        return _start_time(pid) == started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
