"""`watch` as a service: the systemd unit is rendered, parsed back with systemd's own rules and
checked by `systemd-analyze verify`; the launchd agent round-trips through plistlib; every
systemctl/loginctl/launchctl call is asserted on the argv given to an injected runner."""

from __future__ import annotations

import os
import plistlib
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_companion.core.common.paths import AppPaths
from gpu_companion.core.system.service_unit import (
    ENV_PROGRAM,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_UNSUPPORTED,
    MAC_LABEL,
    UNIT_NAME,
    CommandResult,
    ServiceUnitError,
    WatchService,
    data_environment,
    render_systemd_unit,
    run_command,
    systemd_exec_line,
    watch_command,
)
from tests.conftest import missing_component

AWKWARD_ARG = "a \"b\" 'c' \\d $HOME ${X} %n 100% é ü 日本 ;"

# --- a systemd.syntax reader, written from the man pages (not from the module under test) -----

_C_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r", "s": " "}


def split_words(value: str) -> list[str]:
    """Words the way systemd's extract_first_word(UNQUOTE|CUNESCAPE) reads them."""
    words: list[str] = []
    cur: str | None = None
    quote: str | None = None
    i = 0
    while i < len(value):
        c = value[i]
        if c == "\\":
            nxt = value[i + 1]
            if nxt == "x":
                ch, i = chr(int(value[i + 2 : i + 4], 16)), i + 4
            else:
                assert nxt in _C_ESCAPES, f"unexpected escape \\{nxt} in {value!r}"
                ch, i = _C_ESCAPES[nxt], i + 2
            cur = (cur or "") + ch
            continue
        if quote:
            if c == quote:
                quote = None
            else:
                cur = (cur or "") + c
        elif c in "\"'":
            quote, cur = c, cur or ""
        elif c in " \t":
            if cur is not None:
                words.append(cur)
            cur = None
        else:
            cur = (cur or "") + c
        i += 1
    assert quote is None, f"unterminated quote in {value!r}"
    if cur is not None:
        words.append(cur)
    return words


def expand_specifiers(value: str) -> str:
    """Only `%%` is expected: any other specifier would be a quoting bug."""
    out, i = "", 0
    while i < len(value):
        if value[i] == "%":
            assert value[i + 1] == "%", f"a specifier %{value[i + 1]} slipped into {value!r}"
            out, i = out + "%", i + 2
        else:
            out, i = out + value[i], i + 1
    return out


def substitute_variables(arg: str) -> str:
    """ExecStart's variable substitution, with no variables expected: `$$` is one `$`."""
    out, i = "", 0
    while i < len(arg):
        if arg[i] == "$":
            assert arg[i + 1] == "$", f"a variable slipped into {arg!r}"
            out, i = out + "$", i + 2
        else:
            out, i = out + arg[i], i + 1
    return out


def parse_exec_start(value: str) -> tuple[str, list[str]]:
    """(the program systemd executes, the argv it passes), from an ExecStart= value."""
    value = expand_specifiers(value)
    at = value.startswith("@")
    words = split_words(value[1:] if at else value)
    program = words[0]  # the program is taken literally: no variable substitution
    argv = [substitute_variables(w) for w in (words[1:] if at else words)]
    if not at:
        argv[0] = program
    return program, argv


def parse_unit(text: str) -> tuple[str, list[str], dict[str, str]]:
    """ExecStart's (program, argv) and the Environment= assignments of a unit file."""
    exec_values = [
        ln[len("ExecStart=") :] for ln in text.splitlines() if ln.startswith("ExecStart=")
    ]
    assert len(exec_values) == 1
    env: dict[str, str] = {}
    for ln in text.splitlines():
        if ln.startswith("Environment="):
            for word in split_words(expand_specifiers(ln[len("Environment=") :])):
                name, _, val = word.partition("=")
                env[name] = val
    program, argv = parse_exec_start(exec_values[0])
    return program, argv, env


