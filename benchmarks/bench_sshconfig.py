#!/usr/bin/env python3
"""How much the no-op check saves when the managed ssh config is re-synced after every change.

    python benchmarks/bench_sshconfig.py [--hosts 40] [--rounds 5]

The app re-syncs the generated file after each host or key change. The writer compares the
rendered text with the file first and runs `ssh -G` only for a real change; the naive way
validates and rewrites every time. Both run here, on temp files, in the same process.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "desktop"))

from gpu_companion.core.ssh.config_writer import HostEntry, SshConfigWriter, atomic_write  # noqa: E402


def entries(n: int, keys: Path) -> list[HostEntry]:
    return [
        HostEntry(
            f"gpu{i}",
            f"203.0.113.{i % 250 + 1}",
            20000 + i,
            "root",
            keys / "vast.pub",
            forwards=(8888,) if i % 3 == 0 else (),
        )
        for i in range(n)
    ]


def timed(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        (home / ".ssh").mkdir()
        writer = SshConfigWriter(home)
        hosts = entries(args.hosts, home / "keys")
        first = timed(lambda: writer.write(hosts), 1)
        resync = timed(lambda: writer.write(hosts), args.rounds)

        def naive() -> None:
            text, _ = writer.plan(hosts)
            data = text.encode()
            writer.validate_with_ssh(data, hosts)
            atomic_write(writer.config_path, data)

        always = timed(naive, args.rounds)
    print(f"{'what':<42}{'ms (median)':>12}")
    print(f"{'first write, ' + str(args.hosts) + ' hosts, ssh -G each':<42}{first:>12.1f}")
    print(f"{'re-sync, nothing changed (writer)':<42}{resync:>12.1f}")
    print(f"{'re-sync, validate + rewrite always (naive)':<42}{always:>12.1f}")
    print(f"ratio naive / writer: {always / resync:.0f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
