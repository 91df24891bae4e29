"""The environment check against real tools, a PATH without them, and the real keyring."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_companion.core.system.envcheck import (
    OsInfo,
    check_tool,
    detect_os,
    install_hint,
    run_checks,
)
from tests.conftest import missing_component

DEBIAN = OsInfo("linux", ("debian",), "Debian GNU/Linux 12 (bookworm)")


def real(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        missing_component(f"{tool} is not installed (Debian: openssh-client, rsync)")
    return path


def bin_dir_with(tmp_path: Path, *tools: str) -> Path:
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    for tool in tools:
        (d / tool).symlink_to(real(tool))
    return d


def script(d: Path, name: str, body: str) -> None:
    p = d / name
    p.write_text(f"#!/bin/sh\n{body}\n")
    p.chmod(0o755)


def test_real_tools_are_found_with_versions(tmp_path):
    d = bin_dir_with(tmp_path, "ssh", "ssh-agent", "rsync")
    ssh = check_tool("ssh", DEBIAN, str(d))
    rsync = check_tool("rsync", DEBIAN, str(d))
    agent = check_tool("ssh-agent", DEBIAN, str(d))
    assert ssh.ok and ssh.version and ssh.version[0].isdigit(), ssh
    assert rsync.ok and rsync.version and rsync.version.count(".") == 2, rsync
    assert agent.ok and agent.version is None
    assert str(d) in ssh.detail


def test_missing_tools_say_how_to_install_them(tmp_path):
    d = bin_dir_with(tmp_path, "ssh")  # no rsync, no ssh-agent on this PATH
    results = {r.name: r for r in run_checks(path=str(d), os_info=DEBIAN, backend=None)}
    assert results["ssh"].ok
    assert not results["rsync"].ok and not results["ssh-agent"].ok
    assert "not found" in results["rsync"].detail
    assert results["rsync"].fix == "Install it with: sudo apt install rsync"
    assert results["ssh-agent"].fix == "Install it with: sudo apt install openssh-client"


def test_missing_from_the_process_path_too(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = check_tool("ssh", DEBIAN)
    assert not result.ok and result.fix.endswith("openssh-client")


def test_something_else_called_rsync_is_not_accepted(tmp_path):
    d = tmp_path / "bin"
    d.mkdir()
    script(d, "rsync", "echo 'hello from a wrapper'")
    result = check_tool("rsync", DEBIAN, str(d))
    assert not result.ok and "did not answer --version like rsync" in result.detail


def test_openrsync_works_but_is_flagged(tmp_path):
    d = tmp_path / "bin"
    d.mkdir()
    script(d, "rsync", "echo 'openrsync: protocol version 29'\necho 'rsync version 2.6.9'")
    result = check_tool("rsync", OsInfo("darwin"), str(d))
    assert result.ok and result.version == "openrsync"
    assert result.fix.startswith("Install it with: brew install rsync")


@pytest.mark.parametrize(
    ("os_info", "tool", "expected"),
    [
        (OsInfo("linux", ("fedora",)), "ssh", "sudo dnf install openssh-clients"),
        (OsInfo("linux", ("rocky", "rhel", "centos", "fedora")), "rsync", "sudo dnf install rsync"),
        (OsInfo("linux", ("manjaro", "arch")), "ssh", "sudo pacman -S openssh"),
        (OsInfo("linux", ("opensuse-tumbleweed", "suse")), "rsync", "sudo zypper install rsync"),
        (OsInfo("linux", ("ubuntu", "debian")), "keyring", "sudo apt install gnome-keyring"),
        (OsInfo("darwin"), "ssh", "brew install openssh"),
        (OsInfo("windows"), "ssh", "winget install Microsoft.OpenSSH.Preview"),
        (OsInfo("windows"), "rsync", "winget install MSYS2.MSYS2"),
    ],
)
def test_install_hints_per_os(os_info, tool, expected):
    assert expected in install_hint(tool, os_info)


def test_unknown_linux_gets_a_sentence_not_a_wrong_command():
    hint = install_hint("ssh", OsInfo("linux", ("gentoo",)))
    assert hint == "Install the OpenSSH client package with your system's package manager."


def test_detect_os_reads_os_release(tmp_path):
    f = tmp_path / "os-release"
    f.write_text('PRETTY_NAME="Ubuntu 24.04 LTS"\nID=ubuntu\nID_LIKE=debian\n')
    info = detect_os("linux", f)
    assert info.ids == ("ubuntu", "debian") and info.package_manager == "apt"
    assert info.pretty == "Ubuntu 24.04 LTS"
    assert detect_os("linux", tmp_path / "absent").package_manager is None
    assert detect_os("darwin").package_manager == "brew"
    assert detect_os("win32").package_manager == "winget"


def test_no_keyring_at_all_is_reported(tmp_path):
    """No D-Bus session: keyring falls back to its fail backend; the check says so, not ok."""
    env = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    env["XDG_RUNTIME_DIR"] = str(tmp_path)
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from gpu_companion.core.system.envcheck import *; r = check_keyring(detect_os()); "
            "print(r.ok); print(r.detail)",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.splitlines()
    assert out[0] == "False"
    assert "No system keyring" in out[1] or "did not answer" in out[1]


def test_doctor_command_lists_what_is_missing(tmp_path):
    d = bin_dir_with(tmp_path, "ssh")
    env = {**os.environ, "PATH": str(d)}
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    out = subprocess.run(
        [sys.executable, "-m", "gpu_companion", "doctor"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 1
    assert "rsync: `rsync` was not found on the PATH." in out.stdout
    assert "[ok ] ssh" in out.stdout


class _PlainFileKeyring:
    """Stands for keyrings.alt's file backend: it would answer, but in plain text."""

    __module__ = "keyrings.alt.file"

    def get_password(self, service: str, user: str) -> None:
        return None


