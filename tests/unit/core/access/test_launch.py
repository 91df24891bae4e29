"""Terminal and VS Code launches prepared as data: the argv for each terminal and system, the tmux
session, and the refusals (no ssh config yet, no such alias in it, no terminal, bad names)."""

from __future__ import annotations

import shlex

import pytest

from gpu_companion.core.access.launch import (
    Launcher,
    LaunchPrefs,
    LaunchProblem,
    find_terminal,
    ssh_command,
    terminal_argv,
    validate_remote_path,
)
from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.ssh.config_writer import HostEntry, SshConfigWriter


def which_of(*present: str):
    return lambda name: f"/usr/bin/{name}" if name in present else None


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("x-terminal-emulator", ["/t", "-e", "ssh", "gpu1"]),
        ("xterm", ["/t", "-e", "ssh", "gpu1"]),
        ("konsole", ["/t", "-e", "ssh", "gpu1"]),
        ("gnome-terminal", ["/t", "--", "ssh", "gpu1"]),
        ("windows-terminal", ["/t", "ssh", "gpu1"]),
        ("cmd", ["/t", "/c", "start", "", "ssh", "gpu1"]),
    ],
)
def test_each_terminal_gets_the_ssh_argv(kind, expected):
    assert terminal_argv(kind, ["ssh", "gpu1"], "/t") == expected


def test_macos_terminal_runs_the_command_through_osascript():
    argv = terminal_argv("macos-terminal", ssh_command("gpu1", "work"), "/usr/bin/osascript")
    assert argv[:2] == ["/usr/bin/osascript", "-e"]
    assert argv[2].startswith('tell application "Terminal" to do script "ssh -t gpu1 ')
    assert argv[2].count('"') - argv[2].count('\\"') == 4  # inner quotes escaped
    assert argv[3:] == ["-e", 'tell application "Terminal" to activate']


def test_tmux_session_is_attached_or_made_with_a_plain_shell_fallback():
    argv = ssh_command("gpu1", "train-1")
    assert argv[:3] == ["ssh", "-t", "gpu1"]
    words = shlex.split(argv[3])
    assert words[:6] == ["command", "-v", "tmux", ">/dev/null", "2>&1", "&&"]
    assert "new-session" in words and "train-1;" in words
    assert argv[3].endswith('exec "${SHELL:-/bin/sh}" -l')


@pytest.mark.parametrize("name", ["a b", "x;rm", "$(id)", "a" * 33])
def test_bad_tmux_names_are_refused(name):
    with pytest.raises(ValidationError):
        ssh_command("gpu1", name)


@pytest.mark.parametrize("alias", ["-oProxyCommand=x", "a b", "a\nHost *"])
def test_bad_aliases_are_refused(alias):
    with pytest.raises(ValidationError):
        ssh_command(alias)


def test_auto_tries_the_system_order():
    assert find_terminal("auto", which_of("xterm", "konsole"), "linux") == (
        "konsole",
        "/usr/bin/konsole",
    )
    assert find_terminal("auto", which_of("osascript"), "darwin")[0] == "macos-terminal"
    assert find_terminal("auto", which_of("cmd"), "win32")[0] == "cmd"
    assert find_terminal("auto", which_of("wt", "cmd"), "win32")[0] == "windows-terminal"
    with pytest.raises(LaunchProblem, match="looked for x-terminal-emulator, gnome-terminal"):
        find_terminal("auto", which_of(), "linux")
    with pytest.raises(LaunchProblem, match=r"looked for xterm\)"):
        find_terminal("xterm", which_of("konsole"), "linux")


@pytest.mark.parametrize("path", ["relative/dir", "", "/a\nb", "-r"])
def test_bad_remote_paths_are_refused(path):
    with pytest.raises(ValidationError):
        validate_remote_path(path)


def test_launches_need_the_written_ssh_config_with_the_alias(tmp_path, store):
    writer = SshConfigWriter(tmp_path)
    launcher = Launcher(writer, LaunchPrefs(store), which_of("xterm", "code"), "linux")
    with pytest.raises(LaunchProblem, match="does not include GPU Companion's hosts") as info:
        launcher.plan_terminal("gpu1")
    assert "gpu-companion ssh-config --write" in str(info.value)
    with pytest.raises(LaunchProblem, match="does not include"):
        launcher.plan_code("gpu1", "/root")

    writer.write([HostEntry("gpu2", "203.0.113.9")])
    with pytest.raises(LaunchProblem, match="has no entry for gpu1"):
        launcher.plan_terminal("gpu1")

    writer.write([HostEntry("gpu1", "203.0.113.7"), HostEntry("gpu10", "203.0.113.8")])
    plan = launcher.plan_terminal("gpu1", tmux=True)
    assert plan.argv[:5] == ["/usr/bin/xterm", "-e", "ssh", "-t", "gpu1"]
    assert plan.what == "a terminal on gpu1 (tmux session main)"
    assert launcher.plan_code("gpu1", "/srv/x").argv == [
        "/usr/bin/code",
        "--remote",
        "ssh-remote+gpu1",
        "/srv/x",
    ]


def test_no_code_command_is_explained(tmp_path, store):
    launcher = Launcher(SshConfigWriter(tmp_path), LaunchPrefs(store), which_of(), "linux")
    with pytest.raises(LaunchProblem, match="`code` command was not found"):
        launcher.plan_code("gpu1", "/root")


def test_prefs_keep_the_choice_and_refuse_unknown_values(store):
    prefs = LaunchPrefs(store)
    assert (prefs.terminal, prefs.tmux_session) == ("auto", "main")
    prefs.terminal = "konsole"
    prefs.tmux_session = "train"
    assert (LaunchPrefs(store).terminal, LaunchPrefs(store).tmux_session) == ("konsole", "train")
    with pytest.raises(ValidationError):
        prefs.terminal = "bash -c"
    with pytest.raises(ValidationError):
        prefs.tmux_session = "a b"
    assert prefs.tmux_session == "train"
    assert prefs.code_path(3, "root") == "/root" and prefs.code_path(3, "ubuntu") == "/home/ubuntu"
    prefs.set_code_path(3, "/workspace")
    assert prefs.code_path(3, "root") == "/workspace"