def verify_unit(path: Path) -> subprocess.CompletedProcess[str]:
    """`systemd-analyze verify --user` without a running systemd (it needs only an
    XDG_RUNTIME_DIR: the test's own); it also checks that the program is executable. A setting
    it ignores with a warning names the file: that fails too. A missing tool fails in CI."""
    tool = shutil.which("systemd-analyze") or (
        "/usr/bin/systemd-analyze" if os.path.exists("/usr/bin/systemd-analyze") else None
    )
    if tool is None:
        missing_component("systemd-analyze is not installed (Debian: systemd)")
    assert tool is not None
    done = subprocess.run(
        [tool, "verify", "--user", "--man=no", "--generators=no", str(path)],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    if done.returncode == 0 and path.name in done.stdout + done.stderr:
        return subprocess.CompletedProcess(done.args, 1, done.stdout, done.stderr)
    return done


def awkward_venv(root: Path, name: str = "My Tools 100% $HOME ${X} é 日本") -> Path:
    """A working copy of this venv's interpreter at an awkward path (spaces, `%`, `$`, non-ASCII):
    pyvenv.cfg beside bin/, lib/ linked, so `python -m gpu_companion` runs from there. Outside a
    venv, one that sees the interpreter's own site-packages."""
    venv = root / name
    (venv / "bin").mkdir(parents=True)
    prefix = Path(sys.prefix)
    if sys.prefix != sys.base_prefix:
        shutil.copy(prefix / "pyvenv.cfg", venv / "pyvenv.cfg")
        (venv / "lib").symlink_to(prefix / "lib")
    else:
        (venv / "pyvenv.cfg").write_text(
            f"home = {Path(os.path.realpath(sys.executable)).parent}\n"
            "include-system-site-packages = true\n"
        )
    (venv / "bin" / "python").symlink_to(os.path.realpath(sys.executable))
    return venv / "bin" / "python"


AWKWARD_DATA = "Data \"quoted\" 'single' back\\slash 50% $HOME ${X} é 日本"


# --- the command and its environment ---------------------------------------------------


def test_watch_command_for_a_source_install_and_a_bundle():
    assert watch_command(frozen=False, executable="/v/bin/python") == [
        "/v/bin/python", "-m", "gpu_companion", "watch",
    ]  # fmt: skip
    assert watch_command(12.5, frozen=True, executable="/opt/gc/gpu-companion") == [
        "/opt/gc/gpu-companion", "watch", "--every", "12.5",
    ]  # fmt: skip


def test_only_a_non_default_data_location_is_pinned(tmp_path):
    home = tmp_path / "h"
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),  # the default: not pinned
        "XDG_DATA_HOME": "/srv/data",
        "XDG_STATE_HOME": "",
        "XDG_CACHE_HOME": "/elsewhere",  # AppPaths does not read it
    }
    assert data_environment(env, home, "linux") == {"XDG_DATA_HOME": "/srv/data"}
    env["GPU_COMPANION_HOME"] = "rel/dir"  # a service runs elsewhere: made absolute
    pinned = data_environment(env, home, "linux")
    assert pinned["GPU_COMPANION_HOME"] == os.path.abspath("rel/dir")
    assert data_environment(env, home, "darwin") == {
        "GPU_COMPANION_HOME": os.path.abspath("rel/dir")
    }


# --- systemd rendering -------------------------------------------------------------------


def test_the_unit_has_what_a_user_service_needs():
    text = render_systemd_unit(["/usr/bin/python3", "-m", "gpu_companion", "watch"], {})
    for line in (
        "After=network-online.target", "Wants=network-online.target", "Type=simple",
        "ExecStart=/usr/bin/python3 -m gpu_companion watch", "Restart=on-failure",
        "RestartSec=30", "StandardOutput=journal", "StandardError=journal",
        "WantedBy=default.target",
    ):  # fmt: skip
        assert line in text.splitlines()
    assert "Environment=" not in text


@pytest.mark.parametrize(
    "program",
    ["/usr/bin/python3", "/opt/My Apps/100% é/python", "/opt/$HOME/${X}/py thon", "/o/日本/py"],
)
def test_exec_start_reads_back_as_the_exact_argv(program):
    argv = [program, "-m", "gpu_companion", "watch", AWKWARD_ARG, "", "--every", "5"]
    text = render_systemd_unit(argv, {"GPU_COMPANION_HOME": "/d/" + AWKWARD_DATA})
    got_program, got_argv, env = parse_unit(text)
    assert got_program == program
    assert got_argv == argv
    assert env == {"GPU_COMPANION_HOME": "/d/" + AWKWARD_DATA}


