"""Open a terminal running `ssh ALIAS` (optionally inside a named tmux session on the host) or VS
Code on the host, through the user's own ssh config. Each launch is prepared as data first (the
argv, or the reason it cannot work), so tests and the UI can check it before anything runs."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.validation import validate_alias
from gpu_companion.core.ssh.config_writer import SshConfigWriter
from gpu_companion.core.storage.store import Store

Which = Callable[[str], "str | None"]

# the setting's choices, in the order "auto" tries them on each system
TERMINALS: dict[str, str] = {
    "auto": "Automatic",
    "x-terminal-emulator": "System default (x-terminal-emulator)",
    "gnome-terminal": "GNOME Terminal",
    "konsole": "Konsole",
    "xterm": "xterm",
    "macos-terminal": "Terminal (macOS)",
    "windows-terminal": "Windows Terminal",
    "cmd": "Command Prompt (Windows)",
}
AUTO_ORDER = {
    "linux": ("x-terminal-emulator", "gnome-terminal", "konsole", "xterm"),
    "darwin": ("macos-terminal",),
    "win32": ("windows-terminal", "cmd"),
}
_EXECUTABLE = {
    "macos-terminal": "osascript",
    "windows-terminal": "wt",
    "cmd": "cmd",
}
_TMUX_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
DEFAULT_TMUX = "main"


class LaunchProblem(UserError):
    """Why a terminal or VS Code cannot be opened, and what to do."""


@dataclass(frozen=True)
class LaunchPlan:
    argv: list[str]
    what: str  # e.g. "a terminal on gpu1 (tmux session main)"


def validate_tmux_session(name: str) -> str:
    name = name.strip()
    if not _TMUX_RE.match(name):
        raise ValidationError(
            "tmux_session", "A tmux session name is 1-32 letters, digits, '-' or '_'."
        )
    return name


def validate_remote_path(path: str) -> str:
    """An absolute path on the host for VS Code to open (no control characters, no option)."""
    path = path.strip()
    if not path.startswith("/") or any(ord(c) < 32 or c == "\x7f" for c in path):
        raise ValidationError("path", "Give an absolute path on the host, e.g. /root/project.")
    return path


def ssh_command(alias: str, tmux_session: str = "") -> list[str]:
    """`ssh ALIAS`, or one that attaches to (or creates) a tmux session and falls back to a
    plain login shell where the host has no tmux."""
    alias = validate_alias(alias)
    if not tmux_session:
        return ["ssh", alias]
    name = shlex.quote(validate_tmux_session(tmux_session))
    remote = (
        f"command -v tmux >/dev/null 2>&1 && exec tmux new-session -A -s {name}; "
        "echo 'tmux is not installed on this host: a plain shell instead.'; "
        'exec "${SHELL:-/bin/sh}" -l'
    )
    return ["ssh", "-t", alias, remote]


def terminal_argv(kind: str, command: list[str], executable: str) -> list[str]:
    """How each terminal is told to run `command` (an argv, never a shell string on Unix)."""
    if kind == "gnome-terminal":
        return [executable, "--", *command]
    if kind in ("x-terminal-emulator", "konsole", "xterm"):
        return [executable, "-e", *command]
    if kind == "macos-terminal":
        script = " ".join(shlex.quote(w) for w in command).replace("\\", "\\\\").replace('"', '\\"')
        return [
            executable,
            "-e",
            f'tell application "Terminal" to do script "{script}"',
            "-e",
            'tell application "Terminal" to activate',
        ]
    if kind == "windows-terminal":
        return [executable, *command]
    if kind == "cmd":  # `start` opens a new console window; "" is its title
        return [executable, "/c", "start", "", *command]
    raise LaunchProblem(f"Unknown terminal {kind!r}.", hint="Choose one in Settings.")


def find_terminal(choice: str, which: Which = shutil.which, platform: str = "") -> tuple[str, str]:
    """The terminal kind and its executable for the setting `choice` ("auto" tries in order)."""
    platform = platform or sys.platform
    key = "linux" if platform.startswith(("linux", "freebsd")) else platform
    kinds = AUTO_ORDER.get(key, AUTO_ORDER["linux"]) if choice == "auto" else (choice,)
    for kind in kinds:
        found = which(_EXECUTABLE.get(kind, kind))
        if found:
            return kind, found
    names = ", ".join(_EXECUTABLE.get(k, k) for k in kinds)
    raise LaunchProblem(
        f"No terminal program found (looked for {names}).",
        hint="Install one, or choose the one you use in Settings → Terminal.",
    )


def check_ssh_config(writer: SshConfigWriter, alias: str) -> None:
    """`ssh ALIAS` in a terminal or VS Code reads the user's own ~/.ssh/config: it must include
    the managed file, and the managed file must name the host."""
    how = (
        "Set it up with “Set up `ssh ALIAS`” on the Keys page, or run: "
        "gpu-companion ssh-config --write"
    )
    if not writer.is_installed():
        raise LaunchProblem(
            f"`ssh {alias}` does not work in a terminal yet: your ~/.ssh/config does not "
            "include GPU Companion's hosts.",
            hint=how + ".",
        )
    text = writer.config_path.read_text(encoding="utf-8", errors="replace")
    if f"\nHost {alias}\n" not in f"\n{text}":
        raise LaunchProblem(
            f"The generated ssh config has no entry for {alias} (its platform may lack a key, "
            "or your own config defines the same alias).",
            hint=how + " and read what it says about this host.",
        )


class LaunchPrefs:
    """The terminal to open and the tmux session to attach to (kept in the settings table)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @property
    def terminal(self) -> str:
        value = self.store.get_setting("access.terminal", "auto") or "auto"
        return value if value in TERMINALS else "auto"

    @terminal.setter
    def terminal(self, value: str) -> None:
        if value not in TERMINALS:
            raise ValidationError("terminal", f"Unknown terminal {value!r}.")
        self.store.set_setting("access.terminal", value)

    @property
    def tmux_session(self) -> str:
        return self.store.get_setting("access.tmux_session", DEFAULT_TMUX) or DEFAULT_TMUX

    @tmux_session.setter
    def tmux_session(self, value: str) -> None:
        self.store.set_setting("access.tmux_session", validate_tmux_session(value))

    def code_path(self, host_id: int, user: str) -> str:
        default = "/root" if user == "root" else f"/home/{user}"
        return self.store.get_setting(f"access.code_path.{host_id}", default) or default

    def set_code_path(self, host_id: int, path: str) -> None:
        self.store.set_setting(f"access.code_path.{host_id}", validate_remote_path(path))


