"""`gpu-companion tunnel` as a user runs it (a real process, Ctrl-C to stop) and `gpu-companion
open` with recording stand-ins for the terminal and VS Code."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.request

import pytest

from gpu_companion.cli import main
from gpu_companion.core.hosts.registry import Host, HostRegistry
from tests.harness.launchers import RecordingLaunchers
from tests.harness.util import free_port
from tests.integration.access.conftest import forget, make_rented

CLI = [sys.executable, "-c", "from gpu_companion.cli import main; raise SystemExit(main())"]


@pytest.mark.sshd
@pytest.mark.keyring
def test_tunnel_command_serves_the_page_until_ctrl_c(app_paths, keyring_backend, sshd, remote_web):
    rented = make_rented(app_paths, keyring_backend, sshd, None)  # the CLI's own keyring name
    try:
        local = free_port()
        proc = subprocess.Popen(
            [*CLI, "tunnel", "gpu1", str(remote_web.port), "--local", str(local)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            line = proc.stdout.readline()
            assert line.strip() == (
                f"gpu1:{remote_web.port} → http://127.0.0.1:{local}/  (Ctrl-C to stop)"
            ), proc.stderr.read() if not line else line
            with urllib.request.urlopen(f"http://127.0.0.1:{local}/", timeout=20) as r:
                assert "served from the rented host" in r.read().decode()
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 0, err
        assert "tunnel closed" in out
    finally:
        forget(rented)


def test_tunnel_command_refuses_an_unknown_alias(app_paths, capsys):
    assert main(["tunnel", "nosuch", "8888"]) == 1
    assert "no active rented host named 'nosuch'" in capsys.readouterr().err


@pytest.fixture
def launchers(tmp_path, monkeypatch):
    stand_ins = RecordingLaunchers(tmp_path / "launchers")
    for k, v in stand_ins.env.items():
        monkeypatch.setenv(k, v)
    return stand_ins


@pytest.fixture
def host_in_registry(store):
    return HostRegistry(store).save_host(Host("gpu1", "203.0.113.7", 41022, "root"))


def test_open_says_the_ssh_config_is_not_written_and_launches_nothing(
    host_in_registry, launchers, capsys
):
    assert main(["open", "gpu1", "--terminal"]) == 1
    err = capsys.readouterr().err
    assert "`ssh gpu1` does not work in a terminal yet" in err
    assert "gpu-companion ssh-config --write" in err
    assert launchers.launches() == []


def test_open_terminal_and_code_argv(host_in_registry, launchers, capsys):
    assert main(["ssh-config", "--write"]) == 0
    assert main(["open", "gpu1", "--terminal"]) == 0
    assert "opened a terminal on gpu1" in capsys.readouterr().out
    terminal = str(launchers.bin_dir / "x-terminal-emulator")
    assert launchers.wait(1)[-1] == [terminal, "-e", "ssh", "gpu1"]

    assert main(["open", "gpu1", "--terminal", "--tmux"]) == 0
    argv = launchers.wait(2)[-1]
    assert argv[:5] == [terminal, "-e", "ssh", "-t", "gpu1"]
    assert "exec tmux new-session -A -s main;" in argv[5]

    assert main(["open", "gpu1", "--code", "/root/my project"]) == 0
    code = str(launchers.bin_dir / "code")
    assert launchers.wait(3)[-1] == [code, "--remote", "ssh-remote+gpu1", "/root/my project"]


def test_open_code_without_vs_code_says_how_to_get_it(
    host_in_registry, launchers, capsys, monkeypatch
):
    assert main(["ssh-config", "--write"]) == 0
    launchers.remove("code")
    path = os.environ["PATH"].split(os.pathsep)
    monkeypatch.setenv("PATH", os.pathsep.join(p for p in path if not os.path.exists(f"{p}/code")))
    assert main(["open", "gpu1", "--code", "/root"]) == 1
    assert "VS Code's `code` command was not found" in capsys.readouterr().err
    assert launchers.launches() == []


@pytest.mark.sshd
@pytest.mark.keyring
def test_tunnel_command_refuses_a_changed_host_key(app_paths, keyring_backend, sshd, capsys):
    rented = make_rented(app_paths, keyring_backend, sshd, None)
    try:
        sshd.regenerate_host_key()
        local = free_port()
        assert main(["tunnel", "gpu1", "8888", "--local", str(local)]) == 1
        err = capsys.readouterr().err
        assert "the tunnel did not start: The host key of gpu1" in err
        assert "new instance behind a recycled address" in err
    finally:
        forget(rented)


@pytest.mark.sshd
@pytest.mark.keyring
def test_tunnel_command_refuses_a_taken_local_port(app_paths, keyring_backend, sshd, capsys):
    rented = make_rented(app_paths, keyring_backend, sshd, None)
    try:
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            assert main(["tunnel", "gpu1", "8888", "--local", str(port)]) == 1
        assert f"Local port {port} is already in use by another program" in capsys.readouterr().err
    finally:
        forget(rented)
