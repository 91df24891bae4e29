"""`gpu-companion watch` as a per-user service: the unit each OS reads, rendered as data, then
written, started, stopped or queried through an injectable runner.

Linux: a systemd user unit `$XDG_CONFIG_HOME/systemd/user/gpu-companion-watch.service`.
macOS: a launchd agent `~/Library/LaunchAgents/org.gpucompanion.watch.plist` (launchctl).
Windows: not supported yet (exit code 2).
The service runs the same argv a user would type, with the data location pinned by environment
variables when the user keeps the data somewhere other than the default.
"""

from __future__ import annotations

import os
import plistlib
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.paths import AppPaths
from gpu_companion.core.system.autostart import BACKGROUND_FLAG, launch_command

UNIT_NAME = "gpu-companion-watch.service"
JOURNAL_UNIT = "gpu-companion-watch"
MAC_LABEL = "org.gpucompanion.watch"
MAC_LOG_NAME = "watch-service.log"
# The variables AppPaths reads (directly, or through platformdirs on Linux), with their defaults
# relative to HOME; a value equal to its default is not pinned.
DATA_VARIABLES: tuple[tuple[str, str | None], ...] = (
    ("GPU_COMPANION_HOME", None),
    ("XDG_DATA_HOME", ".local/share"),
    ("XDG_CONFIG_HOME", ".config"),
    ("XDG_STATE_HOME", ".local/state"),
)
QUERY_TIMEOUT_S = 10.0
CHANGE_TIMEOUT_S = 60.0

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_UNSUPPORTED = 2


class ServiceUnitError(ValueError):
    """A unit that cannot be written as asked (the message says what to change)."""


@dataclass(frozen=True)
class CommandResult:
    returncode: int
    stdout: str = ""
    stderr: str = ""

    @property
    def said(self) -> str:
        """The command's own words, for a message: stderr first, else stdout, one line."""
        text = (self.stderr.strip() or self.stdout.strip()).splitlines()
        return text[0] if text else _("exit code {code}").format(code=self.returncode)


Runner = Callable[[list[str], float], CommandResult]


def run_command(argv: list[str], timeout: float) -> CommandResult:
    """The real runner: argv list, timeout, no shell; a missing tool or a timeout is a result."""
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=timeout, check=False,
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except FileNotFoundError:
        return CommandResult(127, "", _("{program}: command not found").format(program=argv[0]))
    except subprocess.TimeoutExpired:
        return CommandResult(
            124,
            "",
            _("{program} did not answer within {seconds} s").format(
                program=argv[0], seconds=f"{timeout:g}"
            ),
        )
    return CommandResult(done.returncode, done.stdout, done.stderr)


@dataclass(frozen=True)
class Outcome:
    """What an install, uninstall or status did: an exit code and the lines to show the user."""

    code: int
    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def watch_command(
    every: float | None = None, frozen: bool | None = None, executable: str | None = None
) -> list[str]:
    """The argv that runs `watch` from this installation (bundle binary, or `python -m`)."""
    argv = [a for a in launch_command(frozen, executable) if a != BACKGROUND_FLAG]
    argv.append("watch")
    if every is not None:
        argv += ["--every", f"{every:g}"]
    return argv


def data_environment(env: Mapping[str, str], home: Path, platform: str) -> dict[str, str]:
    """The variables that move the app's data away from its default, as absolute paths."""
    pinned: dict[str, str] = {}
    for name, default in DATA_VARIABLES:
        if default is not None and not platform.startswith("linux"):
            continue  # platformdirs reads XDG_* only on Linux
        value = env.get(name, "")
        if not value.strip():
            continue
        absolute = os.path.abspath(os.path.expanduser(value))
        if default is not None and Path(absolute) == home / default:
            continue
        pinned[name] = absolute
    return pinned


# --- systemd -----------------------------------------------------------------------------

# systemd refuses these in an executable's path ("Executable name contains special characters")
SYSTEMD_UNSAFE_PROGRAM = "\"'\\"
ENV_PROGRAM = "/usr/bin/env"
_SYSTEMD_PLAIN = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=,+-")