def _null_keyring() -> object:
    from keyring.backends import null

    return null.Keyring()


@pytest.mark.parametrize("make", [_null_keyring, _PlainFileKeyring])
def test_a_plain_text_or_null_backend_is_not_usable_for_doctor_nor_the_vault(make, tmp_path):
    """One test of a backend: what the vault refuses, the check does not call usable."""
    from gpu_companion.core.ssh.keyring_errors import KeyringUnavailable
    from gpu_companion.core.ssh.vault import KeyVault
    from gpu_companion.core.storage.store import Store

    backend = make()
    result = next(iter(run_checks(path=str(tmp_path), backend=backend, os_info=DEBIAN)))
    assert result.name == "keyring" and not result.ok
    assert "plain file or not at all" in result.detail and result.fix
    store = Store(tmp_path / "db.sqlite")
    try:
        with pytest.raises(KeyringUnavailable):
            KeyVault(store, tmp_path / "keys", backend).check_keyring()
    finally:
        store.close()


def test_doctor_with_the_null_backend_reports_a_problem(tmp_path):
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    done = subprocess.run(
        [sys.executable, "-m", "gpu_companion", "doctor"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    line = next(ln for ln in done.stdout.splitlines() if "] keyring" in ln)
    assert line.startswith("  [PROBLEM] keyring: The only keyring found is null")
    assert done.returncode == 1


def test_plain_text_or_null_backends_are_never_called_usable(tmp_path):
    """The check agrees with the key vault: a backend the vault refuses is not "usable"."""
    from keyring.backends import chainer, null

    from gpu_companion.core.ssh.vault import KeyVault
    from gpu_companion.core.system.envcheck import check_keyring

    class NothingSafe(chainer.ChainerBackend):  # keyring's chain with only a no-op in it
        backends = [null.Keyring()]  # type: ignore[assignment]

    for backend in (null.Keyring(), NothingSafe()):
        result = check_keyring(DEBIAN, backend)
        assert not result.ok, result
        assert "plain file or not at all" in result.detail
        from gpu_companion.core.storage.store import Store

        store = Store(tmp_path / "db.sqlite")
        try:
            with pytest.raises(Exception, match="keyring"):
                KeyVault(store, tmp_path / "keys", backend).check_keyring()
        finally:
            store.close()