@pytest.mark.parametrize("program", ['/opt/"q"/python', "/opt/it's/python", "/opt/a\\b/$x/py"])
def test_a_program_path_systemd_refuses_runs_through_env(program):
    argv = [program, "-m", "gpu_companion", "watch", AWKWARD_ARG]
    line = systemd_exec_line(argv)
    assert line.startswith(ENV_PROGRAM + " ")
    assert parse_exec_start(line) == (ENV_PROGRAM, [ENV_PROGRAM, *argv])


def test_a_program_path_env_cannot_run_either_is_refused_with_what_to_do():
    # a quote needs env, and env would read `NAME=VALUE` as an assignment
    with pytest.raises(ServiceUnitError, match="quote or backslash and '='"):
        systemd_exec_line(["/opt/it's/a=b/python", "watch"])


def test_relative_programs_and_line_breaks_are_refused():
    with pytest.raises(ServiceUnitError, match="absolute"):
        systemd_exec_line(["python", "watch"])
    with pytest.raises(ServiceUnitError, match="line break"):
        systemd_exec_line(["/usr/bin/python3", "wa\ntch"])
    with pytest.raises(ServiceUnitError, match="line break"):
        render_systemd_unit(["/usr/bin/python3"], {"GPU_COMPANION_HOME": "/a\nb"})


def test_systemd_analyze_accepts_the_unit_for_awkward_paths(tmp_path):
    python = awkward_venv(tmp_path)
    data = tmp_path / AWKWARD_DATA
    service = WatchService(
        platform="linux", home=tmp_path, env={"HOME": str(tmp_path),
        "GPU_COMPANION_HOME": str(data)}, runner=lambda argv, timeout: CommandResult(1),
    )  # fmt: skip
    argv = watch_command(5, frozen=False, executable=str(python))
    unit = tmp_path / "check" / UNIT_NAME
    unit.parent.mkdir()
    unit.write_bytes(service.render(argv))
    done = verify_unit(unit)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ExecStart=@" in unit.read_text()  # `$` in the program: argv[0] spelled apart
    program, got_argv, env = parse_unit(unit.read_text())
    assert program == str(python) and got_argv == argv
    assert env == {"GPU_COMPANION_HOME": str(data)}


def test_systemd_analyze_accepts_a_program_path_with_quotes_through_env(tmp_path):
    python = awkward_venv(tmp_path, 'it\'s "quoted" back\\slash')
    service = WatchService(
        platform="linux", home=tmp_path, env={"HOME": str(tmp_path)},
        runner=lambda argv, timeout: CommandResult(1),
    )  # fmt: skip
    argv = watch_command(5, frozen=False, executable=str(python))
    unit = tmp_path / "check" / UNIT_NAME
    unit.parent.mkdir()
    unit.write_bytes(service.render(argv))
    done = verify_unit(unit)
    assert done.returncode == 0, done.stdout + done.stderr
    assert parse_unit(unit.read_text())[:2] == (ENV_PROGRAM, [ENV_PROGRAM, *argv])


def test_systemd_analyze_rejects_a_quoted_program_path(tmp_path):
    """Why the env form above: systemd's own rule, not a guess."""
    bad = tmp_path / 'with "quote"'
    bad.mkdir()
    (bad / "python").symlink_to(os.path.realpath(sys.executable))
    unit = tmp_path / UNIT_NAME
    unit.write_text(
        f'[Service]\nExecStart="{str(bad / "python").replace(chr(34), chr(92) + chr(34))}"\n'
    )
    assert verify_unit(unit).returncode != 0


# --- systemd actions through an injected runner ---------------------------------------------


