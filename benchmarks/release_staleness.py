#!/usr/bin/env python3
"""Why the release gate probes staleness with one `find -newermt` instead of re-running the
checksum dry-run: both over the same synced checkpoint dir, in the same run.

    python benchmarks/release_staleness.py [--files 200] [--size-kib 256] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path


def timed(argv: list[str], repeat: int) -> tuple[float, str]:
    best, out = float("inf"), ""
    for _ in range(repeat):
        t = time.perf_counter()
        out = subprocess.run(
            argv, capture_output=True, text=True, check=True, env={**os.environ, "LC_ALL": "C"}
        ).stdout
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--size-kib", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp, "ckpt"), Path(tmp, "local")
        src.mkdir()
        for i in range(args.files):
            (src / f"shard-{i:04d}.pt").write_bytes(os.urandom(args.size_kib * 1024))
        subprocess.run(["rsync", "-a", f"{src}/", f"{dst}/"], check=True)
        since = time.time()
        time.sleep(0.05)
        (src / "late.pt").write_bytes(b"new")
        dry, dry_out = timed(
            ["rsync", "-a", "--checksum", "--dry-run", "--itemize-changes", f"{src}/", f"{dst}/"],
            args.repeat,
        )
        probe, probe_out = timed(
            ["find", str(src), "-newermt", f"@{since:.6f}", "-type", "f", "-print", "-quit"],
            args.repeat,
        )
        assert "late.pt" in dry_out and "late.pt" in probe_out
    total_mib = args.files * args.size_kib / 1024
    print(f"synced dir: {args.files} files, {total_mib:.0f} MiB; best of {args.repeat}")
    print(f"{'method':<40}{'seconds':>10}{'ratio':>10}")
    print(f"{'rsync --checksum --dry-run (naive)':<40}{dry:>10.4f}{1.0:>10.1f}")
    print(f"{'find -newermt -quit (staleness probe)':<40}{probe:>10.4f}{dry / probe:>10.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
