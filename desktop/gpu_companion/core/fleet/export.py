"""The fleet handed to the engines users grow into: an Ansible inventory, a Ray cluster launcher
config (on-premise provider) and a SkyPilot SSH node pool file.

No private key is ever written: every export reaches the hosts through the app's managed ssh
config (its pinned host keys, its agent), and says so in a header comment.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.hosts.registry import HostRegistry

FORMATS = ("ansible", "ray", "skypilot")
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
    (`-F` the managed config) applies the app's pinned known_hosts, key and agent; the address
    itself is in `gpu_companion_address`."""
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
                f"          ansible_port: {h.port}\n",
                f"          ansible_user: {_scalar(h.user)}\n",
                f"          gpu_companion_address: {_scalar(h.hostname)}\n",
                f"          gpu_count: {h.gpu_count}\n",
            ]
    return "".join(out)


def ray_cluster(hosts: Sequence[FleetHost], agent_socket: str = "") -> str:
    """Ray's cluster launcher config for the on-premise (`local`) provider: the first host is
    the head. Ray's ssh reaches the hosts by address and user, with keys from the agent."""
    _require(hosts)
    users = {h.user for h in hosts}
    if len(users) > 1:
        raise UserError(
            "Ray's launcher takes one ssh user for the whole cluster; these hosts use "
            + ", ".join(sorted(users))
            + ".",
            hint="Export the hosts that share a user, or change the user on the Hosts page.",
        )
    head, workers = hosts[0], hosts[1:]
    notes = [
        "Ray cluster launcher config exported by GPU Companion (provider: local).",
        "No private key is written: Ray's ssh takes the key from the agent, so run",
        f"  export SSH_AUTH_SOCK={agent_socket or '<the app agent socket>'}",
        "before `ray up THIS_FILE` while GPU Companion runs.",
    ]
    mapped = [h for h in hosts if h.port != 22]
    if mapped:
        notes += [
            "WARNING: "
            + ", ".join(f"{h.alias} (ssh on port {h.port})" for h in mapped)
            + " sit behind mapped ports.",
            "Ray also needs these ports open between the nodes: "
            + ", ".join(map(str, RAY_PORTS))
            + "; a platform that maps",
            "only the ssh port blocks them. Ray's launcher also expects ssh on port 22.",
        ]
    out = [
        _header(notes),
        f"cluster_name: {_scalar('gpu-companion')}\n",
        "provider:\n",
        "  type: local\n",
        f"  head_ip: {_scalar(head.hostname)}\n",
        "  worker_ips: [" + ", ".join(_scalar(h.hostname) for h in workers) + "]\n",
        "auth:\n",
        f"  ssh_user: {_scalar(head.user)}\n",
        f"min_workers: {len(workers)}\n",
        f"max_workers: {len(workers)}\n",
        "available_node_types:\n",
        "  ray.head.default:\n",
        "    resources: {" + f'"GPU": {head.gpu_count}' + "}\n",
        "    node_config: {}\n",
        "  ray.worker.default:\n",
        f"    min_workers: {len(workers)}\n",
        f"    max_workers: {len(workers)}\n",
        "    resources: {}\n",
        "    node_config: {}\n",
        f"head_node_type: {_scalar('ray.head.default')}\n",
    ]
    return "".join(out)


def skypilot_pools(hosts: Sequence[FleetHost]) -> str:
    """`~/.sky/ssh_node_pools.yaml`: one pool per platform, hosts named by their alias, which
    `ssh ALIAS` resolves through the user's ~/.ssh/config (the app's Include line)."""
    _require(hosts)
    pools: dict[str, list[FleetHost]] = {}
    for h in hosts:
        pools.setdefault(_group_name(h.platform).removeprefix("platform_"), []).append(h)
    out = [
        _header(
            [
                "SkyPilot SSH node pools exported by GPU Companion.",
                "Save as ~/.sky/ssh_node_pools.yaml, then: sky ssh up",
                "Each host is an alias of the app's managed ssh config: `ssh ALIAS` must work, so",
                "write the ssh config first (gpu-companion ssh-config --write) and keep the app",
                "running (its agent holds the keys). No private key is written here.",
            ]
        ),  # fmt: skip
    ]
    for pool in sorted(pools):
        out.append(f"{_scalar(pool)}:\n  hosts:\n")
        out += [f"    - {_scalar(h.alias)}\n" for h in pools[pool]]
    return "".join(out)


def fleet_hosts(registry: HostRegistry, aliases: Sequence[str] = ()) -> list[FleetHost]:
    """The active rented hosts (all, or the named ones in that order); unknown names refused."""
    platforms = {p.id: p.name for p in registry.platforms()}
    active = {h.alias: h for h in registry.hosts(include_released=False)}
    unknown = [a for a in aliases if a not in active]
    if unknown:
        raise UserError(f"No active host named {', '.join(unknown)}.")
    chosen = [active[a] for a in aliases] if aliases else list(active.values())
    return [
        FleetHost(
            h.alias, h.hostname, h.port, h.user, platforms.get(h.platform_id, ""), h.gpu_count
        )  # fmt: skip
        for h in chosen
    ]


def _require(hosts: Sequence[FleetHost]) -> None:
    if not hosts:
        raise UserError("No hosts to export.", hint="Add hosts on the Hosts page first.")


def render(fmt: str, hosts: Sequence[FleetHost], ssh_config: Path, agent_socket: str = "") -> str:
    if fmt == "ansible":
        return ansible_inventory(hosts, ssh_config)
    if fmt == "ray":
        return ray_cluster(hosts, agent_socket)
    if fmt == "skypilot":
        return skypilot_pools(hosts)
    raise UserError(f"Unknown format {fmt!r}: choose one of {', '.join(FORMATS)}.")
