"""Helpers for the transfer tests: trees with awkward names, hashes of both sides, the app's own
queue as shipped (`ShippedTransfers`, the `shipped_transfers` and `ship` fixtures in conftest.py)
and a hand-made queue (`make_queue`) for tests that need what the shipped wiring cannot give."""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path
from typing import Any

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


# --- the app's own queue and host, wired as the shipped app wires them ----------------------

SHIPPED_ALIAS = "gpu-test"


class ShippedTransfers:
    """The app's transfer queue (`Services.transfers`) and one host on a test server, set up as a
    user has them after the wizard: the platform's key made by the app's vault and kept in the
    keyring, its public line installed on the server, the server's host key trusted through
    `sessions.trust_host_key`, the managed ssh config written (Include + managed file) and the
    app started (`start()`, then `start_background()`: its own ssh-agent holds the key). rsync
    and ssh run as `ssh -F <managed config>`; SFTP and the picker use `services.sessions`.

    `server` is the harness sshd or a HostileSftpHost (anything with port, user, authorize)."""

    def __init__(
        self, app_paths: Any, server: Any, alias: str = SHIPPED_ALIAS, passphrase: str | None = None
    ) -> None:
        self.app_paths = app_paths
        self.server = server
        self.alias = alias
        self.platform = f"transfers-{uuid.uuid4().hex[:8]}"  # the keyring outlives a test
        self.services: Any = None  # gpu_companion.services.Services while the app runs
        try:
            self._setup(passphrase)
        except BaseException:
            self.close()
            raise

    def _setup(self, passphrase: str | None) -> None:
        from gpu_companion.core.hosts.registry import Host, Platform
        from gpu_companion.core.ssh.connection import ConnectionProblem
        from gpu_companion.services import build_services

        services = self.services = build_services(self.app_paths)
        p = services.registry.save_platform(Platform(self.platform))
        host = services.registry.save_host(
            Host(self.alias, "127.0.0.1", self.server.port, self.server.user, platform_id=p.id)
        )
        stored = services.vault.generate(self.platform, passphrase=passphrase)
        self.server.authorize(stored.public_line)  # pasted into the platform's console
        if passphrase:
            services.key_passphrases[self.platform] = passphrase  # typed in Test connection
        try:
            services.sessions.connect(host).close()
        except ConnectionProblem as first:  # an unknown host key: the fingerprint dialog
            assert first.kind == "host_key_unknown", first
            services.sessions.trust_host_key(host, first.key)  # the dialog's "Trust"
        else:
            raise AssertionError("the first contact should have asked to trust the host key")
        services.sessions.connect(host).close()
        if passphrase:
            services.key_passphrases.pop(self.platform)  # a new session: not typed yet
        services.ssh_config.write(services.managed_ssh.entries())  # ssh-config --write
        assert services.ssh_config.is_included()  # ~/.ssh/config includes the managed file
        self._start()

    def _start(self) -> None:
        services = self.services
        services.start()  # as run_gui: the app's own ssh-agent
        assert services.start_background() == []  # keys into the agent, the managed config
        assert services.ssh_sync.flush(30)

    @property
    def queue(self) -> TransferQueue:
        """`Services.transfers`, built on first use (its engine takes the process's environment
        then, as the app's does at start)."""
        return self.services.transfers

    @property
    def host(self) -> Any:  # gpu_companion.core.hosts.registry.Host
        return self.services.registry.host(self.alias)

    @property
    def client_factory(self) -> Any:
        """What the app's SFTP engine and remote picker connect with."""
        return self.services.sessions.connect

    def queue_on_path(self, path: str) -> TransferQueue:
        """The app's queue when the app was started with PATH=`path` (a computer without rsync,
        an rsync wrapper first): the engine keeps the environment it was built with."""
        assert "transfers" not in self.services.__dict__, "the queue is already built"
        old = os.environ.get("PATH", os.defpath)
        os.environ["PATH"] = path
        try:
            return self.services.transfers
        finally:
            os.environ["PATH"] = old

    def quit(self) -> None:
        """The user quits the app: running transfers pause, the agent and shared connections
        end."""
        if self.services is not None:
            self.services.close()
            self.services = None

    def restart(self) -> TransferQueue:
        """The app quits and starts again (its queue pauses what a dead process left)."""
        from gpu_companion.services import build_services

        self.quit()
        self.services = build_services(self.app_paths)
        self._start()
        return self.queue

    def close(self) -> None:
        from gpu_companion.services import build_services

        self.quit()
        services = build_services(self.app_paths)
        try:
            if services.vault.key(self.platform) is not None:
                services.vault.delete(self.platform)
        finally:
            services.close()


def run_shipped_app() -> None:
    """`python -m tests.integration.transfer_helpers`: the app as shipped (Services from the
    environment's paths, started as run_gui starts it) resuming every job and running its queue;
    prints "running" first. The restart test kills it."""
    from gpu_companion.services import build_services

    services = build_services()
    services.start()
    problems = services.start_background()
    assert problems == [], problems
    queue = services.transfers
    for job in queue.jobs():  # the user presses Resume
        assert job.id is not None
        queue.resume(job.id)
    print("running", flush=True)
    queue.run_until_idle()
    services.close()


if __name__ == "__main__":
    run_shipped_app()
