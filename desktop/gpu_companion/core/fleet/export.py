"""The fleet handed to the engines users grow into: an Ansible inventory, a Ray cluster config
(on-premise provider) with the script that starts it, and SkyPilot SSH node pools.

No private key is ever written. Ansible and the Ray start script reach the hosts through the
app's managed ssh config (its pinned host keys, its agent); Ray's launcher and SkyPilot run ssh
with host-key checking off, and their files say so instead of claiming a verification they skip.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import HostRegistry

if TYPE_CHECKING:
    from gpu_companion.core.ssh.vault import KeyVault

FORMATS = ("ansible", "ray", "ray-start", "skypilot")
# What Ray's head and workers listen on besides ssh (GCS, dashboard, client server, object
# manager, node manager, metrics): a platform that maps only one port per instance blocks them.
RAY_PORTS = (6379, 8265, 10001, 8076, 8077, 8080)


@dataclass(frozen=True)
class FleetHost:
    alias: str
    hostname: str
    port: int
    user: str
    platform: str  # "" when the host belongs to no platform
    gpu_count: int = 0
    public_key: str = ""  # the platform's public key file: ssh -i FILE.pub signs with the agent


def _scalar(value: object) -> str:
    """A YAML scalar: JSON's quoting is valid YAML, so names can never break the structure."""
    if isinstance(value, bool | int):
        return json.dumps(value)
    return json.dumps(str(value), ensure_ascii=False)


def _group_name(platform: str) -> str:
    name = "".join(c if c.isalnum() else "_" for c in platform.lower()).strip("_")
    return f"platform_{name}" if name else "no_platform"


def _header(lines: Iterable[str]) -> str:
    return "".join(f"# {line}\n" for line in lines)


def ansible_inventory(hosts: Sequence[FleetHost], ssh_config: Path) -> str:
    """YAML inventory, one group per platform. `ansible_host` is the managed alias, so ssh
    (`-F` the managed config) applies the app's pinned known_hosts, key, agent, port and user;
    the address itself is in `gpu_companion_address`. No `ansible_port`/`ansible_user`: Ansible
    passes them as `-o Port=`/`-o User=`, which override the managed config and go stale when
    a host's port changes."""
    _require(hosts)
    groups: dict[str, list[FleetHost]] = {}
    for h in hosts:
        groups.setdefault(_group_name(h.platform), []).append(h)
    args = shlex.join(["-F", str(ssh_config)])
    out = [
        _header(
            [
                "Ansible inventory exported by GPU Companion.",
                "Hosts are reached through the app's managed ssh config: its pinned host keys and",
                "its agent, so GPU Companion must be running. No private key is written here.",
                "Try: ansible all -i THIS_FILE -m ping",
            ]
        ),  # fmt: skip
        "all:\n",
        "  vars:\n",
        f"    ansible_ssh_common_args: {_scalar(args)}\n",
        "  children:\n",
    ]
    for group in sorted(groups):
        out.append(f"    {group}:\n      hosts:\n")
        for h in groups[group]:
            out += [
                f"        {_scalar(h.alias)}:\n",
                f"          ansible_host: {_scalar(h.alias)}\n",
                f"          gpu_companion_address: {_scalar(h.hostname)}\n",
                f"          gpu_count: {h.gpu_count}\n",
            ]
    return "".join(out)


def _one_user(hosts: Sequence[FleetHost], engine: str) -> str:
    users = {h.user for h in hosts}
    if len(users) > 1:
        raise UserError(
            _("{engine} takes one ssh user for the whole cluster; these hosts use {users}.").format(
                engine=engine, users=", ".join(sorted(users))
            ),
            hint=_("Export the hosts that share a user, or change the user on the Hosts page."),
        )
    return hosts[0].user


def _port_notes(hosts: Sequence[FleetHost]) -> list[str]:
    mapped = [h for h in hosts if h.port != 22]
    if not mapped:
        return []
    return [
        "WARNING: "
        + ", ".join(f"{h.alias} (ssh on port {h.port})" for h in mapped)
        + ": mapped ports.",
        "Ray also needs these ports open between the nodes: "
        + ", ".join(map(str, RAY_PORTS))
        + "; a platform that maps",
        "only the ssh port blocks them.",
    ]


def ray_head_command(head: FleetHost) -> str:
    """Ray finds the node's own address itself (a rented container's public address is often
    not on any of its interfaces)."""
    return f"ray start --head --port={RAY_PORTS[0]}"


