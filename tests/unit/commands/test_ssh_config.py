"""`gpu-companion ssh-config` in a terminal: same files and rules as the app, exit 1 on refusal."""

from __future__ import annotations

import os
import subprocess
import sys

from gpu_companion.cli import main
from gpu_companion.core.hosts.registry import Host, HostRegistry, Platform


def add_hosts(store):
    reg = HostRegistry(store)
    p = reg.save_platform(Platform("vast.ai"))
    reg.save_host(Host("gpu1", "203.0.113.7", 41022, "root", platform_id=p.id))
    reg.save_host(Host("gpu2", "203.0.113.8", 22, "ubuntu"))
    return reg


def test_print_write_and_remove(store, isolated_home, capsys):
    add_hosts(store)
    config = isolated_home / ".ssh" / "config"
    config.write_bytes(b"Host gpu2\n  HostName 10.1.1.1\n")
    assert main(["ssh-config", "--print"]) == 0
    out, err = capsys.readouterr()
    assert "Host gpu1\n    HostName 203.0.113.7\n    Port 41022" in out
    assert "skipped gpu2" in err and "already defines" in err
    assert config.read_bytes() == b"Host gpu2\n  HostName 10.1.1.1\n"  # --print writes nothing

    assert main(["ssh-config", "--write"]) == 0
    out, _ = capsys.readouterr()
    assert "backup of your ssh config" in out
    data = config.read_bytes()
    assert data.startswith(b"# Added by GPU Companion") and data.endswith(b"HostName 10.1.1.1\n")
    assert main(["ssh-config", "--write"]) == 0
    assert "nothing to change" in capsys.readouterr().out
    assert config.read_bytes() == data

    assert main(["ssh-config", "--remove"]) == 0
    assert config.read_bytes() == b"Host gpu2\n  HostName 10.1.1.1\n"
    assert not (isolated_home / ".ssh" / "gpu-companion" / "config").exists()


def test_a_hostile_value_in_the_database_is_refused_with_exit_1(store, isolated_home, capsys):
    add_hosts(store)
    # a value that bypassed the app's checks (hand-edited database)
    with store.transaction() as db:
        db.execute(
            "UPDATE hosts SET hostname = ? WHERE alias = 'gpu1'",
            ["10.0.0.1\n  ProxyCommand sh -c id"],
        )
    assert main(["ssh-config", "--write"]) == 1
    err = capsys.readouterr().err
    assert "refused (hostname)" in err and "line breaks" in err
    assert not (isolated_home / ".ssh" / "config").exists()
    assert not (isolated_home / ".ssh" / "gpu-companion").exists()


def test_the_installed_command_exits_non_zero_on_refusal(isolated_home):
    (isolated_home / ".ssh" / "config").mkdir()  # not a file: refused
    done = subprocess.run(
        [sys.executable, "-m", "gpu_companion", "ssh-config", "--write"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "is a directory" in done.stderr
    assert "Traceback" not in done.stderr
