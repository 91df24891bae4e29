"""A process killed with SIGKILL in the middle of ledger writes leaves a sound file with every
committed row present."""

import os
import signal
import subprocess
import sys
import time

from gpu_companion.core.storage.store import Store

WRITER = r"""
import sys
from gpu_companion.core.hosts.registry import HostRegistry, Platform
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.storage.store import Store

ledger = SpendLedger(Store(__import__("pathlib").Path(sys.argv[1])))
pid = HostRegistry(ledger.store).save_platform(Platform("vast.ai")).id
n = 0
while True:
    r = ledger.start_rental(pid, "1.25", gpu_model="A100", tag=f"run{n}")
    print(f"rental {r.id}", flush=True)  # reported only once committed
    ledger.end_rental(r.id)
    c = ledger.add_charge(pid, "traffic", "0.10", rental_id=r.id)
    print(f"charge {c.id}", flush=True)
    n += 1
"""


def test_sigkill_mid_write_keeps_every_committed_row(tmp_path):
    db = tmp_path / "ledger.sqlite3"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True
    )
    committed = {"rental": set(), "charge": set()}
    deadline = time.monotonic() + 30
    try:
        while len(committed["charge"]) < 150 and time.monotonic() < deadline:
            kind, ident = proc.stdout.readline().split()
            committed[kind].add(int(ident))
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        rest = proc.stdout.read()  # lines written before the kill landed
        proc.wait(10)
    for line in rest.splitlines():
        kind, ident = line.split()
        committed[kind].add(int(ident))
    assert proc.returncode == -signal.SIGKILL
    assert len(committed["charge"]) >= 150

    store = Store(db)
    try:
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rentals = {r[0] for r in store.db.execute("SELECT id FROM rentals")}
        charges = {r[0] for r in store.db.execute("SELECT id FROM charges")}
        assert committed["rental"] <= rentals
        assert committed["charge"] <= charges
        # nothing half-written: every stopped meter has its cost, every charge its rental
        assert (
            store.db.execute(
                "SELECT count(*) FROM rentals WHERE ended_at IS NOT NULL AND cost_minor IS NULL"
            ).fetchone()[0]
            == 0
        )
    finally:
        store.close()