def ray_worker_command(head: FleetHost) -> str:
    return f"ray start --address={shlex.quote(f'{head.hostname}:{RAY_PORTS[0]}')}"


def ray_cluster(hosts: Sequence[FleetHost], agent_socket: str = "") -> str:
    """Ray's cluster config for the on-premise (`local`) provider, as Ray's own config code
    accepts it (`prepare_local` refuses `available_node_types`; it makes the one node type
    itself): the head first, every node by the address the others reach it at.

    Not for `ray up` from here: Ray's ssh passes StrictHostKeyChecking=no and
    UserKnownHostsFile=/dev/null (no host key is checked), offers only `-i ssh_private_key`
    (IdentitiesOnly=yes) and copies that key to the head so the head can start the workers.
    GPU Companion writes no key, so the cluster is started by `ray_start_script` instead."""
    _require(hosts)
    user = _one_user(hosts, "Ray's launcher")
    head, workers = hosts[0], hosts[1:]
    notes = [
        "Ray cluster config exported by GPU Companion (provider: local). No private key is",
        "written. Start the cluster with the script from",
        "  gpu-companion fleet export --format ray-start -o start-ray.sh && sh start-ray.sh",
        "which runs the start commands below on each host over `ssh ALIAS` (the app's pinned",
        "host keys and agent). `ray up THIS_FILE` is not the way: Ray's ssh turns host-key",
        "checking off (StrictHostKeyChecking=no, UserKnownHostsFile=/dev/null), so no host key",
        "would be verified, and its head needs a private key to start the workers, which",
        "GPU Companion never writes.",
        *_port_notes(hosts),
    ]
    out = [
        _header(notes),
        f"cluster_name: {_scalar('gpu-companion')}\n",
        f"max_workers: {len(workers)}\n",
        "provider:\n",
        "  type: local\n",
        f"  head_ip: {_scalar(head.hostname)}\n",
        "  worker_ips: [" + ", ".join(_scalar(h.hostname) for h in workers) + "]\n",
        "auth:\n",
        f"  ssh_user: {_scalar(user)}\n",
        "head_start_ray_commands:\n",
        "  - ray stop\n",
        f"  - {_scalar(ray_head_command(head))}\n",
        "worker_start_ray_commands:\n",
        "  - ray stop\n",
        f"  - {_scalar('ray start --address=$RAY_HEAD_IP:' + str(RAY_PORTS[0]))}\n",
    ]
    return "".join(out)


def ray_start_script(hosts: Sequence[FleetHost], ssh_config: Path) -> str:
    """A POSIX sh script that starts Ray on each host over `ssh -F <managed config> ALIAS`: the
    app's pinned host keys (a changed key stops it), its agent, each host's own port and user.
    The head first, then every worker joins it at the head's address."""
    _require(hosts)
    head, workers = hosts[0], hosts[1:]
    ssh = shlex.join(["ssh", "-F", str(ssh_config)])
    notes = [
        "Starts a Ray cluster on the hosts over the app's managed ssh config: host keys are",
        "checked against the ones GPU Companion pinned and the keys come from its agent, so",
        "GPU Companion must be running. No private key is written, here or on the hosts.",
        "Needs Ray on each host (pip install 'ray[default]'). Run: sh THIS_FILE",
        *_port_notes(hosts),
    ]
    out = ["#!/bin/sh\n", _header(notes), "set -eu\n"]
    for host, command in [(head, ray_head_command(head))] + [
        (w, ray_worker_command(head)) for w in workers
    ]:
        out.append(f"{ssh} -- {shlex.quote(host.alias)} {shlex.quote(command)}\n")
    done = f"Ray is up: head {head.alias}, {len(workers)} worker(s)"
    out.append(f"echo {shlex.quote(done)}\n")
    return "".join(out)


