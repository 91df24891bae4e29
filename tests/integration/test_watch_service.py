"""`gpu-companion watch --install | --uninstall | --status` through the CLI, on the test's own
home: the user unit is written, reported and removed; systemctl is really asked but can reach no
user manager (a fresh XDG_RUNTIME_DIR, no session bus); and the ExecStart it writes, run the way
systemd would run it, really starts the watch and stops cleanly on SIGTERM."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path

import pytest

from gpu_companion.cli import main
from gpu_companion.core.system import service_unit
from gpu_companion.core.system.service_unit import ENV_PROGRAM, UNIT_NAME, CommandResult
from tests.unit.core.system.test_service_unit import (
    AWKWARD_DATA,
    awkward_venv,
    parse_unit,
    verify_unit,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="systemd is Linux")


@pytest.fixture
def attempted(monkeypatch):  # type: ignore[no-untyped-def]
    """Every command the service code runs, recorded, then run for real with no way to reach
    a user manager or a session bus: nothing can touch the real user's systemd."""
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.delenv("SYSTEMD_BUS_ADDRESS", raising=False)
    assert Path(os.environ["XDG_RUNTIME_DIR"]).name.startswith("gc-rt-")  # the test's own
    calls: list[list[str]] = []
    real = service_unit.run_command

    def record(argv: list[str], timeout: float) -> CommandResult:
        calls.append(list(argv))
        return real(argv, timeout)

    monkeypatch.setattr(service_unit, "run_command", record)
    return calls


def unit_path(home: Path) -> Path:
    return home / ".config" / "systemd" / "user" / UNIT_NAME


def test_install_status_uninstall_without_a_user_manager(isolated_home, attempted, capsys):
    path = unit_path(isolated_home)
    assert main(["watch", "--install", "--every", "7"]) == 0
    said = capsys.readouterr().out
    assert path.is_file() and stat.S_IMODE(path.stat().st_mode) == 0o644
    assert f"wrote {path}" in said
    assert "No user systemd answers here" in said
    assert "systemctl --user daemon-reload" in said
    assert f"systemctl --user enable --now {UNIT_NAME}" in said
    assert "loginctl enable-linger" in said  # lingering cannot be known here
    program, argv, env = parse_unit(path.read_text())
    assert argv == [sys.executable, "-m", "gpu_companion", "watch", "--every", "7"]
    assert env == {"GPU_COMPANION_HOME": os.environ["GPU_COMPANION_HOME"]}
    # what was attempted: systemctl only as --user, asked whether a manager answers; nothing else
    assert all(c[:2] == ["systemctl", "--user"] for c in attempted if c[0] == "systemctl")
    assert ["systemctl", "--user", "show-environment"] in attempted
    assert not any("enable" in c for c in attempted if c[0] == "systemctl")
    assert {c[0] for c in attempted} <= {"systemctl", "loginctl"}

    before = path.stat().st_mtime_ns, path.read_bytes()
    assert main(["watch", "--install", "--every", "7"]) == 0
    assert "unchanged:" in capsys.readouterr().out
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before

    assert main(["watch", "--status"]) == 0
    said = capsys.readouterr().out
    assert f"installed: {path}" in said
    assert "journalctl --user -u gpu-companion-watch" in said
    assert str(Path(os.environ["GPU_COMPANION_HOME"]) / "logs" / "gpu-companion.log") in said

    assert main(["watch", "--uninstall"]) == 0
    said = capsys.readouterr().out
    assert f"removed {path}" in said and not path.exists()
    assert main(["watch", "--status"]) == 0
    assert "not installed" in capsys.readouterr().out


