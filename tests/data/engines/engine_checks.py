"""Ray's and SkyPilot's own checks of the files the fleet export writes, copied from their
released wheels (ray 2.60.0, skypilot 0.14.1; Apache-2.0): see SOURCES.md beside this file."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

SCHEMA = Path(__file__).with_name("ray-2.60.0-ray-schema.json")

# --- ray/autoscaler/_private/local/config.py (2.60.0) ---------------------------------------
unsupported_field_message = "The field {} is not supported for on-premise clusters."
LOCAL_CLUSTER_NODE_TYPE = "local.cluster.node"


def ray_prepare_local(config: dict[str, Any]) -> dict[str, Any]:
    """`prepare_local` + `prepare_manual` (what `ray up` runs first for provider `local`)."""
    import copy

    config = copy.deepcopy(config)
    for field in "head_node", "worker_nodes", "available_node_types":
        if config.get(field):
            if field == "available_node_types" and LOCAL_CLUSTER_NODE_TYPE in config.get(
                field, {}
            ):
                return config
            raise ValueError(unsupported_field_message.format(field))  # cli_logger.abort
    config["available_node_types"] = {
        LOCAL_CLUSTER_NODE_TYPE: {"node_config": {}, "resources": {}}
    }
    config["head_node_type"] = LOCAL_CLUSTER_NODE_TYPE
    if "coordinator_address" in config["provider"]:
        raise ValueError("coordinator clusters are not what the export writes")
    if ("worker_ips" not in config["provider"]) or ("head_ip" not in config["provider"]):
        raise ValueError(
            "Please supply a `head_ip` and list of `worker_ips`. "
            "Alternatively, supply a `coordinator_address`."
        )
    num_ips = len(config["provider"]["worker_ips"])
    node_type = config["available_node_types"][LOCAL_CLUSTER_NODE_TYPE]
    config.setdefault("max_workers", num_ips)
    min_workers = config.pop("min_workers", num_ips)
    node_type["min_workers"] = min(min_workers, num_ips)
    node_type["max_workers"] = min(config["max_workers"], num_ips)
    return config


def ray_validate(config: dict[str, Any]) -> None:
    """The schema part of `ray.autoscaler._private.util.validate_config`, then its node-type
    checks (the launcher fills in `cluster_synced_files` before; the schema allows it absent)."""
    import jsonschema

    jsonschema.validate(config, json.loads(SCHEMA.read_text()))
    if "available_node_types" in config:
        if "head_node_type" not in config:
            raise ValueError("You must specify `head_node_type` if `available_node_types is set.")
        if config["head_node_type"] not in config["available_node_types"]:
            raise ValueError("`head_node_type` must be one of `available_node_types`.")


# --- sky/ssh_node_pools/core.py: SSHNodePoolManager._validate_pool_config (0.14.1) -----------
# The options SkyPilot's own ssh passes to a node-pool host (`ssh_options_list` in
# sky/utils/command_runner.py, skypilot 0.14.1): the engine's, not the app's. The export says
# that SkyPilot skips the host-key check; the app's own ssh never does.
SKY_SSH_OPTIONS = ("-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                   "-o", "IdentitiesOnly=yes")  # fmt: skip


def sky_validate_pool_config(config: dict[str, Any]) -> None:
    """Validate SSH Node Pool configuration."""
    if "hosts" not in config:
        raise ValueError("Pool configuration must include `hosts`")

    if not isinstance(config["hosts"], list) or not config["hosts"]:
        raise ValueError("`hosts` must be a non-empty list")

    # Validate user field
    if not config.get("user", "").strip():
        raise ValueError("Pool configuration must include `user`")

    # Validate authentication - must have either identity_file or password
    if not config.get("identity_file") and not config.get("password"):
        raise ValueError(
            "Pool configuration must include either `identity_file` or `password`"
        )


# --- sky/ssh_node_pools/utils.py (0.14.1) ----------------------------------------------------
def sky_check_host_in_ssh_config(hostname: str, ssh_config: Path) -> bool:
    """`check_host_in_ssh_config`, with the config file given (ssh reads the home directory
    from the passwd database, so a test names the file)."""
    proc = subprocess.run(
        ["ssh", "-F", str(ssh_config), "-vvG", hostname, "-o", "ConnectTimeout=0"],
        text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
    )  # fmt: skip
    pattern = re.compile(r"^debug\d+: .*Applying options for ([^*].*)$", re.MULTILINE)
    return bool(pattern.search(proc.stdout))


def sky_hosts_for_dash_f(name: str, pool: dict[str, Any], ssh_config: Path) -> list[str]:
    """What `sky ssh up -f` (`prepare_hosts_info` with an upload function) accepts: each host's
    address; ValueError where it refuses (an ssh-config host, a missing identity file)."""
    import os

    msg = (f"Cluster {name} uses SSH config for hostname {{host}}, which is not supported by "
           "the -f flag. Please use a dict with `ip` field instead.")  # fmt: skip
    out = []
    for host in pool["hosts"]:
        ip = host if isinstance(host, str) else host.get("ip")
        if ip is None:
            continue  # skipped with a warning
        if sky_check_host_in_ssh_config(ip, ssh_config):
            raise ValueError(msg.format(host=host))
        identity = os.path.expanduser(
            (host.get("identity_file") if isinstance(host, dict) else None)
            or pool.get("identity_file", "")
        )
        if not os.path.exists(identity):
            raise ValueError(f"Identity file {identity} does not exist.")
        out.append(ip)
    return out