def skypilot_pools(hosts: Sequence[FleetHost]) -> str:
    """`~/.sky/ssh_node_pools.yaml`: one pool per host, named by its alias. SkyPilot makes each
    pool one k3s cluster whose machines must reach each other (port 6443), which two unrelated
    rentals of one platform do not. Hosts are given by address with `user` and
    `identity_file` (the public key: ssh signs with the app's agent), what `sky ssh up -f`
    and the API server's pool check accept; an ssh-config alias is refused there."""
    _require(hosts)
    out = [
        _header(
            [
                "SkyPilot SSH node pools exported by GPU Companion: one pool per host (a pool",
                "is one k3s cluster, its machines must reach each other on port 6443).",
                "Save as ~/.sky/ssh_node_pools.yaml, then: sky ssh up",
                "No private key is written: identity_file is the platform's PUBLIC key, and ssh",
                "signs with it through the app's agent, so keep GPU Companion running and start",
                "SkyPilot's API server on this computer with SSH_AUTH_SOCK set to the app agent.",
                "A remote API server (sky ssh up -f) receives only that public key: it cannot",
                "log in with it. SkyPilot's ssh turns host-key checking off",
                "(StrictHostKeyChecking=no): the host keys GPU Companion pinned are not checked.",
            ]
            + [
                f"WARNING: {h.alias} listens for ssh on port {h.port}; SkyPilot reaches an "
                "address on port 22."
                for h in hosts
                if h.port != 22
            ]
        ),  # fmt: skip
    ]
    names: set[str] = set()
    for h in hosts:
        name = _pool_name(h.alias, names)
        out.append(f"{_scalar(name)}:\n")
        out.append(f"  user: {_scalar(h.user)}\n")
        if h.public_key:
            out.append(f"  identity_file: {_scalar(h.public_key)}\n")
        out.append(f"  hosts:\n    - ip: {_scalar(h.hostname)}\n")
    return "".join(out)


def _pool_name(alias: str, taken: set[str]) -> str:
    base = "".join(c if c.isalnum() or c in "-_" else "-" for c in alias.lower()).strip("-_")
    name, n = base or "host", 1
    while name in taken:
        n += 1
        name = f"{base or 'host'}-{n}"
    taken.add(name)
    return name


def fleet_hosts(
    registry: HostRegistry,
    aliases: Sequence[str] = (),
    public_key: Callable[[str], Path | None] | None = None,
) -> list[FleetHost]:
    """The active rented hosts (all, or the named ones in that order); unknown names refused.
    `public_key(platform name)`: the platform's public key file, where one exists."""
    platforms = {p.id: p.name for p in registry.platforms()}
    active = {h.alias: h for h in registry.hosts(include_released=False)}
    unknown = [a for a in aliases if a not in active]
    if unknown:
        raise UserError(_("No active host named {names}.").format(names=", ".join(unknown)))
    chosen = [active[a] for a in aliases] if aliases else list(active.values())
    out = []
    for h in chosen:
        platform = platforms.get(h.platform_id, "")
        key = public_key(platform) if public_key is not None and platform else None
        out.append(FleetHost(h.alias, h.hostname, h.port, h.user, platform, h.gpu_count,
                             str(key) if key is not None and key.is_file() else ""))  # fmt: skip
    return out


def public_keys_in(vault: KeyVault) -> Callable[[str], Path | None]:
    """`fleet_hosts`'s `public_key`: each platform's public key file from the app's vault."""

    def public_key(platform: str) -> Path | None:
        key = vault.key(platform)
        return key.public_path if key is not None else None

    return public_key


def write_private(path: Path, text: str) -> None:
    """Write an export as a new 0600 file of ours: made by mkstemp (O_EXCL, 0600) beside `path`,
    then renamed over it, so a link there is replaced (never followed) and an existing file's
    owner and mode are never kept."""
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        raise UserError(_("{path} is a folder: give a file name.").format(path=path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise UserError(
            _("Cannot write in {folder}: {problem}.").format(
                folder=path.parent, problem=exc.strerror or exc
            )
        ) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _require(hosts: Sequence[FleetHost]) -> None:
    if not hosts:
        raise UserError(_("No hosts to export."), hint=_("Add hosts on the Hosts page first."))


def render(fmt: str, hosts: Sequence[FleetHost], ssh_config: Path, agent_socket: str = "") -> str:
    if fmt == "ansible":
        return ansible_inventory(hosts, ssh_config)
    if fmt == "ray":
        return ray_cluster(hosts, agent_socket)
    if fmt == "ray-start":
        return ray_start_script(hosts, ssh_config)
    if fmt == "skypilot":
        return skypilot_pools(hosts)
    raise UserError(
        _("Unknown format {format}: choose one of {formats}.").format(
            format=repr(fmt), formats=", ".join(FORMATS)
        )
    )