class Runner:
    """Records each argv; answers from a table of argv prefixes (longest match), else `default`."""

    def __init__(self, answers=None, default=None):  # type: ignore[no-untyped-def]
        self.calls: list[list[str]] = []
        self.timeouts: list[float] = []
        self.answers: dict[tuple[str, ...], CommandResult] = answers or {}
        self.default = default or CommandResult(0)

    def __call__(self, argv: list[str], timeout: float) -> CommandResult:
        assert isinstance(argv, list) and all(isinstance(a, str) for a in argv)
        assert timeout > 0
        self.calls.append(argv)
        self.timeouts.append(timeout)
        for n in range(len(argv), 0, -1):
            if tuple(argv[:n]) in self.answers:
                return self.answers[tuple(argv[:n])]
        return self.default


NO_BUS = CommandResult(1, "", "Failed to connect to bus: No medium found")
LINGER_NO = CommandResult(0, "Linger=no\n")
LINGER_YES = CommandResult(0, "Linger=yes\n")


def linux(tmp_path, runner, **env):  # type: ignore[no-untyped-def]
    home = tmp_path / "h"
    return WatchService(
        platform="linux", home=home, uid=1000, runner=runner,
        env={"HOME": str(home), "USER": "ana", **env},
        paths=AppPaths(tmp_path / "d", tmp_path / "c", tmp_path / "logs"),
    )  # fmt: skip


ARGV = ["/usr/bin/python3", "-m", "gpu_companion", "watch", "--every", "30"]


def test_install_with_a_user_manager_reloads_enables_and_starts(tmp_path):
    runner = Runner({("loginctl",): LINGER_YES, ("systemctl", "--user", "is-active"):
                     CommandResult(3, "inactive\n")})  # fmt: skip
    svc = linux(tmp_path, runner)
    out = svc.install(ARGV)
    assert out.code == EXIT_OK, out.text
    path = tmp_path / "h" / ".config" / "systemd" / "user" / UNIT_NAME
    assert svc.unit_path() == path and path.read_bytes() == svc.render(ARGV)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert runner.calls == [
        ["systemctl", "--user", "show-environment"],
        ["systemctl", "--user", "daemon-reload"],
        ["systemctl", "--user", "is-active", UNIT_NAME],
        ["systemctl", "--user", "enable", "--now", UNIT_NAME],
        ["loginctl", "show-user", "ana", "-p", "Linger"],
    ]
    assert "enabled and started" in out.text and "enable-linger" not in out.text
    assert "journalctl --user -u gpu-companion-watch" in out.text


def test_install_says_linger_when_it_is_off_or_unknown(tmp_path):
    out = linux(tmp_path, Runner({("loginctl",): LINGER_NO})).install(ARGV)
    assert "loginctl enable-linger ana" in out.text and "is off" in out.text
    out = linux(tmp_path, Runner({("loginctl",): NO_BUS})).install(ARGV)
    assert "loginctl enable-linger ana" in out.text and "could not be checked" in out.text


def test_install_without_a_user_manager_writes_and_says_what_to_run(tmp_path):
    old = os.umask(0o077)
    try:
        runner = Runner({("systemctl",): NO_BUS, ("loginctl",): NO_BUS})
        out = linux(tmp_path, runner).install(ARGV)
    finally:
        os.umask(old)
    assert out.code == EXIT_OK
    path = tmp_path / "h" / ".config" / "systemd" / "user" / UNIT_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o644  # readable by the manager despite umask
    assert f"wrote {path}" in out.text and "No user systemd answers here" in out.text
    assert "Failed to connect to bus" in out.text
    assert "systemctl --user daemon-reload" in out.text
    assert f"systemctl --user enable --now {UNIT_NAME}" in out.text
    assert [c[:3] for c in runner.calls] == [["systemctl", "--user", "show-environment"],
                                             ["loginctl", "show-user", "ana"]]  # fmt: skip
    assert not list(path.parent.glob(".*"))  # no temp file left


def test_installing_again_rewrites_only_a_changed_unit_and_restarts_a_running_one(tmp_path):
    runner = Runner({("loginctl",): LINGER_YES, ("systemctl", "--user", "is-active"):
                     CommandResult(0, "active\n")})  # fmt: skip
    svc = linux(tmp_path, runner)
    assert svc.install(ARGV).code == EXIT_OK
    runner.calls.clear()
    again = svc.install(ARGV)
    assert again.lines[0].startswith("unchanged:")
    assert ["systemctl", "--user", "restart", UNIT_NAME] not in runner.calls
    changed = svc.install([*ARGV[:-1], "60"])
    assert changed.lines[0].startswith("updated ")
    assert ["systemctl", "--user", "restart", UNIT_NAME] in runner.calls
    assert "--every 60" in svc.unit_path().read_text()