class Launcher:
    """Prepares and starts the terminal and VS Code launches for the hosts in the user's config."""

    def __init__(
        self,
        writer: SshConfigWriter,
        prefs: LaunchPrefs,
        which: Which = shutil.which,
        platform: str = "",
    ) -> None:
        self.writer = writer
        self.prefs = prefs
        self.which = which
        self.platform = platform

    def plan_terminal(self, alias: str, tmux: bool = False, terminal: str = "") -> LaunchPlan:
        command = ssh_command(alias, self.prefs.tmux_session if tmux else "")
        check_ssh_config(self.writer, alias)
        kind, exe = find_terminal(terminal or self.prefs.terminal, self.which, self.platform)
        where = f" (tmux session {self.prefs.tmux_session})" if tmux else ""
        return LaunchPlan(terminal_argv(kind, command, exe), f"a terminal on {alias}{where}")

    def plan_code(self, alias: str, path: str) -> LaunchPlan:
        alias = validate_alias(alias)
        path = validate_remote_path(path)
        code = self.which("code")
        if not code:
            raise LaunchProblem(
                "VS Code's `code` command was not found.",
                hint="Install VS Code with its Remote - SSH extension; on macOS run “Shell "
                "Command: Install 'code' command in PATH” from VS Code's command palette.",
            )
        check_ssh_config(self.writer, alias)
        return LaunchPlan(
            [code, "--remote", f"ssh-remote+{alias}", path], f"VS Code on {alias}:{path}"
        )

    @staticmethod
    def launch(plan: LaunchPlan) -> subprocess.Popen[bytes]:
        """Start it detached from the app: it keeps running when the app quits."""
        try:
            return subprocess.Popen(
                plan.argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise LaunchProblem(f"Could not start {plan.argv[0]}: {exc.strerror or exc}.") from exc
