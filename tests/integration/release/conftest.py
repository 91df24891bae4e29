"""A rented box in miniature: the harness sshd in its own PID namespace (so its process list holds
only its own sessions, like a container rental), an ssh-agent holding the key (never on disk),
a generated ssh config for rsync, and a paramiko factory with RejectPolicy for the checks."""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import paramiko
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.conftest import missing_component
from tests.harness.sshd import ComponentMissing, SshServer
from tests.harness.standin import NvidiaSmiStandIn
from tests.harness.util import wait_for

ALIAS = "box"
UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc"]


@dataclass
class Box:
    server: SshServer
    standin: NvidiaSmiStandIn
    remote: Path  # the work dir on the "host" (same filesystem, seen through ssh)
    local: Path  # the local backup root
    ssh_config: Path
    known_hosts: Path
    pkey: paramiko.PKey
    tmux_socket: Path
    clients: list[paramiko.SSHClient] = field(default_factory=list)
    queue: Any = None  # the transfer queue of the checks (box_queue)

    @property
    def ssh_argv(self) -> list[str]:
        return ["ssh", "-F", str(self.ssh_config)]

    def connect(self, host: object = None) -> paramiko.SSHClient:
        client = paramiko.SSHClient()
        client.load_host_keys(str(self.known_hosts))
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        client.connect(
            "127.0.0.1",
            port=self.server.port,
            username=self.server.user,
            pkey=self.pkey,
            allow_agent=False,
            look_for_keys=False,
            timeout=10,
        )
        self.clients.append(client)
        return client

    def sh(self, command: str) -> str:
        """Run a command on the host (inside its PID namespace), as a user's shell would."""
        client = self.connect()
        try:
            _i, out, err = client.exec_command(command, timeout=20)
            text = out.read().decode()
            assert out.channel.recv_exit_status() == 0, err.read().decode()
            return text
        finally:
            client.close()


def _start_agent(root: Path, pem: str) -> tuple[subprocess.Popen[bytes], Path]:
    sock = root / "agent.sock"
    proc = subprocess.Popen(
        ["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )

    def key_added() -> bool:  # the socket file exists a moment before the agent listens on it
        done = subprocess.run(
            ["ssh-add", "-q", "-"],
            input=pem.encode(),
            env={**os.environ, "SSH_AUTH_SOCK": str(sock)},
            capture_output=True,
            check=False,
        )
        return done.returncode == 0

    wait_for(key_added, 10, "ssh-agent to take the key")
    return proc, sock


@pytest.fixture
def box(tmp_path: Path, standin: NvidiaSmiStandIn) -> Iterator[Box]:
    for tool in ("unshare", "rsync", "tmux", "ssh-agent", "ssh-add", "zstd"):
        if not shutil.which(tool):
            missing_component(f"{tool} is not installed")
    probe = subprocess.run([*UNSHARE, "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        missing_component(f"cannot make a PID namespace: {probe.stderr.decode().strip()}")
    root = tmp_path / "box"
    root.mkdir()
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.OpenSSH,
        serialization.NoEncryption(),
    ).decode()
    pkey = paramiko.Ed25519Key.from_private_key(io.StringIO(pem))
    server = SshServer(
        root / "sshd",
        path_prefix=[standin.bin_dir],
        env={**standin.env, "TMUX_TMPDIR": str(root / "tmux-default")},
        launcher=UNSHARE,
    )
    (root / "tmux-default").mkdir()
    try:
        server.start()
    except ComponentMissing as exc:
        missing_component(str(exc))
    server.authorize(f"{pkey.get_name()} {pkey.get_base64()} release-tests")
    agent, sock = _start_agent(root, pem)
    known_hosts = root / "known_hosts"
    known_hosts.write_text(server.known_hosts_line())
    config = root / "ssh_config"
    config.write_text(
        f"Host {ALIAS}\n  HostName 127.0.0.1\n  Port {server.port}\n  User {server.user}\n"
        f"  UserKnownHostsFile {known_hosts}\n  StrictHostKeyChecking yes\n  BatchMode yes\n"
        f"  IdentityAgent {sock}\n"
    )
    remote = root / "remote"
    remote.mkdir()
    b = Box(server, standin, remote, root / "local", config, known_hosts, pkey, root / "tmux.sock")
    try:
        yield b
    finally:
        if b.queue is not None:
            b.queue.shutdown()
            b.queue.store.close()
        for c in b.clients:
            c.close()
        server.stop()  # the namespace's PID 1 goes, and every process in it with it
        agent.send_signal(signal.SIGTERM)
        agent.wait(5)


def utc(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, timezone.utc)


def box_host(box: Box):  # type: ignore[no-untyped-def]
    from gpu_companion.core.hosts.registry import Host

    return Host(alias=ALIAS, hostname="127.0.0.1", port=box.server.port, user=box.server.user)


def passing_setup(box: Box, **overrides: object):  # type: ignore[no-untyped-def]
    """Files on the host and a config under which every item can pass once synced and packed."""
    from gpu_companion.core.release import ChecklistConfig, CustomCommand

    r = box.remote
    (r / "ckpt").mkdir(exist_ok=True)
    (r / "ckpt" / "step-100.pt").write_bytes(os.urandom(40_000))
    (r / "out" / "logs").mkdir(parents=True, exist_ok=True)
    (r / "out" / "weights.safetensors").write_bytes(os.urandom(60_000))
    (r / "out" / "logs" / "train.log").write_text("step 100 loss 1.23\n" * 50)
    (box.remote.parent / "results-ok").write_text("ok\n")  # outside every scanned dir
    cfg = ChecklistConfig(
        project="llama-lora",
        precision="bf16",
        synced_dirs=(str(r / "ckpt"),),
        archive_paths=(str(r / "out"),),
        scan_roots=(str(r),),
        size_threshold_mib=1,
        manual=("Data disk snapshot taken",),
        custom=(CustomCommand("Results marker present", f"test -f {r.parent}/results-ok"),),
        ignored_processes=(),
    )
    return cfg.__class__(**{**cfg.__dict__, **overrides}).validated()


def box_queue(box: Box):  # type: ignore[no-untyped-def]
    """The transfer queue the app runs, over the box's ssh config and a store of its own."""
    from gpu_companion.core.storage.store import Store
    from gpu_companion.core.transfers.engine import TransferEngine
    from gpu_companion.core.transfers.queue import TransferQueue

    if box.queue is None:
        store = Store(box.local.parent / "transfers.db")
        engine = TransferEngine(box.ssh_argv, box.connect, env=dict(os.environ))
        host = box_host(box)
        box.queue = TransferQueue(store, engine, lambda a: host if a == ALIAS else None,
                                  save_every_s=0.2)  # fmt: skip
    return box.queue


def make_ctx(box: Box, config, started: datetime | None = None):  # type: ignore[no-untyped-def]
    from gpu_companion.core.release import ReleaseContext
    from gpu_companion.core.release.queued_sync import QueuedCheckpointSync

    host = box_host(box)
    return ReleaseContext(
        host=host,
        connect=box.connect,
        local_dir=box.local / ALIAS,
        config=config,
        sync=QueuedCheckpointSync(box_queue(box), box.local),
        rental_started_at=started,
    )