def _reject_controls(value: str, what: str) -> None:
    """`what` names the value in the current language (the caller translates it)."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise ServiceUnitError(
            _("{what} contains a line break or control character: {value}").format(
                what=what, value=repr(value)
            )
        )


def systemd_quote(word: str, *, dollars: bool = True) -> str:
    """One word per systemd.syntax: in double quotes with C escapes when it is not plain,
    `%` doubled (specifiers) and, where the manager substitutes variables, `$` doubled."""
    _reject_controls(word, _("a service argument"))
    text = word.replace("%", "%%")
    if dollars:
        text = text.replace("$", "$$")
    if word and all(c in _SYSTEMD_PLAIN for c in word):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def systemd_exec_line(argv: list[str]) -> str:
    """ExecStart's value for `argv`.

    systemd takes the program path literally (no `$` substitution) but not argv[0], so a program
    with `$` uses the `@` form with both spelled. It refuses a program path with a quote or a
    backslash at all; such a path runs through `/usr/bin/env` as an ordinary argument instead.
    """
    if not argv:
        raise ServiceUnitError(_("there is no command to run"))
    program = argv[0]
    _reject_controls(program, _("the program path"))
    if not os.path.isabs(program):
        raise ServiceUnitError(
            _("the program path must be absolute, not {program}").format(program=repr(program))
        )
    if any(c in program for c in SYSTEMD_UNSAFE_PROGRAM):
        if "=" in program:  # env would read it as a NAME=VALUE assignment
            raise ServiceUnitError(
                _(
                    "systemd cannot run a program whose path contains both a quote or backslash "
                    "and '=': {program}. Install GPU Companion (or its virtual environment) in a "
                    "folder without them and run `gpu-companion watch --install` again."
                ).format(program=program)
            )
        return " ".join([ENV_PROGRAM] + [systemd_quote(a) for a in argv])
    head = systemd_quote(program, dollars=False)
    if "$" in program:
        head = "@" + head + " " + systemd_quote(program)
    return " ".join([head] + [systemd_quote(a) for a in argv[1:]])


def systemd_environment_line(name: str, value: str) -> str:
    """One `Environment=` assignment: quoted, `%` doubled; `$` means nothing there."""
    _reject_controls(value, _("the value of {name}").format(name=name))
    return "Environment=" + systemd_quote(f"{name}={value}", dollars=False)


def render_systemd_unit(argv: list[str], environment: Mapping[str, str]) -> str:
    """The user unit that keeps `argv` running (checked with `systemd-analyze verify`)."""
    env_lines = "".join(systemd_environment_line(k, v) + "\n" for k, v in environment.items())
    return (
        "# Written by `gpu-companion watch --install`; `--uninstall` removes it.\n"
        "[Unit]\n"
        "Description=GPU Companion watch (alerts, auto-release and notifications)\n"
        "After=network-online.target\n"
        "Wants=network-online.target\n"
        "\n"
        "[Service]\n"
        "Type=simple\n"
        f"ExecStart={systemd_exec_line(argv)}\n"
        f"{env_lines}"
        "Restart=on-failure\n"
        "RestartSec=30\n"
        "StandardOutput=journal\n"
        "StandardError=journal\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


# --- launchd -----------------------------------------------------------------------------


def render_launch_agent(argv: list[str], environment: Mapping[str, str], log_path: Path) -> bytes:
    """The launchd agent that starts `argv` at login and restarts it when it fails."""
    plist: dict[str, object] = {
        "Label": MAC_LABEL,
        "ProgramArguments": list(argv),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "StandardOutPath": str(log_path),
        "StandardErrorPath": str(log_path),
        "ProcessType": "Background",
    }
    if environment:
        plist["EnvironmentVariables"] = dict(environment)
    return plistlib.dumps(plist)


# --- the service -------------------------------------------------------------------------


def _write_if_changed(path: Path, data: bytes) -> tuple[str, bool]:
    """Writes `data` atomically with mode 0644 unless the file already holds it; says which,
    and whether it changed."""
    try:
        before: bytes | None = path.read_bytes()
    except FileNotFoundError:
        before = None
    if before == data:
        return _("unchanged: {path} already holds this service definition").format(path=path), False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")  # a dot name: no manager picks it up half-written
    try:
        tmp.write_bytes(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    if before is not None:
        return _("updated {path}").format(path=path), True
    return _("wrote {path}").format(path=path), True


@dataclass
class WatchService:
    """`watch` as a user service for one OS. `platform` is sys.platform's spelling; `home`, `env`,
    `uid`, `paths` and `runner` are injected by tests."""

    platform: str = sys.platform
    home: Path | None = None
    env: dict[str, str] | None = None
    uid: int | None = None
    paths: AppPaths | None = None
    runner: Runner | None = field(default=None, repr=False)

    # -- where and what

    def _env(self) -> dict[str, str]:
        return dict(os.environ) if self.env is None else self.env

    def _home(self) -> Path:
        return self.home or Path(self._env().get("HOME") or Path.home())

    def _uid(self) -> int:
        return os.getuid() if self.uid is None else self.uid

    def _paths(self) -> AppPaths:
        return self.paths or AppPaths.default()

    def _run(self, argv: list[str], timeout: float = QUERY_TIMEOUT_S) -> CommandResult:
        return (self.runner or run_command)(argv, timeout)

    @property
    def is_linux(self) -> bool:
        return self.platform.startswith("linux")

    @property
    def is_mac(self) -> bool:
        return self.platform == "darwin"

    @property
    def supported(self) -> bool:
        return self.is_linux or self.is_mac

    def unit_path(self) -> Path:
        if self.is_mac:
            return self._home() / "Library" / "LaunchAgents" / f"{MAC_LABEL}.plist"
        if not self.is_linux:
            raise ServiceUnitError(self._unsupported_text())
        config = self._env().get("XDG_CONFIG_HOME") or ""
        base = Path(config) if config and Path(config).is_absolute() else self._home() / ".config"
        return base / "systemd" / "user" / UNIT_NAME

    def mac_log_path(self) -> Path:
        return self._paths().log_dir / MAC_LOG_NAME

    def environment(self) -> dict[str, str]:
        return data_environment(self._env(), self._home(), self.platform)

    def render(self, argv: list[str]) -> bytes:
        """The exact bytes this OS gets for `argv`."""
        if self.is_mac:
            return render_launch_agent(argv, self.environment(), self.mac_log_path())
        if not self.is_linux:
            raise ServiceUnitError(self._unsupported_text())
        return render_systemd_unit(argv, self.environment()).encode()

    def _unsupported_text(self) -> str:
        return _(
            "gpu-companion watch --install is not supported on {platform} yet. "
            "Run `gpu-companion watch` yourself (for example from Task Scheduler at log-on) "
            "to keep the rules running without a window."
        ).format(platform=self.platform)

    def _unsupported(self) -> Outcome:
        return Outcome(EXIT_UNSUPPORTED, (self._unsupported_text(),))

    # -- the three actions

    def install(self, argv: list[str]) -> Outcome:
        if not self.supported:
            return self._unsupported()
        try:
            data = self.render(argv)
        except ServiceUnitError as exc:
            return Outcome(EXIT_FAILED, (str(exc),))
        if self.is_mac:
            self._paths().log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            wrote, changed = _write_if_changed(self.unit_path(), data)
        except OSError as exc:
            return Outcome(
                EXIT_FAILED,
                (_("could not write {path}: {error}").format(path=self.unit_path(), error=exc),),
            )
        if self.is_mac:
            return self._mac_install(wrote, changed)
        return self._linux_install(wrote, changed)

    def uninstall(self) -> Outcome:
        if not self.supported:
            return self._unsupported()
        if self.is_mac:
            return self._mac_uninstall()
        return self._linux_uninstall()

    def status(self) -> Outcome:
        if not self.supported:
            return self._unsupported()
        path = self.unit_path()
        lines = [
            _("installed: {path}").format(path=path)
            if path.exists()
            else _("not installed (no {path})").format(path=path)
        ]
        lines += self._mac_status() if self.is_mac else self._linux_status()
        return Outcome(EXIT_OK, tuple(lines))

    # -- Linux

    def _systemctl(self, *args: str, timeout: float = QUERY_TIMEOUT_S) -> CommandResult:
        return self._run(["systemctl", "--user", *args], timeout)

    def _user_manager(self) -> CommandResult:
        """`systemctl --user show-environment` answers only when a user manager runs."""
        return self._systemctl("show-environment")

    def _manual_steps(self) -> list[str]:
        return [
            "  systemctl --user daemon-reload",
            f"  systemctl --user enable --now {UNIT_NAME}",
        ]

    def _user_name(self) -> str:
        env = self._env()
        name = env.get("USER") or env.get("LOGNAME")
        if name:
            return name
        try:
            import pwd  # POSIX only; Linux is the only caller

            return pwd.getpwuid(self._uid()).pw_name
        except (ImportError, KeyError):
            return str(self._uid())

    def _linger_lines(self) -> list[str]:
        user = self._user_name()
        said = self._run(["loginctl", "show-user", user, "-p", "Linger"])
        value = said.stdout.strip().rpartition("=")[2] if said.returncode == 0 else ""
        if value == "yes":
            return []
        if value == "no":
            text = _(
                "On a headless box (no one logged in) the service only runs after "
                "`loginctl enable-linger {user}`: lingering for {user} is off."
            )
        else:
            text = _(
                "On a headless box (no one logged in) the service only runs after "
                "`loginctl enable-linger {user}`: lingering for {user} could not be checked."
            )
        return [text.format(user=user)]

    def _linux_install(self, wrote: str, changed: bool) -> Outcome:
        lines = [wrote]
        manager = self._user_manager()
        if manager.returncode != 0:
            lines.append(
                _(
                    "No user systemd answers here ({said}), so the service is not started. "
                    "In a login session on this computer, run:"
                ).format(said=manager.said)
            )
            lines += self._manual_steps()
            return Outcome(EXIT_OK, tuple(lines + self._linger_lines()))
        reload = self._systemctl("daemon-reload", timeout=CHANGE_TIMEOUT_S)
        if reload.returncode != 0:
            failed = _("systemctl --user daemon-reload failed: {said}").format(said=reload.said)
            return Outcome(EXIT_FAILED, (*lines, failed))
        if changed and self._systemctl("is-active", UNIT_NAME).stdout.strip() == "active":
            restart = self._systemctl("restart", UNIT_NAME, timeout=CHANGE_TIMEOUT_S)
            if restart.returncode != 0:
                failed = _("restarting {unit} failed: {said}").format(
                    unit=UNIT_NAME, said=restart.said
                )
                return Outcome(EXIT_FAILED, (*lines, failed))
            lines.append(_("restarted {unit} with the new definition").format(unit=UNIT_NAME))
        enable = self._systemctl("enable", "--now", UNIT_NAME, timeout=CHANGE_TIMEOUT_S)
        if enable.returncode != 0:
            lines.append(
                _("systemctl --user enable --now {unit} failed: {said}").format(
                    unit=UNIT_NAME, said=enable.said
                )
            )
            lines.append(_("See `journalctl --user -u {unit}`.").format(unit=JOURNAL_UNIT))
            return Outcome(EXIT_FAILED, tuple(lines))
        lines.append(
            _("enabled and started {unit} (it starts again at each login)").format(unit=UNIT_NAME)
        )
        lines.append(_("Logs: journalctl --user -u {unit}").format(unit=JOURNAL_UNIT))
        return Outcome(EXIT_OK, tuple(lines + self._linger_lines()))

    def _wants_link(self) -> Path:
        return self.unit_path().parent / "default.target.wants" / UNIT_NAME

    def _linux_uninstall(self) -> Outcome:
        path = self.unit_path()
        lines: list[str] = []
        code = EXIT_OK
        manager = self._user_manager()
        if manager.returncode == 0:
            if path.exists():
                off = self._systemctl("disable", "--now", UNIT_NAME, timeout=CHANGE_TIMEOUT_S)
                if off.returncode != 0:
                    lines.append(
                        _("systemctl --user disable --now {unit} failed: {said}").format(
                            unit=UNIT_NAME, said=off.said
                        )
                    )
                    code = EXIT_FAILED
                else:
                    lines.append(_("stopped and disabled {unit}").format(unit=UNIT_NAME))
        elif path.exists():
            lines.append(
                _(
                    "No user systemd answers here ({said}); if the service runs in a login "
                    "session, `systemctl --user stop {unit}` there stops it now."
                ).format(said=manager.said, unit=UNIT_NAME)
            )
        link = self._wants_link()
        if link.is_symlink():  # what `enable` made, left behind when no manager could disable
            link.unlink()
        if path.exists():
            path.unlink()
            lines.append(_("removed {path}").format(path=path))
            if manager.returncode == 0:
                self._systemctl("daemon-reload", timeout=CHANGE_TIMEOUT_S)
        else:
            lines.append(_("not installed (no {path}); nothing to remove").format(path=path))
        return Outcome(code, tuple(lines))

    def _linux_status(self) -> list[str]:
        manager = self._user_manager()
        if manager.returncode == 0:
            enabled = self._systemctl("is-enabled", UNIT_NAME).stdout.strip() or "unknown"
            active = self._systemctl("is-active", UNIT_NAME).stdout.strip() or "unknown"
            lines = [
                _("enabled: {state}").format(state=enabled),
                _("active: {state}").format(state=active),
            ]
        else:
            lines = [
                _("enabled/active: unknown (no user systemd answers here: {said})").format(
                    said=manager.said
                )
            ]
        return lines + [
            _("logs: journalctl --user -u {unit}").format(unit=JOURNAL_UNIT),
            _("      and the app's log file {path}").format(path=self._paths().log_file),
        ]

    # -- macOS

    def _domain(self) -> str:
        return f"gui/{self._uid()}"

    def _target(self) -> str:
        return f"{self._domain()}/{MAC_LABEL}"

    def _mac_install(self, wrote: str, changed: bool) -> Outcome:
        lines = [wrote]
        loaded = self._run(["launchctl", "print", self._target()]).returncode == 0
        if loaded and not changed:
            lines.append(_("{label} is already loaded").format(label=MAC_LABEL))
        else:
            if loaded:  # a changed agent is loaded again; bootstrap refuses a loaded label
                self._run(["launchctl", "bootout", self._target()], CHANGE_TIMEOUT_S)
            plist = str(self.unit_path())
            boot = self._run(["launchctl", "bootstrap", self._domain(), plist], CHANGE_TIMEOUT_S)
            if boot.returncode != 0:  # older macOS, or a session bootstrap does not reach
                load = self._run(["launchctl", "load", "-w", plist], CHANGE_TIMEOUT_S)
                if load.returncode != 0:
                    lines.append(_("launchctl bootstrap failed: {said}").format(said=boot.said))
                    lines.append(_("launchctl load -w failed too: {said}").format(said=load.said))
                    return Outcome(EXIT_FAILED, tuple(lines))
            lines.append(
                _("loaded {label} (it starts again at each login)").format(label=MAC_LABEL)
            )
        lines.append(
            _("Logs: {path} and {app_log}").format(
                path=self.mac_log_path(), app_log=self._paths().log_file
            )
        )
        return Outcome(EXIT_OK, tuple(lines))

    def _mac_uninstall(self) -> Outcome:
        path = self.unit_path()
        lines: list[str] = []
        out = self._run(["launchctl", "bootout", self._target()], CHANGE_TIMEOUT_S)
        if out.returncode != 0 and path.exists():  # loaded the old way (`load -w`)
            out = self._run(["launchctl", "unload", "-w", str(path)], CHANGE_TIMEOUT_S)
        if out.returncode == 0:
            lines.append(_("stopped and unloaded {label}").format(label=MAC_LABEL))
        if path.exists():
            path.unlink()
            lines.append(_("removed {path}").format(path=path))
        else:
            lines.append(_("not installed (no {path}); nothing to remove").format(path=path))
        return Outcome(EXIT_OK, tuple(lines))

    def _mac_status(self) -> list[str]:
        said = self._run(["launchctl", "print", self._target()])
        if said.returncode == 0:
            state = next(
                (ln.strip() for ln in said.stdout.splitlines() if ln.strip().startswith("state =")),
                "state = unknown",
            )
            lines = [_("loaded: yes ({state})").format(state=state)]
        else:
            lines = [_("loaded: no ({said})").format(said=said.said)]
        return lines + [
            _("logs: {path}").format(path=self.mac_log_path()),
            _("      and {path}").format(path=self._paths().log_file),
        ]