def test_a_failing_enable_is_a_failure_with_systemds_words(tmp_path):
    runner = Runner({("systemctl", "--user", "enable"): CommandResult(1, "", "Unit is masked.")})
    out = linux(tmp_path, runner).install(ARGV)
    assert out.code == EXIT_FAILED and "Unit is masked." in out.text


def test_uninstall_disables_stops_removes_and_reloads(tmp_path):
    runner = Runner({("loginctl",): LINGER_YES})
    svc = linux(tmp_path, runner)
    svc.install(ARGV)
    runner.calls.clear()
    out = svc.uninstall()
    assert out.code == EXIT_OK, out.text
    assert not svc.unit_path().exists()
    assert runner.calls == [
        ["systemctl", "--user", "show-environment"],
        ["systemctl", "--user", "disable", "--now", UNIT_NAME],
        ["systemctl", "--user", "daemon-reload"],
    ]
    assert "removed" in out.text
    assert "nothing to remove" in svc.uninstall().text


def test_uninstall_without_a_manager_also_removes_the_enable_link(tmp_path):
    svc = linux(tmp_path, Runner({("systemctl",): NO_BUS, ("loginctl",): NO_BUS}))
    svc.install(ARGV)
    link = svc.unit_path().parent / "default.target.wants" / UNIT_NAME
    link.parent.mkdir()
    link.symlink_to(svc.unit_path())  # what `enable` made in a session
    out = svc.uninstall()
    assert out.code == EXIT_OK
    assert not svc.unit_path().exists() and not link.is_symlink()
    assert "systemctl --user stop" in out.text


def test_status_reports_the_file_the_state_and_the_logs(tmp_path):
    runner = Runner({("systemctl", "--user", "is-enabled"): CommandResult(0, "enabled\n"),
                     ("systemctl", "--user", "is-active"): CommandResult(0, "active\n"),
                     ("loginctl",): LINGER_YES})  # fmt: skip
    svc = linux(tmp_path, runner)
    assert "not installed" in svc.status().text
    svc.install(ARGV)
    out = svc.status()
    assert out.code == EXIT_OK
    assert f"installed: {svc.unit_path()}" in out.lines
    assert "enabled: enabled" in out.lines and "active: active" in out.lines
    assert "journalctl --user -u gpu-companion-watch" in out.text
    assert str(tmp_path / "logs" / "gpu-companion.log") in out.text
    offline = linux(tmp_path, Runner({("systemctl",): NO_BUS})).status()
    assert "unknown (no user systemd answers here" in offline.text


# --- macOS -------------------------------------------------------------------------------


def mac(tmp_path, runner, **env):  # type: ignore[no-untyped-def]
    home = tmp_path / "Users" / "ana"
    return WatchService(
        platform="darwin", home=home, uid=501, runner=runner, env={"HOME": str(home), **env},
        paths=AppPaths(tmp_path / "d", tmp_path / "c", tmp_path / "Logs" / "gpu-companion"),
    )  # fmt: skip


def test_the_launch_agent_round_trips_through_plistlib(tmp_path):
    data = tmp_path / AWKWARD_DATA
    svc = mac(tmp_path, Runner(), GPU_COMPANION_HOME=str(data), XDG_DATA_HOME="/ignored/on/mac")
    argv = watch_command(
        5, frozen=True, executable="/Applications/GPU Companion.app/x/gpu-companion"
    )
    plist = plistlib.loads(svc.render(argv))
    log = str(tmp_path / "Logs" / "gpu-companion" / "watch-service.log")
    assert plist == {
        "Label": MAC_LABEL,
        "ProgramArguments": argv,
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": log,
        "StandardErrorPath": log,
        "ProcessType": "Background",
        "EnvironmentVariables": {"GPU_COMPANION_HOME": str(data)},
    }
    assert (
        svc.unit_path() == tmp_path / "Users/ana/Library/LaunchAgents/org.gpucompanion.watch.plist"
    )


