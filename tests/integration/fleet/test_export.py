"""Fleet exports used by the real engines: Ansible pings both harness hosts through the app's
managed ssh config; Ray's and SkyPilot's files hold what their documented formats require."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import missing_component


def _export(fmt: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpu_companion", "fleet", "export", "--format", fmt,
         "-o", str(out), *extra],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def _ansible(tool: str) -> str:
    found = shutil.which(tool) or str(Path(sys.executable).with_name(tool))
    if not Path(found).exists():
        missing_component(f"{tool} not installed (pip install ansible-core)")
    return found


def test_ansible_pings_both_hosts_through_the_exported_inventory(fleet, tmp_path: Path):
    inv = tmp_path / "inventory.yml"
    done = _export("ansible", inv)
    assert done.returncode == 0, done.stderr
    assert oct(inv.stat().st_mode & 0o777) == "0o600"
    text = inv.read_text()
    assert "PRIVATE KEY" not in text and "No private key is written" in text
    env = {
        **os.environ,
        "ANSIBLE_HOST_KEY_CHECKING": "True",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "a"),
        "ANSIBLE_REMOTE_TEMP": str(tmp_path / "r"),
        "ANSIBLE_PYTHON_INTERPRETER": "/usr/bin/python3",
    }  # the harness host's python; fmt: skip
    listed = subprocess.run([_ansible("ansible-inventory"), "-i", str(inv), "--list"],
                            capture_output=True, text=True, env=env, timeout=60)  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    data = yaml.safe_load(listed.stdout)
    group = "platform_" + fleet.platform.replace("-", "_")
    assert sorted(data[group]["hosts"]) == ["box-a", "box-b"]
    assert data["_meta"]["hostvars"]["box-b"]["ansible_port"] == fleet.servers[1].port
    ping = subprocess.run([_ansible("ansible"), "all", "-i", str(inv), "-m", "ping"],
                          capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert ping.returncode == 0, ping.stdout + ping.stderr
    assert ping.stdout.count("SUCCESS") == 2


def test_ansible_refuses_a_host_whose_key_changed(fleet, tmp_path: Path):
    inv = tmp_path / "inventory.yml"
    assert _export("ansible", inv, "--hosts", "box-b").returncode == 0
    fleet.servers[1].regenerate_host_key()
    ping = subprocess.run([_ansible("ansible"), "all", "-i", str(inv), "-m", "ping"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert ping.returncode != 0
    assert "UNREACHABLE" in ping.stdout and "HOST IDENTIFICATION HAS CHANGED" in (
        ping.stdout + ping.stderr
    )


def test_ray_config_has_what_the_local_provider_requires(fleet, tmp_path: Path):
    out = tmp_path / "ray.yaml"
    assert _export("ray", out).returncode == 0
    text = out.read_text()
    cfg = yaml.safe_load(text)
    # the keys Ray's cluster launcher schema requires for provider `local`
    assert cfg["cluster_name"] and cfg["provider"]["type"] == "local"
    assert cfg["provider"]["head_ip"] == "127.0.0.1"
    assert cfg["provider"]["worker_ips"] == ["127.0.0.1"]
    assert cfg["auth"] == {"ssh_user": fleet.servers[0].user}  # no ssh_private_key: the agent
    assert cfg["head_node_type"] in cfg["available_node_types"]
    assert cfg["available_node_types"]["ray.head.default"]["resources"] == {"GPU": 2}
    assert "WARNING" in text and "6379" in text  # harness ssh ports are mapped, Ray's are not


def test_skypilot_pools_name_hosts_by_alias(fleet, tmp_path: Path):
    out = tmp_path / "pools.yaml"
    assert _export("skypilot", out).returncode == 0
    pools = yaml.safe_load(out.read_text())
    name = fleet.platform.replace("-", "_")
    assert pools == {name: {"hosts": ["box-a", "box-b"]}}  # the documented `hosts:` list


def test_unknown_host_is_refused_by_name(fleet, tmp_path: Path):
    done = _export("ansible", tmp_path / "x.yml", "--hosts", "box-a,nope")
    assert done.returncode == 1 and "No active host named nope" in done.stderr
    assert not (tmp_path / "x.yml").exists()
