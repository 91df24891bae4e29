"""Ray's and SkyPilot's fleet exports, checked with the engines' own schema and checks (vendored
from their released wheels: tests/data/engines) and run for real where no engine is needed: the
Ray start script starts a `ray` stand-in on both harness hosts over the app's managed ssh config,
and SkyPilot's way of calling ssh logs in with the exported identity_file through the app's agent.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.data.engines.engine_checks import (
    SKY_SSH_OPTIONS,
    ray_prepare_local,
    ray_validate,
    sky_check_host_in_ssh_config,
    sky_hosts_for_dash_f,
    sky_validate_pool_config,
)


def _export(fmt: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpu_companion", "fleet", "export", "--format", fmt,
         "-o", str(out), *extra],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_ray_config_is_what_rays_own_config_code_accepts(fleet, tmp_path: Path):
    out = tmp_path / "ray.yaml"
    done = _export("ray", out)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    cfg = yaml.safe_load(text)
    ray_validate(cfg)  # Ray 2.60's schema
    prepared = ray_prepare_local(cfg)  # what `ray up` runs first for provider `local`
    ray_validate(prepared)
    assert prepared["available_node_types"]["local.cluster.node"]["max_workers"] == 1
    assert cfg["provider"] == {"type": "local", "head_ip": "127.0.0.1", "worker_ips": ["127.0.0.1"]}
    assert cfg["auth"] == {"ssh_user": fleet.servers[0].user}  # no ssh_private_key, ever
    assert "PRIVATE KEY" not in text and "available_node_types" not in cfg
    # no claim of a host-key check Ray does not do
    assert "StrictHostKeyChecking=no" in text and "--format ray-start" in text
    assert "WARNING" in text and "6379" in text  # harness ssh ports are mapped, Ray's are not


def test_the_old_ray_export_is_refused_by_the_same_check():
    old = {"cluster_name": "x", "provider": {"type": "local", "head_ip": "a", "worker_ips": []},
           "available_node_types": {"ray.head.default": {"resources": {}, "node_config": {}}},
           "head_node_type": "ray.head.default"}  # fmt: skip
    with pytest.raises(ValueError, match="available_node_types is not supported for on-premise"):
        ray_prepare_local(old)


def _ray_standin(server, tmp_path: Path, name: str) -> Path:
    """`ray` on the host's PATH: logs its arguments (one file per host) and exits 0."""
    bin_dir, log = tmp_path / f"ray-{name}", tmp_path / f"ray-{name}.log"
    bin_dir.mkdir()
    (bin_dir / "ray").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\n')
    (bin_dir / "ray").chmod(0o755)
    server.path_prefix.insert(0, bin_dir)
    server.restart()
    return log


def test_the_ray_start_script_starts_each_host_over_the_managed_ssh_config(
    fleet, tmp_path: Path
):
    logs = [_ray_standin(s, tmp_path, a) for s, a in zip(fleet.servers, fleet.aliases, strict=True)]
    script = tmp_path / "start-ray.sh"
    assert _export("ray-start", script).returncode == 0
    text = script.read_text()
    assert "PRIVATE KEY" not in text and "StrictHostKeyChecking" not in text
    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}  # the app's agent only
    done = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env,
                          timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert logs[0].read_text() == "start --head --port=6379\n"
    assert logs[1].read_text() == "start --address=127.0.0.1:6379\n"  # the head's address

    # the host keys the app pinned are checked: a changed one stops the script
    fleet.servers[1].regenerate_host_key()
    logs[1].unlink()
    done = subprocess.run(["sh", str(script)], capture_output=True, text=True, env=env,
                          timeout=60)  # fmt: skip
    assert done.returncode != 0 and "HOST IDENTIFICATION HAS CHANGED" in done.stderr
    assert not logs[1].exists()


def test_skypilot_pools_pass_skypilots_checks_one_pool_per_host(fleet, tmp_path: Path):
    out = tmp_path / "pools.yaml"
    assert _export("skypilot", out).returncode == 0
    text = out.read_text()
    pools = yaml.safe_load(text)
    assert sorted(pools) == ["box-a", "box-b"]  # two rentals are not one k3s cluster
    config = fleet.services.ssh_config.config_path
    for alias, server in zip(fleet.aliases, fleet.servers, strict=True):
        pool = pools[alias]
        sky_validate_pool_config(pool)  # what the API server requires (user, identity_file)
        assert sky_hosts_for_dash_f(alias, pool, config) == ["127.0.0.1"]  # `sky ssh up -f`
        assert pool["user"] == server.user
        key = Path(pool["identity_file"])
        assert key.read_text().startswith("ssh-ed25519 ")  # the public key; no private one
    assert "PRIVATE KEY" not in text and "StrictHostKeyChecking=no" in text
    # an alias (the old export) is what `-f` refuses
    assert sky_check_host_in_ssh_config("box-a", config)
    with pytest.raises(ValueError, match="not supported by the -f flag"):
        sky_hosts_for_dash_f("old", {"hosts": ["box-a"], "user": "u"}, config)


def test_skypilots_ssh_logs_in_with_the_exported_identity_through_the_app_agent(
    fleet, tmp_path: Path
):
    """SkyPilot's own ssh (its options, not the app's: SKY_SSH_OPTIONS) with `-i IDENTITY_FILE`:
    with the exported public key, ssh signs through the app's agent (SSH_AUTH_SOCK)."""
    out = tmp_path / "pools.yaml"
    assert _export("skypilot", out, "--hosts", "box-b").returncode == 0
    pool = yaml.safe_load(out.read_text())["box-b"]
    server = fleet.servers[1]
    argv = ["ssh", "-F", "/dev/null", *SKY_SSH_OPTIONS, "-o", "BatchMode=yes",
            "-i", pool["identity_file"], "-p", str(server.port),
            f"{pool['user']}@{pool['hosts'][0]['ip']}", "echo logged-in"]  # fmt: skip
    env = {**os.environ, "SSH_AUTH_SOCK": str(fleet.services.agent.paths.socket)}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "logged-in"
