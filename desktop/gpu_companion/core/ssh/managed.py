"""What goes into the generated ssh config: the registry's active hosts, their platform's public
key file and the per-host options (jump host, forwarded ports) the user asked for."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import HostRegistry
from gpu_companion.core.ssh.agent import RuntimePaths, control_options
from gpu_companion.core.ssh.config_writer import (
    FORWARD_PORTS,
    HostEntry,
    SshConfigWriter,
    WriteResult,
    validate_proxy_jump,
)
from gpu_companion.core.ssh.vault import KeyVault
from gpu_companion.core.storage.store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SshOptions:
    proxy_jump: str = ""
    forwards: tuple[int, ...] = ()


def get_options(store: Store, host_id: int) -> SshOptions:
    row = store.db.execute(
        "SELECT proxy_jump, forwards FROM host_ssh_options WHERE host_id = ?", [host_id]
    ).fetchone()
    if not row:
        return SshOptions()
    ports = tuple(int(p) for p in (row[1] or "").split(",") if p.strip().isdigit())
    return SshOptions(row[0] or "", ports)


def set_options(store: Store, host_id: int, options: SshOptions) -> SshOptions:
    """Validate, then store; a bad value raises ValidationError and nothing changes."""
    jump = validate_proxy_jump(options.proxy_jump)
    bad = [p for p in options.forwards if p not in FORWARD_PORTS]
    if bad:
        raise ValidationError(
            "forwards",
            _("Forwarding is offered for {ports}.").format(ports=sorted(FORWARD_PORTS)),
        )
    ports = tuple(sorted(set(options.forwards)))
    with store.transaction() as db:
        db.table("host_ssh_options").upsert(
            {"host_id": host_id, "proxy_jump": jump, "forwards": ",".join(map(str, ports))},
            pk="host_id",
        )
    return SshOptions(jump, ports)


def entries_from_registry(
    registry: HostRegistry, vault: KeyVault, runtime: RuntimePaths | None = None
) -> list[HostEntry]:
    """One entry per active rented host (the local machine needs none). With `runtime` (the
    app's agent), the key is named by its stem in the runtime dir and the agent socket."""
    keys = {
        k.platform: runtime.identity_stem(k.public_path) if runtime else k.public_path
        for k in vault.keys()
    }
    entries = []
    for host in registry.hosts(include_released=False):
        platform = vault.platform_of(host)
        opts = get_options(registry.store, host.id) if host.id is not None else SshOptions()
        entries.append(
            HostEntry(
                alias=host.alias,
                hostname=host.hostname,
                port=host.port,
                user=host.user,
                identity_file=keys.get(platform) if platform else None,
                proxy_jump=opts.proxy_jump,
                forwards=opts.forwards,
                identity_agent=runtime.socket if runtime else None,
            )
        )
    return entries


def app_ssh_argv(config: Path, runtime: RuntimePaths | None = None) -> list[str]:
    """`ssh -F CONFIG -o BatchMode=yes [shared connection]`: what rsync's -e and the app run."""
    argv = ["ssh", "-F", str(config), "-o", "BatchMode=yes"]
    return argv + control_options(runtime.control_dir) if runtime else argv


class ManagedConfig:
    """Keeps the managed ssh config in step with the active hosts and their keys. The app's own
    `ssh -F` and rsync always read it; ~/.ssh/config is touched only once the user set it up."""

    def __init__(
        self,
        writer: SshConfigWriter,
        registry: HostRegistry,
        vault: KeyVault,
        runtime: RuntimePaths | None = None,
    ) -> None:
        self.writer = writer
        self.registry = registry
        self.vault = vault
        self.runtime = runtime

    @property
    def ssh_argv(self) -> list[str]:
        """The app's own ssh: never a prompt (trust is given in the app's fingerprint dialog),
        and one shared connection per host when the runtime dir is known."""
        return app_ssh_argv(self.writer.config_path, self.runtime)

    @property
    def ssh_argv_unshared(self) -> list[str]:
        """The same without the shared connection: for GNU parallel, whose cancel relies on each
        job's ssh connection ending with it (a multiplexed session outlives its client)."""
        return app_ssh_argv(self.writer.config_path)

    def entries(self) -> list[HostEntry]:
        return entries_from_registry(self.registry, self.vault, self.runtime)

    def sync(self) -> WriteResult:
        entries = self.entries()
        if self.writer.is_included():  # also moves an Include that is no longer first back up
            return self.writer.write(entries)
        return self.writer.write_managed(entries)

    def sync_quietly(self) -> str | None:
        """sync() for change hooks: a failure is logged and returned as text, never raised."""
        try:
            self.sync()
        except UserError as exc:  # e.g. a read-only ~/.ssh/config: said, not a bug
            log.warning("could not refresh the ssh config: %s", exc)
            return str(exc)
        except Exception as exc:
            log.warning("could not refresh %s", self.writer.config_path, exc_info=True)
            return f"{type(exc).__name__}: {exc}"
        return None

    def remove_host(self, alias: str) -> None:
        """A released host's block goes (it is no longer active, so sync leaves it out)."""
        self.sync()
