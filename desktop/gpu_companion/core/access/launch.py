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
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.common.validation import validate_alias
from gpu_companion.core.ssh.config_writer import SshConfigWriter
from gpu_companion.core.storage.store import Store

Which = Callable[[str], "str | None"]

# the setting's choices, in the order "auto" tries them on each system; the labels are English
# (N_), shown through _()
TERMINALS: dict[str, str] = {
    "auto": N_("Automatic"),
    "x-terminal-emulator": N_("System default (x-terminal-emulator)"),
    "gnome-terminal": "GNOME Terminal",
    "konsole": "Konsole",
    "xterm": "xterm",
    "macos-terminal": N_("Terminal (macOS)"),
    "windows-terminal": "Windows Terminal",
    "cmd": N_("Command Prompt (Windows)"),
    "custom": N_("Custom command…"),
}
CUSTOM = "custom"
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
PLACEHOLDERS = ("{ssh}", "{alias}")
_PLACEHOLDER_RE = re.compile(r"\{[^{}]*\}")


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
            "tmux_session", _("A tmux session name is 1-32 letters, digits, '-' or '_'.")
        )
    return name


def validate_remote_path(path: str) -> str:
    """An absolute path on the host for VS Code to open (no control characters, no option)."""
    path = path.strip()
    if not path.startswith("/") or any(ord(c) < 32 or c == "\x7f" for c in path):
        raise ValidationError(
            "path", _("Give an absolute path on the host, e.g. /root/project.")
        )
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
    raise LaunchProblem(
        _("Unknown terminal {kind}.").format(kind=repr(kind)), hint=_("Choose one in Settings.")
    )


def system_key(platform: str = "") -> str:
    """The AUTO_ORDER key of this (or the given) system: linux, darwin or win32."""
    platform = platform or sys.platform
    key = "linux" if platform.startswith(("linux", "freebsd")) else platform
    return key if key in AUTO_ORDER else "linux"


def terminal_choices(which: Which = shutil.which, platform: str = "") -> list[str]:
    """What the setting offers here: "auto", this system's terminals that are installed, and a
    custom command (never another system's terminals)."""
    kinds = [k for k in AUTO_ORDER[system_key(platform)] if which(_EXECUTABLE.get(k, k))]
    return ["auto", *kinds, CUSTOM]


def parse_custom_terminal(template: str) -> list[str]:
    """A custom terminal command: an argv template split like a shell would (shlex, but never
    run by one) with `{ssh}` (the ssh command) or `{alias}` (the host's alias) in it."""
    text = template.strip()
    if not text:
        raise ValidationError("custom_terminal", _("Give the command that opens your terminal."))
    if any(ord(c) < 32 or c == "\x7f" for c in text):
        raise ValidationError(
            "custom_terminal", _("The command cannot contain control characters.")
        )
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise ValidationError(
            "custom_terminal", _("The command cannot be read: {error}.").format(error=exc)
        ) from None
    if not words:
        raise ValidationError("custom_terminal", _("Give the command that opens your terminal."))
    unknown = sorted({m for w in words for m in _PLACEHOLDER_RE.findall(w)} - set(PLACEHOLDERS))
    if unknown:
        raise ValidationError(
            "custom_terminal",
            _("Unknown placeholder {names}: use {ssh} or {alias}.").format(
                names=", ".join(unknown), ssh="{ssh}", alias="{alias}"
            ),
        )
    if not any(p in w for w in words[1:] for p in PLACEHOLDERS):
        raise ValidationError(
            "custom_terminal",
            # i18n: {ssh} and {alias} are literal text the user types, not placeholders to fill
            _(
                "Put {ssh} (the ssh command) or {alias} (the host) in the command's arguments, "
                "e.g. kitty -- {ssh}."
            ),
        )
    if any(p in words[0] for p in PLACEHOLDERS):
        raise ValidationError(
            "custom_terminal", _("The command's first word is the program.")
        )
    return words


def custom_terminal_argv(words: list[str], command: list[str], alias: str) -> list[str]:
    """Fill the template: a word that is exactly `{ssh}` becomes the ssh command's words; inside
    a longer word it becomes that command quoted as one string; `{alias}` the alias."""
    out: list[str] = []
    for word in words:
        if word == "{ssh}":
            out.extend(command)
            continue
        out.append(word.replace("{ssh}", shlex.join(command)).replace("{alias}", alias))
    return out


