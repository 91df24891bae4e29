"""`gpu-companion hosts ...` against the harness sshd: every exit code, the fingerprint check."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gpu_companion.cli import main

pytestmark = pytest.mark.sshd


def cli(capsys, *argv: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    code = main(["hosts", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def fingerprint_of(sshd) -> str:  # type: ignore[no-untyped-def]
    pub = f"{sshd.host_key_path}.pub"
    line = subprocess.run(["ssh-keygen", "-lf", pub], capture_output=True, text=True, check=True)
    return line.stdout.split()[1]


def known_hosts(app_paths) -> str:  # type: ignore[no-untyped-def]
    """The app's own known_hosts file (what its ssh, rsync and paramiko read)."""
    from gpu_companion.core.ssh.config_writer import SshConfigWriter

    path = SshConfigWriter(Path.home()).known_hosts
    return path.read_text() if path.exists() else ""


def test_add_list_edit_remove_and_their_exit_codes(app_paths, capsys) -> None:
    from gpu_companion.core.hosts.registry import HostRegistry, Platform
    from gpu_companion.core.storage.store import Store

    store = Store(app_paths.database)
    HostRegistry(store).save_platform(Platform("vast.ai"))
    store.close()
    add = ["add", "gpu1", "ssh4.vast.ai", "--port", "41022", "--platform", "VAST.AI"]
    code, out, _ = cli(capsys, *add, "--instance-id", "12345678", "--gpu-model", "RTX 4090")
    assert code == 0 and out == "added gpu1 (root@ssh4.vast.ai:41022)\n"
    code, out, _ = cli(capsys, "list", "--json")
    [row] = json.loads(out)
    assert code == 0 and row["platform"] == "vast.ai" and row["instance_id"] == "12345678"
    assert row["host_key_trusted"] is False and row["port"] == 41022
    managed = app_paths.home if hasattr(app_paths, "home") else None  # noqa: F841
    # the managed ssh config followed the change before the command exited
    from pathlib import Path

    config = Path.home() / ".ssh" / "gpu-companion" / "config"
    assert "Host gpu1\n" in config.read_text()

    # refused values: exit 1, nothing changed
    code, _, err = cli(capsys, "add", "gpu 2", "10.0.0.2")
    assert code == 1 and "refused (alias)" in err and "Nothing was changed" in err
    code, _, err = cli(capsys, "add", "gpu2", "10.0.0.2", "--port", "70000")
    assert code == 1 and "between 1 and 65535" in err
    code, _, err = cli(capsys, "add", "gpu1", "10.0.0.9")
    assert code == 1 and "already exists" in err
    # usage: unknown platform or alias, bad arguments
    code, _, err = cli(capsys, "add", "gpu2", "10.0.0.2", "--platform", "runpod")
    assert code == 2 and "no platform named 'runpod' (known: vast.ai)" in err
    code, _, err = cli(capsys, "edit", "nope", "--port", "2222")
    assert code == 2 and "nope: no such host" in err
    with pytest.raises(SystemExit) as usage:
        main(["hosts", "add", "gpu2"])
    assert usage.value.code == 2
    code, out, _ = cli(capsys, "list")
    assert out.count("\n") == 2 and out.startswith("ALIAS  ADDRESS")  # a header, then the host

    code, out, _ = cli(capsys, "edit", "gpu1", "--alias", "gpu-a", "--instance-id", "99",
                       "--user", "ubuntu")  # fmt: skip
    assert code == 0 and out == "saved gpu-a (ubuntu@ssh4.vast.ai:41022)\n"
    code, out, _ = cli(capsys, "list")
    header, row = out.splitlines()
    assert header.split() == ["ALIAS", "ADDRESS", "PLATFORM", "INSTANCE", "STATE", "HOST", "KEY"]
    assert row.split() == ["gpu-a", "ubuntu@ssh4.vast.ai:41022", "vast.ai", "99", "active",
                           "not", "trusted"]  # fmt: skip
    assert header.index("ADDRESS") == row.index("ubuntu@")  # aligned
    assert "Host gpu-a\n" in config.read_text() and "Host gpu1\n" not in config.read_text()
    code, out, _ = cli(capsys, "remove", "gpu-a")
    assert code == 0 and out == "removed gpu-a\n"
    assert cli(capsys, "list", "--json")[1].strip() == "[]"
    assert cli(capsys, "list")[1].startswith("No hosts yet: gpu-companion hosts add")
    assert "Host gpu-a" not in config.read_text()
    assert cli(capsys, "remove", "gpu-a")[0] == 2


def test_trust_needs_the_matching_fingerprint(app_paths, sshd, capsys) -> None:
    code, _, _ = cli(capsys, "add", "gpu1", "127.0.0.1", "--port", str(sshd.port), "--user",
                     sshd.user)  # fmt: skip
    assert code == 0
    right = fingerprint_of(sshd)

    code, out, err = cli(capsys, "trust", "gpu1")  # shows it, trusts nothing
    assert code == 1 and f"offers ssh-ed25519 {right}" in out
    assert f"hosts trust gpu1 --fingerprint {right}" in err
    assert known_hosts(app_paths) == ""

    wrong = "SHA256:" + "A" * 43
    code, _, err = cli(capsys, "trust", "gpu1", "--fingerprint", wrong)
    assert code == 1 and f"offered {right}, not {wrong}: nothing was trusted" in err
    code, _, err = cli(capsys, "trust", "gpu1", "--fingerprint", "MD5:aa:bb")
    assert code == 1 and "is not a SHA256 fingerprint" in err
    assert known_hosts(app_paths) == ""

    code, out, _ = cli(capsys, "trust", "gpu1", "--fingerprint", right)
    assert code == 0 and out.endswith("gpu1: trusted.\n")
    assert f"[127.0.0.1]:{sshd.port} ssh-ed25519 " in known_hosts(app_paths)
    assert json.loads(cli(capsys, "list", "--json")[1])[0]["host_key_trusted"] is True
    code, out, _ = cli(capsys, "trust", "gpu1")
    assert code == 0 and out.endswith("this key is already trusted.\n")

    # the instance was replaced behind the same address: a new key needs --replace
    sshd.regenerate_host_key()
    new = fingerprint_of(sshd)
    code, _, err = cli(capsys, "trust", "gpu1", "--fingerprint", new)
    assert code == 1 and "already has a different trusted host key" in err
    assert new not in subprocess.run(
        ["ssh-keygen", "-lf", "-"], input=known_hosts(app_paths), capture_output=True, text=True,
        check=False,
    ).stdout  # fmt: skip
    code, out, _ = cli(capsys, "trust", "gpu1", "--fingerprint", new, "--replace")
    assert code == 0 and out.endswith("gpu1: replaced.\n")
    assert known_hosts(app_paths).count("\n") == 1
    assert cli(capsys, "trust", "nope")[0] == 2


def test_trust_of_a_closed_port_says_so(app_paths, capsys) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert cli(capsys, "add", "gone", "127.0.0.1", "--port", str(port))[0] == 0
    code, _, err = cli(capsys, "trust", "gone", "--timeout", "3")
    assert code == 1 and f"Could not reach 127.0.0.1:{port}" in err
