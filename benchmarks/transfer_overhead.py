#!/usr/bin/env python3
"""Transfer engine overhead and resume efficiency, over a real sshd on 127.0.0.1.

    python benchmarks/transfer_overhead.py [--size MB] [--repeat N]

(a) wall time of the engine (rsync with progress parsing, partial dir, checks) against plain
`rsync -a` on the same tree of mixed files; (b) 50 small jobs one after the other, where the fixed
cost per job (the ssh handshake) dominates; (c) a single big file killed with SIGKILL at ~50 %,
then resumed: bytes sent on resume / bytes remaining, for the engine (--partial-dir) and for
plain `rsync -a` (the naive alternative, which starts the file over).

The engine runs with the app's own ssh argv (`app_ssh_argv`: BatchMode and one shared connection
per host in a runtime dir); a row without the shared connection shows what it saves.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "desktop")]

from tests.harness.sshd import SshServer  # noqa: E402

from gpu_companion.core.hosts.registry import Host  # noqa: E402
from gpu_companion.core.ssh.agent import RuntimePaths, close_control_masters  # noqa: E402
from gpu_companion.core.ssh.managed import app_ssh_argv  # noqa: E402
from gpu_companion.core.transfers.engine import TransferEngine  # noqa: E402
from gpu_companion.core.transfers.job import (  # noqa: E402
    PARTIAL_DIR,
    TransferControl,
    TransferJob,
    TransferOptions,
)
from gpu_companion.core.transfers.rsync.progress import parse_stats  # noqa: E402

ALIAS = "gpu-bench"


def make_tree(root: Path, total_mb: int) -> int:
    """Mixed files: half the bytes in four big files, half in 100 KB to 1 MB files."""
    root.mkdir(parents=True)
    total = total_mb * 1_000_000
    big = total // 2 // 4
    for i in range(4):
        (root / f"shard-{i}.bin").write_bytes(os.urandom(big))
    left, n = total - 4 * big, 0
    while left > 0:
        size = min(left, 100_000 + (n * 37_000) % 900_000)
        sub = root / f"dir {n % 10}"
        sub.mkdir(exist_ok=True)
        (sub / f"file-{n}.pt").write_bytes(os.urandom(size))
        left -= size
        n += 1
    return total


def ssh_setup(work: Path) -> tuple[SshServer, Path]:
    server = SshServer(work / "sshd").start()
    key = work / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    server.authorize((work / "id_ed25519.pub").read_text())
    (work / "known_hosts").write_text(server.known_hosts_line())
    config = work / "ssh_config"
    config.write_text(
        f"Host {ALIAS}\n  HostName 127.0.0.1\n  Port {server.port}\n  User {server.user}\n"
        f"  IdentityFile {key}\n  IdentitiesOnly yes\n  UserKnownHostsFile {work / 'known_hosts'}\n"
        "  StrictHostKeyChecking yes\n  BatchMode yes\n"
    )
    return server, config


def no_sftp(_h: Host) -> object:
    raise RuntimeError("rsync only")


def engine_run(engine: TransferEngine, job: TransferJob, host: Host) -> tuple[float, object]:
    t0 = time.perf_counter()
    gen = engine.run(job, host, TransferControl())
    try:
        while True:
            next(gen)
    except StopIteration as stop:
        return time.perf_counter() - t0, stop.value


def plain_rsync(config: Path, src: Path, dst: str, extra: list[str] | None = None) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [
            "rsync",
            "-a",
            *(extra or []),
            "-e",
            f"ssh -F {config}",
            "--",
            f"{src}/",
            f"{ALIAS}:{dst}/",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - t0


def small_jobs(
    work: Path, engines: dict[str, TransferEngine], config: Path, host: Host, n: int
) -> dict[str, float]:
    """`n` jobs of one small folder each (3 files, 30 KB): plain rsync -a, then each engine
    setup with and without verification, interleaved so load changes hit all of them alike."""
    src = work / "small"
    src.mkdir()
    for i in range(3):
        (src / f"note {i}.txt").write_bytes(os.urandom(10_000))
    totals: dict[str, float] = {"plain rsync -a": 0.0}
    for i in range(n):
        totals["plain rsync -a"] += plain_rsync(config, src, str(work / f"s-p-{i}"))
        for name, engine in engines.items():
            for verify in (False, True):
                label = f"{name}{' + verification' if verify else ''}"
                dst = work / f"s-{len(totals)}-{i}"
                job = TransferJob(
                    ALIAS, "upload", str(src), str(dst), TransferOptions(verify=verify)
                )
                t, outcome = engine_run(engine, job, host)
                assert outcome.outcome == "done"  # type: ignore[attr-defined]
                totals[label] = totals.get(label, 0.0) + t
    return totals


def kill_at_half(dst: Path, size: int) -> threading.Thread:
    """Watch rsync's temp file in `dst` and SIGKILL our rsync children once it is half full."""

    def watch() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            temps = list(dst.glob(".model.bin.*")) if dst.exists() else []
            try:
                written = max((t.stat().st_size for t in temps), default=0)
            except FileNotFoundError:
                written = 0
            if written >= size // 2:
                subprocess.run(
                    ["pkill", "-KILL", "-P", str(os.getpid()), "-x", "rsync"], check=False
                )
                return
            time.sleep(0.01)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


