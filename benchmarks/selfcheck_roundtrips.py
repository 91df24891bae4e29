#!/usr/bin/env python3
"""Self-check: one probe script over one SSH command vs one command per fact (the naive way).

Runs both against a real local sshd (the test harness: the nvidia-smi stand-in and this venv's
python3 with the CPU build of torch first on PATH) and prints the measured times, the number of
round trips, and the time each would take on a rented host 150 ms away (measured + round trips x
RTT, a computed column). Usage: python benchmarks/selfcheck_roundtrips.py [--runs 3]
"""

from __future__ import annotations

import argparse
import io
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import paramiko  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402
from tests.harness.sshd import SshServer  # noqa: E402
from tests.harness.standin import NvidiaSmiStandIn  # noqa: E402

from gpu_companion.core.hosts.registry import Host  # noqa: E402
from gpu_companion.core.selfcheck.check import SelfCheckOptions, run_selfcheck  # noqa: E402

RTT_S = 0.150


def naive_commands(data_dir: str) -> list[str]:
    """What a careful person types one by one: every fact its own SSH command."""
    d = shlex.quote(data_dir)
    py = "python3 -c"
    return [
        "python3 --version",
        "python3 -m pip --version",
        "nvidia-smi",
        "nvidia-smi --query-gpu=index,uuid,name,memory.used,memory.total,driver_version "
        "--format=csv,noheader,nounits",
        "nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_gpu_memory "
        "--format=csv,noheader,nounits",
        f"{py} 'import torch; print(torch.__version__)'",
        f"{py} 'import torch; print(torch.version.cuda)'",
        f"{py} 'import torch; print(torch.cuda.is_available())'",
        f"df -B1 {d}",
        f"dd if=/dev/zero of={d}/.bench bs=1M count=2 conv=fsync status=none",
        f"dd if={d}/.bench of=/dev/null bs=1M status=none; rm -f {d}/.bench",
    ]


def run_naive(connect, host: Host, data_dir: str) -> int:  # type: ignore[no-untyped-def]
    client = connect(host)
    try:
        commands = naive_commands(data_dir)
        for command in commands:
            _, out, _ = client.exec_command(command, timeout=60)
            out.read()
            out.channel.recv_exit_status()
        return len(commands)
    finally:
        client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        standin = NvidiaSmiStandIn(root / "standin")
        standin.configure(mem_used=3)
        (root / "home").mkdir()
        server = SshServer(
            root / "sshd",
            path_prefix=[standin.bin_dir, Path(sys.executable).parent],
            env={**standin.env, "HOME": str(root / "home")},
        ).start()
        pem = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.OpenSSH,
            serialization.NoEncryption(),
        )
        key = paramiko.Ed25519Key.from_private_key(io.StringIO(pem.decode()))
        server.authorize(f"{key.get_name()} {key.get_base64()}")
        known = root / "known_hosts"
        known.write_text(server.known_hosts_line())

        def connect(host: Host) -> paramiko.SSHClient:
            client = paramiko.SSHClient()
            client.load_host_keys(str(known))
            client.set_missing_host_key_policy(paramiko.RejectPolicy())
            client.connect(
                host.hostname,
                port=host.port,
                username=host.user,
                pkey=key,
                allow_agent=False,
                look_for_keys=False,
            )
            return client

        host = Host("bench", "127.0.0.1", server.port, server.user)
        options = SelfCheckOptions(data_dir=tmp, disk_test_mb=2, min_free_gb=0.001)
        probe, naive = [], []
        try:
            for _ in range(args.runs):
                start = time.perf_counter()
                steps = list(run_selfcheck(host, connect, options))
                probe.append(time.perf_counter() - start)
                start = time.perf_counter()
                trips = run_naive(connect, host, tmp)
                naive.append(time.perf_counter() - start)
        finally:
            server.stop()
    p, n = statistics.median(probe), statistics.median(naive)
    # an SSH login is ~2 round trips, each command ~2 more (channel open + exec)
    probe_trips, naive_trips = 2 + 2, 2 + 2 * trips
    print(f"self-check over the harness sshd, median of {args.runs} runs, {len(steps)} steps")
    print(f"{'approach':<34}{'commands':>9}{'local s':>10}{'@150ms RTT s':>14}")
    print(f"{'one probe script (this app)':<34}{1:>9}{p:>10.2f}{p + probe_trips * RTT_S:>14.2f}")
    print(
        f"{'one command per fact (naive)':<34}{trips:>9}{n:>10.2f}{n + naive_trips * RTT_S:>14.2f}"
    )
    print(
        f"ratio naive / probe: {n / p:.1f}x local, "
        f"{(n + naive_trips * RTT_S) / (p + probe_trips * RTT_S):.1f}x at 150 ms RTT"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
