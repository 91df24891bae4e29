"""Fleet exports used by the real engines: Ansible pings both harness hosts through the app's
managed ssh config (Ray and SkyPilot: test_engines.py)."""

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
    hostvars = data["_meta"]["hostvars"]["box-b"]
    assert hostvars["ansible_host"] == "box-b"  # the managed alias: its port, user, key, agent
    assert "ansible_port" not in hostvars and "ansible_user" not in hostvars  # no stale override
    ping = subprocess.run([_ansible("ansible"), "all", "-i", str(inv), "-m", "ping"],
                          capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert ping.returncode == 0, ping.stdout + ping.stderr
    assert ping.stdout.count("SUCCESS") == 2


def _ansible_env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "ANSIBLE_HOST_KEY_CHECKING": "True",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "a"),
        "ANSIBLE_REMOTE_TEMP": str(tmp_path / "r"),
        "ANSIBLE_PYTHON_INTERPRETER": "/usr/bin/python3",
    }


def test_an_inventory_still_reaches_a_host_after_its_port_changes(fleet, tmp_path: Path):
    """The port lives in the managed config only: the host moves (a restarted rental maps a new
    port), the app learns it, and the inventory exported before still works."""
    from dataclasses import replace

    from gpu_companion.core.ssh.connection import ConnectionProblem
    from tests.harness.util import free_port

    inv = tmp_path / "inventory.yml"
    assert _export("ansible", inv, "--hosts", "box-b").returncode == 0
    services, server = fleet.services, fleet.servers[1]
    server.stop()
    server.port = free_port()
    server.start()
    host = services.registry.save_host(replace(services.registry.host("box-b"), port=server.port))
    try:  # the new address is a new known_hosts entry: the user accepts it in the dialog
        services.sessions.connect(host).close()
    except ConnectionProblem as first_contact:
        services.sessions.trust_host_key(host, first_contact.key)
    services.ssh_sync.flush(30)
    ping = subprocess.run([_ansible("ansible"), "all", "-i", str(inv), "-m", "ping"],
                          capture_output=True, text=True, env=_ansible_env(tmp_path),
                          timeout=120)  # fmt: skip
    assert ping.returncode == 0, ping.stdout + ping.stderr
    assert ping.stdout.count("SUCCESS") == 1


def test_export_to_a_file_makes_a_new_0600_file_and_never_follows_a_link(
    fleet, tmp_path: Path
):
    open_file = tmp_path / "open.yml"
    open_file.write_text("old\n")
    open_file.chmod(0o666)
    assert _export("ansible", open_file).returncode == 0
    st = open_file.stat()
    assert oct(st.st_mode & 0o777) == "0o600" and st.st_uid == os.getuid()
    assert "ansible_host" in open_file.read_text()

    target = tmp_path / "elsewhere.txt"
    target.write_text("not yours\n")
    target.chmod(0o644)
    link = tmp_path / "link.yml"
    link.symlink_to(target)
    assert _export("skypilot", link).returncode == 0
    assert target.read_text() == "not yours\n" and oct(target.stat().st_mode & 0o777) == "0o644"
    assert not link.is_symlink() and oct(link.stat().st_mode & 0o777) == "0o600"
    assert "hosts" in link.read_text()
    dangling = tmp_path / "dangling.yml"
    dangling.symlink_to(tmp_path / "made-through-the-link")
    assert _export("ray", dangling).returncode == 0
    assert not (tmp_path / "made-through-the-link").exists() and not dangling.is_symlink()
    assert not list(tmp_path.glob(".*.tmp"))  # no temp file left


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


def test_unknown_host_is_refused_by_name(fleet, tmp_path: Path):
    done = _export("ansible", tmp_path / "x.yml", "--hosts", "box-a,nope")
    assert done.returncode == 1 and "No active host named nope" in done.stderr
    assert not (tmp_path / "x.yml").exists()