def resume_engine(
    engine: TransferEngine, host: Host, src: Path, dst: Path, size: int, bw: int
) -> tuple[int, int, int]:
    """(bytes sent on resume, bytes remaining, bytes on disk at the kill)."""
    job = TransferJob(
        ALIAS, "upload", str(src), str(dst), TransferOptions(bwlimit_kbps=bw, verify=False)
    )
    watcher = kill_at_half(dst, size)
    engine_run(engine, job, host)
    watcher.join()
    partial = dst / PARTIAL_DIR / "model.bin"
    kept = partial.stat().st_size if partial.exists() else 0
    _, outcome = engine_run(
        engine, TransferJob(ALIAS, "upload", str(src), str(dst), TransferOptions()), host
    )
    assert outcome.verified  # type: ignore[attr-defined]
    return outcome.bytes_sent, size - kept, kept  # type: ignore[attr-defined]


def resume_plain(config: Path, src: Path, dst: Path, size: int, bw: int) -> tuple[int, int, int]:
    """The same with `rsync -a`: what had arrived sits in a temp file that rsync drops."""
    argv = [
        "rsync",
        "-a",
        f"--bwlimit={bw}",
        "-e",
        f"ssh -F {config}",
        "--",
        f"{src}/",
        f"{ALIAS}:{dst}/",
    ]
    watcher = kill_at_half(dst, size)
    subprocess.run(argv, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    watcher.join()
    temps = list(dst.glob(".model.bin.*"))
    arrived = max((t.stat().st_size for t in temps), default=0)
    for t in temps:  # the remote receiver died without cleaning up; rsync would ignore it
        t.unlink()
    out = subprocess.run(
        ["rsync", "-a", "--stats", "-e", f"ssh -F {config}", "--", f"{src}/", f"{ALIAS}:{dst}/"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    stats = parse_stats(out)
    sent = (stats.total_bytes_sent or 0) + (stats.total_bytes_received or 0)
    return sent, size - arrived, arrived


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200, help="MB of mixed files (default 200)")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each, median reported")
    parser.add_argument("--small-jobs", type=int, default=50, help="small jobs in a row")
    args = parser.parse_args()
    if (
        not shutil.which("rsync")
        or not shutil.which("sshd")
        and not Path("/usr/sbin/sshd").exists()
    ):
        sys.exit("needs rsync and openssh-server")
    with tempfile.TemporaryDirectory(prefix="gpu-bench-") as tmp:
        work = Path(tmp)
        server, config = ssh_setup(work)
        runtime = RuntimePaths.for_data_dir(work / "data")
        try:
            host = Host(alias=ALIAS, hostname="127.0.0.1")
            runtime.make()
            engine = TransferEngine(app_ssh_argv(config, runtime), no_sftp)
            unshared = TransferEngine(["ssh", "-F", str(config), "-o", "BatchMode=yes"], no_sftp)
            unshared.choose(host)
            src = work / "src"
            total = make_tree(src, args.size)
            eng_t, plain_t, verify_t, unshared_t = [], [], [], []
            engine.choose(host)  # the version checks are once per host: not part of each run
            for i in range(args.repeat):
                d1, d2 = work / f"dst-engine-{i}", work / f"dst-plain-{i}"
                if i % 2:  # alternate the order: the page cache and the neighbours even out
                    plain_t.append(plain_rsync(config, src, str(d2)))
                t, _ = engine_run(
                    engine,
                    TransferJob(ALIAS, "upload", str(src), str(d1), TransferOptions(verify=False)),
                    host,
                )
                eng_t.append(t)
                if not i % 2:
                    plain_t.append(plain_rsync(config, src, str(d2)))
                d4 = work / f"dst-unshared-{i}"
                t, _ = engine_run(
                    unshared,
                    TransferJob(ALIAS, "upload", str(src), str(d4), TransferOptions(verify=False)),
                    host,
                )
                unshared_t.append(t)
                d3 = work / f"dst-verify-{i}"
                t, outcome = engine_run(
                    engine, TransferJob(ALIAS, "upload", str(src), str(d3)), host
                )
                assert outcome.verified  # type: ignore[attr-defined]
                verify_t.append(t)
                for d in (d1, d2, d3, d4):
                    shutil.rmtree(d)
            small = small_jobs(
                work,
                {"engine": engine, "engine, no shared connection": unshared},
                config,
                host,
                args.small_jobs,
            )
            one = work / "one"
            one.mkdir()
            size = total // 2
            (one / "model.bin").write_bytes(os.urandom(size))
            bw = max(size // 1024 // 4, 1000)  # about 4 s for the whole file
            eng_sent, eng_rem, eng_kept = resume_engine(
                engine, host, one, work / "r-engine", size, bw
            )
            pl_sent, pl_rem, pl_kept = resume_plain(config, one, work / "r-plain", size, bw)
        finally:
            close_control_masters(runtime.control_dir)
            shutil.rmtree(runtime.root, ignore_errors=True)
            server.stop()
    e, p, v, u = (statistics.median(x) for x in (eng_t, plain_t, verify_t, unshared_t))
    be, bp, bv, bu = (min(x) for x in (eng_t, plain_t, verify_t, unshared_t))
    mb = total / 1e6
    print(
        f"\ntransfer overhead: {mb:.0f} MB of mixed files over ssh to 127.0.0.1, "
        f"{args.repeat} runs each (median, and best of the runs)\n"
    )
    print(
        f"| {'run':<34} | {'median s':>8} | {'MB/s':>6} | {'ratio':>5} | {'best s':>6} | "
        f"{'ratio':>5} |"
    )
    print(f"|{'-' * 36}|{'-' * 10}|{'-' * 8}|{'-' * 7}|{'-' * 8}|{'-' * 7}|")
    for name, med, best in (
        ("plain rsync -a", p, bp),
        ("engine (progress, partial dir)", e, be),
        ("engine + checksum verification", v, bv),
        ("engine, no shared connection", u, bu),
    ):
        print(
            f"| {name:<34} | {med:8.2f} | {mb / med:6.1f} | {med / p:5.2f} | {best:6.2f} | "
            f"{best / bp:5.2f} |"
        )
    n = args.small_jobs
    small_p = small["plain rsync -a"]
    print(f"\n{n} small jobs in a row (3 files, 30 KB each)\n")
    print(f"| {'run':<44} | {'total s':>8} | {'per job s':>9} | {'ratio':>5} |")
    print(f"|{'-' * 46}|{'-' * 10}|{'-' * 11}|{'-' * 7}|")
    for name, total_s in small.items():
        print(f"| {name:<44} | {total_s:8.2f} | {total_s / n:9.3f} | {total_s / small_p:5.2f} |")
    print(
        f"\nresume after SIGKILL at ~50 % of one {size / 1e6:.0f} MB file (killed at "
        f"{pl_kept / size:.0%} plain, {eng_kept / size:.0%} engine); load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs\n"
    )
    print(f"| {'run':<38} | {'remaining MB':>12} | {'sent MB':>8} | {'ratio':>6} |")
    print(f"|{'-' * 40}|{'-' * 14}|{'-' * 10}|{'-' * 8}|")
    print(
        f"| {'plain rsync -a (naive)':<38} | {pl_rem / 1e6:12.1f} | {pl_sent / 1e6:8.1f} | "
        f"{pl_sent / pl_rem:6.2f} |"
    )
    print(
        f"| {'engine (--partial-dir)':<38} | {eng_rem / 1e6:12.1f} | {eng_sent / 1e6:8.1f} | "
        f"{eng_sent / eng_rem:6.2f} |"
    )
    print(
        f"\ntargets: engine/plain wall time <= 1.05 -> {e / p:.2f}; "
        f"{n} small jobs engine/plain -> {small['engine'] / small_p:.2f}; "
        f"resume ratio <= 1.10 -> {eng_sent / eng_rem:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
