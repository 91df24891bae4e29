"""Start at login: the Linux entry is written for real and validated; macOS and Windows as data."""

from __future__ import annotations

import plistlib
import shutil
import subprocess
import sys

import pytest

from gpu_companion.core.system.autostart import (
    BACKGROUND_FLAG,
    MAC_LABEL,
    WINDOWS_VALUE,
    Autostart,
    desktop_exec_quote,
    launch_command,
    render_desktop_entry,
    render_run_value,
)
from tests.conftest import missing_component

AWKWARD = '/opt/My Apps/gpu "companion" $HOME `x` back\\slash 100%/gpu-companion'


def unquote_exec(line: str) -> list[str]:
    """Reads an Exec value back per the Desktop Entry spec (string escapes, then quoting)."""
    s = line.replace("\\\\", "\x00")  # the file's string escaping: \\ is one backslash
    s = s.replace("\x00", "\\")
    args, cur, i, quoted, in_arg = [], "", 0, False, False
    while i < len(s):
        c = s[i]
        if quoted:
            if c == "\\" and i + 1 < len(s) and s[i + 1] in '"`$\\':
                cur += s[i + 1]
                i += 1
            elif c == '"':
                quoted = False
            else:
                cur += c
        elif c == '"':
            quoted, in_arg = True, True
        elif c == " ":
            if in_arg:
                args.append(cur)
            cur, in_arg = "", False
        else:
            cur += c
            in_arg = True
        i += 1
    if in_arg:
        args.append(cur)
    return [a.replace("%%", "%") for a in args]


def validate(path) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        missing_component("desktop-file-validate is not installed (Debian: desktop-file-utils)")
    return subprocess.run([tool, str(path)], capture_output=True, text=True, check=False)


def test_launch_command_source_install_and_bundle():
    assert launch_command(frozen=False, executable="/v/bin/python") == [
        "/v/bin/python",
        "-m",
        "gpu_companion",
        BACKGROUND_FLAG,
    ]
    assert launch_command(frozen=True, executable="/opt/gc/gpu-companion") == [
        "/opt/gc/gpu-companion",
        BACKGROUND_FLAG,
    ]


def test_plain_arguments_are_not_quoted():
    assert desktop_exec_quote("/usr/bin/python3") == "/usr/bin/python3"
    assert desktop_exec_quote("--background") == "--background"


def test_exec_quoting_round_trips_awkward_paths():
    entry = render_desktop_entry([AWKWARD, "-m", "gpu_companion", "--background"])
    exec_line = next(ln for ln in entry.splitlines() if ln.startswith("Exec="))[5:]
    assert unquote_exec(exec_line) == [AWKWARD, "-m", "gpu_companion", "--background"]


def test_linux_entry_is_written_under_xdg_config_home_and_validates(isolated_home, tmp_path):
    xdg = tmp_path / "xdg-config"
    env = {"HOME": str(isolated_home), "XDG_CONFIG_HOME": str(xdg)}
    auto = Autostart(platform="linux", env=env)
    assert not auto.is_enabled()
    auto.enable([AWKWARD, "--background"])
    path = xdg / "autostart" / "gpu-companion.desktop"
    assert auto.entry_path() == path and auto.is_enabled()
    assert [p.name for p in path.parent.iterdir()] == ["gpu-companion.desktop"]  # no temp left
    result = validate(path)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr
    auto.disable()
    assert not path.exists() and not auto.is_enabled()
    auto.disable()  # already off: no error


def test_linux_default_uses_the_real_environment(isolated_home):
    auto = Autostart(platform="linux")
    auto.enable()
    path = isolated_home / ".config" / "autostart" / "gpu-companion.desktop"
    assert path.exists()
    assert f"Exec={desktop_exec_quote(sys.executable)} -m gpu_companion --background" in (
        path.read_text()
    )


def test_relative_xdg_config_home_is_ignored(isolated_home):
    auto = Autostart(platform="linux", env={"HOME": str(isolated_home), "XDG_CONFIG_HOME": "rel"})
    assert auto.entry_path() == isolated_home / ".config" / "autostart" / "gpu-companion.desktop"


def test_a_broken_entry_fails_validation(tmp_path):
    """The validator really checks what we feed it (a test of the test's tool)."""
    bad = tmp_path / "bad.desktop"
    bad.write_text(render_desktop_entry(["/x"]).replace("Exec=/x", 'Exec="/x'))
    assert validate(bad).returncode != 0


def test_line_breaks_in_arguments_are_refused():
    with pytest.raises(ValueError):
        render_desktop_entry(["/x\nHidden=true"])


def test_macos_launch_agent(tmp_path):
    auto = Autostart(platform="darwin", home=tmp_path)
    argv = ["/Applications/GPU Companion.app/Contents/MacOS/gpu-companion", "--background"]
    auto.enable(argv)
    path = tmp_path / "Library" / "LaunchAgents" / f"{MAC_LABEL}.plist"
    assert auto.is_enabled() and auto.location == str(path)
    plist = plistlib.loads(path.read_bytes())
    assert plist["Label"] == MAC_LABEL
    assert plist["ProgramArguments"] == argv
    assert plist["RunAtLoad"] is True
    auto.disable()
    assert not path.exists()


class DictRegistry:
    def __init__(self):
        self.values: dict[str, str] = {}

    def get(self, name):
        return self.values.get(name)

    def set(self, name, value):
        self.values[name] = value

    def delete(self, name):
        self.values.pop(name, None)


def test_windows_run_key_value():
    reg = DictRegistry()
    auto = Autostart(platform="win32", registry=reg)
    argv = [r"C:\Program Files\GPU Companion\gpu-companion.exe", "--background"]
    assert not auto.is_enabled()
    auto.enable(argv)
    assert reg.values == {
        WINDOWS_VALUE: '"C:\\Program Files\\GPU Companion\\gpu-companion.exe" --background'
    }
    assert reg.values[WINDOWS_VALUE] == render_run_value(argv)
    assert auto.location.endswith(r"CurrentVersion\Run\GPU Companion")
    with pytest.raises(ValueError):
        auto.entry_path()
    auto.disable()
    assert not auto.is_enabled()