def test_install_with_a_user_manager_answering_enables_it(isolated_home, monkeypatch, capsys):
    calls: list[list[str]] = []

    def manager(argv: list[str], timeout: float) -> CommandResult:
        calls.append(argv)
        if argv[:2] == ["loginctl", "show-user"]:
            return CommandResult(0, "Linger=yes\n")
        if argv[2:3] == ["is-active"]:
            return CommandResult(3, "inactive\n")
        return CommandResult(0)

    monkeypatch.setattr(service_unit, "run_command", manager)
    assert main(["watch", "--install"]) == 0
    said = capsys.readouterr().out
    assert "enabled and started" in said and "enable-linger" not in said
    # no --every given: the service checks at the watch's own default
    assert parse_unit(unit_path(isolated_home).read_text())[1][-1] == "watch"
    assert ["systemctl", "--user", "daemon-reload"] in calls
    assert ["systemctl", "--user", "enable", "--now", UNIT_NAME] in calls
    calls.clear()
    assert main(["watch", "--uninstall"]) == 0
    assert ["systemctl", "--user", "disable", "--now", UNIT_NAME] in calls
    assert not unit_path(isolated_home).exists()


def test_a_failing_systemctl_is_exit_code_1_on_stderr(isolated_home, monkeypatch, capsys):
    def refusing(argv: list[str], timeout: float) -> CommandResult:
        if argv[2:3] == ["enable"]:
            return CommandResult(1, "", "Failed to enable unit: Unit file is masked.")
        return CommandResult(0, "inactive\n" if "is-active" in argv else "")

    monkeypatch.setattr(service_unit, "run_command", refusing)
    assert main(["watch", "--install"]) == 1
    assert "Unit file is masked." in capsys.readouterr().err


def test_a_bad_every_is_refused_before_anything_is_written(isolated_home, capsys):
    assert main(["watch", "--install", "--every", "0"]) == 1
    assert "--every must be a positive number" in capsys.readouterr().err
    assert not unit_path(isolated_home).exists()


def test_an_unsupported_system_is_exit_code_2(isolated_home, monkeypatch, capsys):
    monkeypatch.setattr(
        service_unit, "WatchService", partial(service_unit.WatchService, platform="win32")
    )
    for flag in ("--install", "--uninstall", "--status"):
        assert main(["watch", flag]) == 2
        said = capsys.readouterr().err
        assert "not supported on win32 yet" in said and "Task Scheduler" in said


def test_the_service_options_exclude_each_other(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["watch", "--install", "--uninstall"])
    assert exc.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def catches_sigterm(pid: int) -> bool:
    """Whether the process has its SIGTERM handler in place yet (SigCgt in /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


@pytest.mark.parametrize(
    "venv_name",
    ["My Tools 100% $HOME ${X} é 日本", 'it\'s "quoted" back\\slash'],
    ids=["dollar-form", "env-form"],
)
def test_the_installed_exec_start_really_starts_the_watch(
    isolated_home, attempted, tmp_path, venv_name
):
    """The unit for a venv and a data folder at awkward paths: systemd-analyze accepts it, and
    its ExecStart, parsed back and run with its Environment, watches until SIGTERM, exit 0. A
    program path with a quote (which systemd refuses) runs through /usr/bin/env."""
    python = awkward_venv(tmp_path / "venvs", venv_name)
    data = tmp_path / AWKWARD_DATA
    service = service_unit.WatchService(env={**os.environ, "GPU_COMPANION_HOME": str(data)})
    argv = service_unit.watch_command(2, frozen=False, executable=str(python))
    assert service.install(argv).code == 0
    path = unit_path(isolated_home)
    done = verify_unit(path)
    assert done.returncode == 0, done.stdout + done.stderr
    program, run_argv, env = parse_unit(path.read_text())
    if '"' in venv_name:
        assert program == ENV_PROGRAM and run_argv == [ENV_PROGRAM, *argv]
    else:
        assert program == str(python) and run_argv == argv
    assert env == {"GPU_COMPANION_HOME": str(data)}

    child_env = {k: v for k, v in os.environ.items() if k != "GPU_COMPANION_HOME"}
    child_env.pop("SSH_AUTH_SOCK", None)
    child_env.update(env)
    proc = subprocess.Popen(
        [program, *run_argv[1:]], executable=program, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, env=child_env, cwd="/",
    )  # fmt: skip
    lines: list[str] = []
    started = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("watching (every 2 s)"):
                started.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert started.wait(60), "".join(lines)
        assert (data / "data").is_dir()  # the pinned data location is the one it opened
        assert catches_sigterm(proc.pid)  # in place before "watching": a stop now is not lost
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        reader.join(timeout=10)
    assert code == 0, "".join(lines)