def find_terminal(choice: str, which: Which = shutil.which, platform: str = "") -> tuple[str, str]:
    """The terminal kind and its executable for the setting `choice` ("auto" tries in order)."""
    kinds = AUTO_ORDER[system_key(platform)] if choice == "auto" else (choice,)
    for kind in kinds:
        found = which(_EXECUTABLE.get(kind, kind))
        if found:
            return kind, found
    names = ", ".join(_EXECUTABLE.get(k, k) for k in kinds)
    raise LaunchProblem(
        _("No terminal program found (looked for {names}).").format(names=names),
        hint=_("Install one, or choose the one you use in Settings → Terminal."),
    )


def check_ssh_config(writer: SshConfigWriter, alias: str) -> None:
    """`ssh ALIAS` in a terminal or VS Code reads the user's own ~/.ssh/config: it must include
    the managed file, and the managed file must name the host."""
    if not writer.is_installed():
        raise LaunchProblem(
            _(
                "`ssh {alias}` does not work in a terminal yet: your ~/.ssh/config does not "
                "include GPU Companion's hosts."
            ).format(alias=alias),
            hint=_(
                "Set it up with “Set up `ssh ALIAS`” on the Keys page, or run: "
                "gpu-companion ssh-config --write."
            ),
        )
    text = writer.config_path.read_text(encoding="utf-8", errors="replace")
    if f"\nHost {alias}\n" not in f"\n{text}":
        raise LaunchProblem(
            _(
                "The generated ssh config has no entry for {alias} (its platform may lack a key, "
                "or your own config defines the same alias)."
            ).format(alias=alias),
            hint=_(
                "Set it up with “Set up `ssh ALIAS`” on the Keys page, or run: "
                "gpu-companion ssh-config --write and read what it says about this host."
            ),
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
            raise ValidationError(
                "terminal", _("Unknown terminal {kind}.").format(kind=repr(value))
            )
        self.store.set_setting("access.terminal", value)

    @property
    def custom_terminal(self) -> str:
        """The custom command's template as typed ("" when none was given)."""
        return self.store.get_setting("access.custom_terminal", "") or ""

    @custom_terminal.setter
    def custom_terminal(self, value: str) -> None:
        parse_custom_terminal(value)
        self.store.set_setting("access.custom_terminal", value.strip())

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
        choice = terminal or self.prefs.terminal
        if tmux:
            what = _("a terminal on {alias} (tmux session {session})").format(
                alias=alias, session=self.prefs.tmux_session
            )
        else:
            what = _("a terminal on {alias}").format(alias=alias)
        if choice == CUSTOM:
            return LaunchPlan(self._custom_argv(command, alias), what)
        kind, exe = find_terminal(choice, self.which, self.platform)
        return LaunchPlan(terminal_argv(kind, command, exe), what)

    def _custom_argv(self, command: list[str], alias: str) -> list[str]:
        template = self.prefs.custom_terminal
        if not template:
            raise LaunchProblem(
                _("No custom terminal command is set."),
                # i18n: {ssh} is literal text the user types, not a placeholder to fill
                hint=_("Give it in Settings → Terminal, e.g. kitty -- {ssh}."),
            )
        try:
            words = parse_custom_terminal(template)
        except ValidationError as exc:
            raise LaunchProblem(exc.message, hint=_("Correct it in Settings → Terminal.")) from None
        program = self.which(words[0])
        if not program:
            raise LaunchProblem(
                _("The custom terminal command's program {program} was not found.").format(
                    program=repr(words[0])
                ),
                hint=_("Give its full path, or install it, in Settings → Terminal."),
            )
        return custom_terminal_argv([program, *words[1:]], command, validate_alias(alias))

    def plan_code(self, alias: str, path: str) -> LaunchPlan:
        alias = validate_alias(alias)
        path = validate_remote_path(path)
        code = self.which("code")
        if not code:
            raise LaunchProblem(
                _("VS Code's `code` command was not found."),
                hint=_(
                    "Install VS Code with its Remote - SSH extension; on macOS run “Shell "
                    "Command: Install 'code' command in PATH” from VS Code's command palette."
                ),
            )
        check_ssh_config(self.writer, alias)
        return LaunchPlan(
            [code, "--remote", f"ssh-remote+{alias}", path],
            _("VS Code on {alias}:{path}").format(alias=alias, path=path),
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
            raise LaunchProblem(
                _("Could not start {program}: {error}.").format(
                    program=plan.argv[0], error=exc.strerror or exc
                )
            ) from exc
