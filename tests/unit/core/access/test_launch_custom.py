"""The Terminal setting offers this system's installed terminals only, plus a custom command: an
argv template with {ssh} or {alias}, split with shlex (never a shell), validated, and launched."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gpu_companion.core.access.launch import (
    Launcher,
    LaunchPrefs,
    LaunchProblem,
    custom_terminal_argv,
    parse_custom_terminal,
    terminal_choices,
)
from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.ssh.config_writer import HostEntry, SshConfigWriter


def which_of(*present: str):  # type: ignore[no-untyped-def]
    return lambda name: f"/usr/bin/{name}" if name in present else None


def test_only_this_systems_installed_terminals_are_offered() -> None:
    linux = terminal_choices(which_of("xterm", "konsole", "osascript", "wt", "cmd"), "linux")
    assert linux == ["auto", "konsole", "xterm", "custom"]  # no macOS or Windows entries
    assert terminal_choices(which_of("osascript", "xterm"), "darwin") == [
        "auto", "macos-terminal", "custom",
    ]  # fmt: skip
    assert terminal_choices(which_of("cmd"), "win32") == ["auto", "cmd", "custom"]
    assert terminal_choices(which_of(), "linux") == ["auto", "custom"]


@pytest.mark.parametrize(
    ("template", "why"),
    [
        ("", "Give the command"),
        ("   ", "Give the command"),
        ("kitty", "Put {ssh}"),
        ("kitty --title x", "Put {ssh}"),
        ("{ssh}", "Put {ssh}"),
        ("{alias} x {ssh}", "first word is the program"),
        ("kitty 'unclosed {ssh}", "cannot be read"),
        ("kitty -- {ssh}\nrm -rf ~", "control characters"),
        ("kitty -- {cmd}", "Unknown placeholder {cmd}"),
    ],
)
def test_bad_custom_commands_are_refused_with_a_reason(template: str, why: str) -> None:
    with pytest.raises(ValidationError, match=why.replace("{", r"\{").replace("}", r"\}")):
        parse_custom_terminal(template)


def test_the_template_is_filled_word_by_word_never_through_a_shell() -> None:
    words = parse_custom_terminal('alacritty --title "GPU {alias}" -e {ssh}')
    assert words == ["alacritty", "--title", "GPU {alias}", "-e", "{ssh}"]
    command = ["ssh", "-t", "gpu1", "exec tmux new-session -A -s main; echo 'x y'"]
    argv = custom_terminal_argv(words, command, "gpu1")
    assert argv == ["alacritty", "--title", "GPU gpu1", "-e", *command]
    # inside a longer word {ssh} is one quoted string; `;` and `$` stay data
    embedded = custom_terminal_argv(["t", "--command={ssh}"], ["ssh", "a;b"], "a")
    assert embedded == ["t", "--command=ssh 'a;b'"]


def test_prefs_keep_a_valid_custom_command_only(store) -> None:  # type: ignore[no-untyped-def]
    prefs = LaunchPrefs(store)
    assert prefs.custom_terminal == ""
    prefs.terminal = "custom"
    prefs.custom_terminal = "  kitty -- {ssh} "
    with pytest.raises(ValidationError):
        prefs.custom_terminal = "kitty"
    assert (LaunchPrefs(store).terminal, LaunchPrefs(store).custom_terminal) == (
        "custom", "kitty -- {ssh}",
    )  # fmt: skip


def test_a_custom_terminal_is_launched_with_the_filled_argv(tmp_path: Path, store) -> None:  # type: ignore[no-untyped-def]
    record = tmp_path / "argv.json"
    program = tmp_path / "bin" / "my term"
    program.parent.mkdir()
    program.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps(sys.argv))\n"
    )
    program.chmod(0o755)
    writer = SshConfigWriter(tmp_path / "ssh")
    writer.write([HostEntry("gpu1", "203.0.113.7")])
    prefs = LaunchPrefs(store)
    prefs.terminal = "custom"
    launcher = Launcher(writer, prefs, platform="linux")
    with pytest.raises(LaunchProblem, match="No custom terminal command is set"):
        launcher.plan_terminal("gpu1")
    prefs.custom_terminal = f"'{program}' --title 'GPU {{alias}}; $(id)' -- {{ssh}}"
    plan = launcher.plan_terminal("gpu1", tmux=True)
    assert plan.what == "a terminal on gpu1 (tmux session main)"
    launcher.launch(plan).wait(15)
    argv = json.loads(record.read_text())
    assert argv[:4] == [str(program), "--title", "GPU gpu1; $(id)", "--"]
    assert argv[4:7] == ["ssh", "-t", "gpu1"] and "tmux new-session -A -s main" in argv[7]
    prefs.custom_terminal = "no-such-terminal-here -e {ssh}"
    with pytest.raises(LaunchProblem, match="'no-such-terminal-here' was not found"):
        launcher.plan_terminal("gpu1")
