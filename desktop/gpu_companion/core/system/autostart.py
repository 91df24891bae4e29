""" "Start at login": the autostart entry each OS reads, rendered as data, then written or removed.

Linux: `$XDG_CONFIG_HOME/autostart/gpu-companion.desktop` (freedesktop autostart spec).
macOS: `~/Library/LaunchAgents/org.gpucompanion.GPUCompanion.plist` (launchd, RunAtLoad).
Windows: the `GPU Companion` value under HKCU\\...\\CurrentVersion\\Run (the per-user Run key).
The app starts with `--background`, so at login it goes to the tray instead of opening a window.
"""

from __future__ import annotations

import importlib
import os
import plistlib
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

APP_ID = "gpu-companion"
MAC_LABEL = "org.gpucompanion.GPUCompanion"
WINDOWS_RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"
WINDOWS_VALUE = "GPU Companion"
BACKGROUND_FLAG = "--background"


def launch_command(frozen: bool | None = None, executable: str | None = None) -> list[str]:
    """The argv that starts this installation: the bundle's own binary, or `python -m`."""
    frozen = bool(getattr(sys, "frozen", False)) if frozen is None else frozen
    exe = executable or sys.executable
    if frozen:
        return [exe, BACKGROUND_FLAG]
    return [exe, "-m", "gpu_companion", BACKGROUND_FLAG]


def desktop_exec_quote(arg: str) -> str:
    """One Exec argument per the Desktop Entry spec, string escaping included.

    Arguments with reserved characters go in double quotes, where `"`, `` ` ``, `$` and `\\` get
    a backslash; the file's string escaping then doubles every backslash again.
    """
    reserved = set(" \t\n\"'\\><~|&;$*?#()`=%")
    if arg and not any(c in reserved for c in arg):
        return arg
    inner = "".join("\\" + c if c in '"`$\\' else c for c in arg).replace("%", "%%")
    return '"' + inner.replace("\\", "\\\\") + '"'


def render_desktop_entry(argv: list[str]) -> str:
    """The autostart .desktop file for `argv` (validates with desktop-file-validate)."""
    if any("\n" in a or "\r" in a for a in argv):
        raise ValueError("a launch argument contains a line break")
    exec_line = " ".join(desktop_exec_quote(a) for a in argv)
    return (
        "[Desktop Entry]\n"
        "Type=Application\n"
        "Version=1.0\n"
        "Name=GPU Companion\n"
        "Comment=Keeps watch over rented GPUs from the tray\n"
        f"Exec={exec_line}\n"
        f"Icon={APP_ID}\n"
        "Terminal=false\n"
        "X-GNOME-Autostart-enabled=true\n"
    )


def render_launch_agent(argv: list[str]) -> bytes:
    """The launchd property list that starts `argv` once at login."""
    return plistlib.dumps(
        {
            "Label": MAC_LABEL,
            "ProgramArguments": list(argv),
            "RunAtLoad": True,
            "ProcessType": "Interactive",
            "LimitLoadToSessionType": "Aqua",
        }
    )


def render_run_value(argv: list[str]) -> str:
    """The command line stored in the Windows Run key (quoted the way CreateProcess parses it)."""
    return subprocess.list2cmdline(argv)


class RegistryRun(Protocol):
    """The per-user Run key; `winreg` on Windows, a dict-backed object in tests."""

    def get(self, name: str) -> str | None: ...
    def set(self, name: str, value: str) -> None: ...
    def delete(self, name: str) -> None: ...


def _winreg() -> Any:
    """The standard winreg module (Windows only), typed loosely so mypy passes on every OS."""
    return importlib.import_module("winreg")


class WinregRun:
    """HKCU\\Software\\Microsoft\\Windows\\CurrentVersion\\Run through the standard winreg."""

    def get(self, name: str) -> str | None:
        winreg = _winreg()

        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, WINDOWS_RUN_KEY) as key:
                value, _kind = winreg.QueryValueEx(key, name)
                return str(value)
        except FileNotFoundError:
            return None

    def set(self, name: str, value: str) -> None:
        winreg = _winreg()

        with winreg.CreateKey(winreg.HKEY_CURRENT_USER, WINDOWS_RUN_KEY) as key:
            winreg.SetValueEx(key, name, 0, winreg.REG_SZ, value)

    def delete(self, name: str) -> None:
        winreg = _winreg()

        try:
            with winreg.OpenKey(
                winreg.HKEY_CURRENT_USER, WINDOWS_RUN_KEY, 0, winreg.KEY_SET_VALUE
            ) as key:
                winreg.DeleteValue(key, name)
        except FileNotFoundError:
            pass


@dataclass
class Autostart:
    """Start-at-login for one OS. `platform` is sys.platform's spelling; `home`/`env` for tests."""

    platform: str = sys.platform
    home: Path | None = None
    env: dict[str, str] | None = None
    registry: RegistryRun | None = None

    def _env(self) -> dict[str, str]:
        return dict(os.environ) if self.env is None else self.env

    def _home(self) -> Path:
        return self.home or Path(self._env().get("HOME") or Path.home())

    @property
    def is_windows(self) -> bool:
        return self.platform.startswith("win")

    @property
    def location(self) -> str:
        """Where the entry lives, for the Settings page."""
        if self.is_windows:
            return f"HKEY_CURRENT_USER\\{WINDOWS_RUN_KEY}\\{WINDOWS_VALUE}"
        return str(self.entry_path())

    def entry_path(self) -> Path:
        if self.platform == "darwin":
            return self._home() / "Library" / "LaunchAgents" / f"{MAC_LABEL}.plist"
        if self.is_windows:
            raise ValueError("on Windows the autostart entry is a registry value, not a file")
        config = self._env().get("XDG_CONFIG_HOME") or ""
        base = Path(config) if config and Path(config).is_absolute() else self._home() / ".config"
        return base / "autostart" / f"{APP_ID}.desktop"

    def render(self, argv: list[str]) -> bytes:
        """The exact bytes (file) or text (registry, UTF-8) this OS gets for `argv`."""
        if self.platform == "darwin":
            return render_launch_agent(argv)
        if self.is_windows:
            return render_run_value(argv).encode()
        return render_desktop_entry(argv).encode()

    def _registry(self) -> RegistryRun:
        return self.registry if self.registry is not None else WinregRun()

    def is_enabled(self) -> bool:
        if self.is_windows:
            return self._registry().get(WINDOWS_VALUE) is not None
        return self.entry_path().exists()

    def enable(self, argv: list[str] | None = None) -> None:
        argv = argv or launch_command()
        data = self.render(argv)
        if self.is_windows:
            self._registry().set(WINDOWS_VALUE, data.decode())
            return
        path = self.entry_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")  # a dot name: no autostart reader picks it up
        tmp.write_bytes(data)
        os.replace(tmp, path)

    def disable(self) -> None:
        if self.is_windows:
            self._registry().delete(WINDOWS_VALUE)
            return
        self.entry_path().unlink(missing_ok=True)
