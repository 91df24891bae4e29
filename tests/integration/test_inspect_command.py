"""`gpu-companion inspect` against the harness sshd and the stand-in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gpu_companion.cli import build_parser
from gpu_companion.commands import inspect
from gpu_companion.core.hosts.registry import Host, HostRegistry
from gpu_companion.core.storage.store import Store


def _add_hosts(app_paths, sshd, *aliases):  # type: ignore[no-untyped-def]
    store = Store(app_paths.database)
    registry = HostRegistry(store)
    for alias in aliases:
        registry.save_host(Host(alias, "127.0.0.1", sshd.port, sshd.user))
    store.close()


def _run(argv, factory, capsys):  # type: ignore[no-untyped-def]
    code = inspect.run(build_parser().parse_args(["inspect", *argv]), factory=factory)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_one_line_per_gpu_with_processes_and_json(
    app_paths, sshd, standin, harness_client_factory, capsys
):
    process = {"gpu": 1, "pid": 99, "name": "python a, b.py", "used_mib": 500}
    standin.configure(gpu_count=2, util=42, mem_used=1000, temperature=61, processes=[process])
    _add_hosts(app_paths, sshd, "gpu1", "gpu2")
    code, out, _ = _run(["gpu1", "gpu2"], harness_client_factory, capsys)
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 4
    first = lines[0].split("\t")
    assert first[:4] == ["gpu1", "0", "NVIDIA H100 80GB HBM3", "util 42%"]
    assert first[4:7] == ["mem 1000/81559 MiB", "61 C", "364 W"] and first[7] == "procs -"
    assert lines[1].endswith("procs python a, b.py(99)")
    assert {ln.split("\t")[0] for ln in lines} == {"gpu1", "gpu2"}
    code, out, _ = _run(["gpu1", "--json"], harness_client_factory, capsys)
    data = json.loads(out)
    assert code == 0 and data[0]["host"] == "gpu1" and data[0]["ok"] is True
    assert data[0]["gpus"][1]["processes"] == [
        {"pid": 99, "name": "python a, b.py", "used_memory_mib": 500}]  # fmt: skip


def test_a_failing_host_gets_its_reason_and_a_nonzero_exit(
    app_paths, sshd, standin, harness_client_factory, capsys
):
    standin.configure(gpu_count=1, mode="gpu_lost")
    _add_hosts(app_paths, sshd, "gpu1")
    code, out, _ = _run(["gpu1"], harness_client_factory, capsys)
    assert code == 1
    assert out.startswith("gpu1\tGPU lost: The GPU at 0000:03:00.0 is lost")
    code, out, err = _run(["gpu1", "nope"], harness_client_factory, capsys)
    assert code == 2 and out == "" and "nope: no such host" in err
    sshd.authorized_keys.write_text("")
    standin.configure(gpu_count=1)
    code, out, _ = _run(["gpu1", "--json"], harness_client_factory, capsys)
    assert code == 1 and json.loads(out)[0]["state"] == "auth failed"


def test_the_real_command_connects_like_the_app(
    app_paths, sshd, standin, isolated_home, tmp_path, keyring_backend
):
    """A fresh process, like a user's terminal: the platform's key from the keyring, the host key
    from the app's known_hosts (RejectPolicy), no key file anywhere."""
    from gpu_companion.core.hosts.registry import Platform
    from gpu_companion.core.ssh.config_writer import SshConfigWriter
    from gpu_companion.core.ssh.vault import KeyVault

    standin.configure(gpu_count=3)
    store = Store(app_paths.database)
    registry = HostRegistry(store)
    platform = registry.save_platform(Platform(f"inspect-{os.getpid()}-{tmp_path.name}"))
    registry.save_host(Host("gpu1", "127.0.0.1", sshd.port, sshd.user, platform.id))
    vault = KeyVault(store, app_paths.data_dir / "keys")
    sshd.authorize(vault.generate(platform.name).public_line)
    store.close()
    known_hosts = SshConfigWriter(isolated_home).known_hosts
    known_hosts.parent.mkdir(parents=True, exist_ok=True)
    known_hosts.write_text(sshd.known_hosts_line())
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}  # no nvidia-smi locally
    done = subprocess.run(
        [sys.executable, "-m", "gpu_companion", "inspect", "gpu1", "local"],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    lines = done.stdout.splitlines()
    assert [ln.split("\t")[:2] for ln in lines[:3]] == [["gpu1", "0"], ["gpu1", "1"], ["gpu1", "2"]]
    if not Path("/usr/bin/nvidia-smi").exists():
        assert lines[3] == ("local\tno NVIDIA driver: nvidia-smi is not installed on this "
                            "computer. The image has no NVIDIA driver tools: choose a GPU image, "
                            "or install the driver.")  # fmt: skip
        assert done.returncode == 1
