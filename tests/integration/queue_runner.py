"""Runs the transfer queue in its own process, as the app would (the restart test kills it).

python -m tests.integration.queue_runner DB SSH_CONFIG ALIAS
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.storage.store import Store
from gpu_companion.core.transfers.engine import TransferEngine
from gpu_companion.core.transfers.queue import TransferQueue


def main() -> None:
    db, config, alias = sys.argv[1:4]
    store = Store(Path(db))
    host = Host(alias=alias, hostname="127.0.0.1")

    def no_sftp(_h: Host) -> object:
        raise RuntimeError("the restart test runs rsync only")

    queue = TransferQueue(
        store, TransferEngine(["ssh", "-F", config], no_sftp), lambda a: host, save_every_s=0.1
    )
    for job in queue.jobs():  # the app starts with jobs paused; this process is the "user"
        assert job.id is not None
        queue.resume(job.id)
    print("running", flush=True)
    queue.run_until_idle()


if __name__ == "__main__":
    main()
