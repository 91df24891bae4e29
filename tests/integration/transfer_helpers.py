"""Helpers for the transfer tests: trees with awkward names, hashes of both sides, a queue."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from gpu_companion.core.transfers.engine import RetryPolicy, TransferEngine
from gpu_companion.core.transfers.queue import TransferQueue

AWKWARD = ["with space.txt", "ünïcødé ✓.bin", "-leading-dash", 'quote\'s "here".txt']


def make_tree(root: Path, big: int = 0, seed: int = 1) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(AWKWARD):
        (root / name).write_bytes(bytes([seed + i]) * (1000 + i))
    sub = root / "sub dir" / "-nested"
    sub.mkdir(parents=True, exist_ok=True)
    (sub / "weights.pt").write_bytes(os.urandom(4096))
    if big:
        (root / "big.bin").write_bytes(os.urandom(big))
    return root


def tree_hashes(root: Path, skip: tuple[str, ...] = (".rsync-partial",)) -> dict[str, str]:
    out = {}
    for dirpath, dirnames, files in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in skip]
        for f in files:
            p = Path(dirpath) / f
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def make_engine(target, env: dict[str, str] | None = None) -> TransferEngine:  # type: ignore[no-untyped-def]
    return TransferEngine(
        target.ssh_argv,
        target.client_factory,
        env=env,
        retry=RetryPolicy(attempts=4, base_delay_s=0.2, max_delay_s=1.0),
    )


def make_queue(store, target, env: dict[str, str] | None = None) -> TransferQueue:  # type: ignore[no-untyped-def]
    return TransferQueue(
        store,
        make_engine(target, env),
        lambda a: target.host if a == target.host.alias else None,
        save_every_s=0.2,
    )