def test_mac_install_uninstall_and_status_call_launchctl_with_the_right_argv(tmp_path):
    runner = Runner({("launchctl", "print"): CommandResult(113, "", "Could not find service")})
    svc = mac(tmp_path, runner)
    out = svc.install(ARGV)
    assert out.code == EXIT_OK, out.text
    plist = str(svc.unit_path())
    assert runner.calls == [
        ["launchctl", "print", f"gui/501/{MAC_LABEL}"],
        ["launchctl", "bootstrap", "gui/501", plist],
    ]
    assert stat.S_IMODE(svc.unit_path().stat().st_mode) == 0o644
    assert (tmp_path / "Logs" / "gpu-companion").is_dir()
    # loaded now; a changed agent is booted out and bootstrapped again
    runner.answers[("launchctl", "print")] = CommandResult(0, "\tstate = running\n")
    runner.calls.clear()
    assert svc.install(ARGV).code == EXIT_OK
    assert runner.calls == [["launchctl", "print", f"gui/501/{MAC_LABEL}"]]  # unchanged
    runner.calls.clear()
    svc.install([*ARGV[:-1], "60"])
    assert runner.calls[1:] == [
        ["launchctl", "bootout", f"gui/501/{MAC_LABEL}"],
        ["launchctl", "bootstrap", "gui/501", plist],
    ]
    runner.calls.clear()
    status = svc.status()
    assert runner.calls == [["launchctl", "print", f"gui/501/{MAC_LABEL}"]]
    assert "state = running" in status.text and "watch-service.log" in status.text
    runner.calls.clear()
    out = svc.uninstall()
    assert runner.calls == [["launchctl", "bootout", f"gui/501/{MAC_LABEL}"]]
    assert out.code == EXIT_OK and not svc.unit_path().exists()


def test_mac_falls_back_to_load_and_unload_and_reports_when_both_fail(tmp_path):
    failed = CommandResult(5, "", "Input/output error")
    runner = Runner(
        {("launchctl", "print"): CommandResult(113), ("launchctl", "bootstrap"): failed}
    )
    svc = mac(tmp_path, runner)
    plist = str(svc.unit_path())
    assert svc.install(ARGV).code == EXIT_OK  # an older launchctl: `load -w` works
    assert runner.calls[-1] == ["launchctl", "load", "-w", plist]
    runner.answers[("launchctl", "bootout")] = CommandResult(3, "", "No such process")
    runner.calls.clear()
    assert svc.uninstall().code == EXIT_OK and not svc.unit_path().exists()
    assert runner.calls == [
        ["launchctl", "bootout", f"gui/501/{MAC_LABEL}"],
        ["launchctl", "unload", "-w", plist],
    ]
    runner.answers[("launchctl", "load")] = CommandResult(1, "", "Load failed: 5")
    out = svc.install(ARGV)
    assert out.code == EXIT_FAILED
    assert "Input/output error" in out.text and "Load failed: 5" in out.text


# --- Windows -----------------------------------------------------------------------------


def test_windows_is_not_supported_yet_with_exit_code_2(tmp_path):
    runner = Runner()
    svc = WatchService(platform="win32", home=tmp_path / "win", env={}, runner=runner)
    for out in (svc.install(ARGV), svc.uninstall(), svc.status()):
        assert out.code == EXIT_UNSUPPORTED
        assert "not supported on win32 yet" in out.text and "Task Scheduler" in out.text
    assert runner.calls == [] and not (tmp_path / "win").exists()


# --- the real runner ---------------------------------------------------------------------


def test_the_real_runner_makes_a_missing_tool_and_a_timeout_results():
    assert run_command(["gpu-companion-no-such-tool"], 5).returncode == 127
    slow = run_command([sys.executable, "-c", "import time; time.sleep(5)"], 0.2)
    assert slow.returncode == 124 and "did not answer within 0.2 s" in slow.said
    assert run_command([sys.executable, "-c", "print('hi')"], 30) == CommandResult(0, "hi\n")
