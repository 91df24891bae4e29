"""The environment check: keyring usable, `ssh`, `ssh-agent` and `rsync` found, their versions.

Each finding says what is missing and the one command that installs it on this OS (apt, dnf,
pacman, zypper, brew, winget). Used by the welcome dialog, Settings and `gpu-companion doctor`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpu_companion.core.common.i18n import N_, _, ngettext
from gpu_companion.core.ssh.agent import agent_key_count
from gpu_companion.core.transfers.rsync.versions import is_openrsync, parse_rsync_version

TOOLS = ("ssh", "ssh-agent", "rsync")


@dataclass(frozen=True)
class OsInfo:
    """`family` is linux, darwin or windows; `ids` are /etc/os-release's ID and ID_LIKE."""

    family: str
    ids: tuple[str, ...] = ()
    pretty: str = ""

    @property
    def package_manager(self) -> str | None:
        if self.family == "darwin":
            return "brew"
        if self.family == "windows":
            return "winget"
        for ident in self.ids:
            for manager, family in _LINUX_FAMILIES:
                if ident in family:
                    return manager
        return None


_LINUX_FAMILIES: tuple[tuple[str, frozenset[str]], ...] = (
    ("apt", frozenset({"debian", "ubuntu", "linuxmint", "pop", "raspbian", "elementary"})),
    ("dnf", frozenset({"fedora", "rhel", "centos", "rocky", "almalinux", "ol", "amzn"})),
    ("pacman", frozenset({"arch", "manjaro", "endeavouros", "cachyos"})),
    ("zypper", frozenset({"opensuse", "suse", "opensuse-leap", "opensuse-tumbleweed", "sles"})),
)

# tool -> package manager -> command line
_INSTALL: dict[str, dict[str, str]] = {
    "ssh": {
        "apt": "sudo apt install openssh-client",
        "dnf": "sudo dnf install openssh-clients",
        "pacman": "sudo pacman -S openssh",
        "zypper": "sudo zypper install openssh-clients",
        "brew": "brew install openssh",
        "winget": "winget install Microsoft.OpenSSH.Preview",
    },
    "rsync": {
        "apt": "sudo apt install rsync",
        "dnf": "sudo dnf install rsync",
        "pacman": "sudo pacman -S rsync",
        "zypper": "sudo zypper install rsync",
        "brew": "brew install rsync",
        "winget": N_("winget install MSYS2.MSYS2, then in the MSYS2 shell: pacman -S rsync, and "
                     "add C:\\msys64\\usr\\bin to PATH (rsync has no native Windows build)"),
    },
    "keyring": {  # words around the command: N_, shown through _() (plain commands are not)
        "apt": N_("sudo apt install gnome-keyring (or use KWallet on KDE)"),
        "dnf": N_("sudo dnf install gnome-keyring (or use KWallet on KDE)"),
        "pacman": N_("sudo pacman -S gnome-keyring (or use KWallet on KDE)"),
        "zypper": N_("sudo zypper install gnome-keyring (or use KWallet on KDE)"),
    },
}
_INSTALL["ssh-agent"] = _INSTALL["ssh"]


@dataclass(frozen=True)
class CheckResult:
    """One finding. `fix` is empty when nothing needs doing."""

    name: str
    ok: bool
    version: str | None
    detail: str
    fix: str = ""


def detect_os(platform: str | None = None, os_release: Path = Path("/etc/os-release")) -> OsInfo:
    platform = platform or sys.platform
    if platform == "darwin":
        return OsInfo("darwin", pretty="macOS")
    if platform.startswith("win"):
        return OsInfo("windows", pretty="Windows")
    fields: dict[str, str] = {}
    try:
        for line in os_release.read_text(errors="replace").splitlines():
            key, sep, value = line.partition("=")
            if sep:
                fields[key.strip()] = value.strip().strip("\"'")
    except OSError:
        pass
    ids = (fields.get("ID", ""), *fields.get("ID_LIKE", "").split())
    return OsInfo("linux", tuple(i.lower() for i in ids if i), fields.get("PRETTY_NAME", "Linux"))


def install_hint(tool: str, os_info: OsInfo) -> str:
    """The command that installs `tool` here, or a plain sentence when the OS is unknown."""
    manager = os_info.package_manager
    line = _INSTALL.get(tool, {}).get(manager or "")
    if line:
        return _("Install it with: {command}").format(command=_(line))
    if tool == "keyring":
        if os_info.family == "darwin":
            return _("Open Keychain Access and unlock the login keychain.")
        if os_info.family == "windows":
            return _("Windows Credential Manager should be available; sign in to your account.")
        return _("Install a Secret Service keyring (gnome-keyring or KWallet) and log in again.")
    package = {"ssh": "OpenSSH client", "ssh-agent": "OpenSSH client"}.get(tool, tool)
    return _("Install the {package} package with your system's package manager.").format(
        package=package
    )


def _version_of(tool: str, exe: str) -> str | None:
    """The tool's version string, or None when it does not tell (ssh-agent has no flag)."""
    if tool == "ssh-agent":
        return None
    argv = [exe, "-V"] if tool == "ssh" else [exe, "--version"]
    try:
        out = subprocess.run(
            argv, capture_output=True, text=True, timeout=10, check=False, errors="replace"
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = out.stdout + out.stderr
    if tool == "ssh":
        m = re.search(r"OpenSSH_(?:for_Windows_)?([\w.]+)", text)
        if m:
            return m.group(1)
        lines = text.strip().splitlines()
        return lines[0] if lines else None
    if is_openrsync(text):
        return "openrsync"
    version = parse_rsync_version(text)
    return ".".join(map(str, version)) if version else None


def check_tool(tool: str, os_info: OsInfo, path: str | None = None) -> CheckResult:
    """Is `tool` on PATH (or `path`), and which version. Runs the tool: call off the GUI thread."""
    exe = shutil.which(tool, path=path if path is not None else os.environ.get("PATH"))
    if exe is None:
        return CheckResult(
            tool,
            False,
            None,
            _("`{tool}` was not found on the PATH.").format(tool=tool),
            install_hint(tool, os_info),
        )
    version = _version_of(tool, exe)
    detail = _("found at {path}").format(path=exe)
    fix = ""
    if tool == "rsync" and version == "openrsync":
        detail = _(
            "found at {path} (openrsync: transfers work, without the overall progress bar)"
        ).format(path=exe)
        fix = _("{hint} for full progress reporting.").format(hint=install_hint("rsync", os_info))
    elif tool == "rsync" and version is None:
        return CheckResult(
            tool,
            False,
            None,
            _("{path} did not answer --version like rsync.").format(path=exe),
            install_hint(tool, os_info),
        )
    return CheckResult(tool, True, version, detail, fix)


def check_keyring(os_info: OsInfo, backend: Any = None) -> CheckResult:
    """Can the app keep a secret? A read of a probe entry unlocks or fails the way a save would."""
    try:
        import keyring
        from keyring.backends import fail
        from keyring.errors import KeyringLocked, NoKeyringError
    except ImportError as exc:  # a broken install or bundle
        return CheckResult(
            "keyring",
            False,
            None,
            _("The keyring library is missing: {error}.").format(error=exc),
            _("Reinstall GPU Companion."),
        )
    from gpu_companion.core.ssh.keyring_errors import is_safe_backend, safe_backend

    # the same choice the key vault makes, so the check never calls usable what it refuses
    kr = safe_backend(backend if backend is not None else keyring.get_keyring())
    name = f"{type(kr).__module__.rsplit('.', 1)[-1]} ({type(kr).__name__})"
    if isinstance(kr, fail.Keyring):
        return CheckResult(
            "keyring",
            False,
            None,
            _(
                "No system keyring was found. GPU Companion keeps private keys only in the system "
                "keyring and never in plain files, so key generation stays off until one exists."
            ),
            install_hint("keyring", os_info),
        )
    if not is_safe_backend(kr):  # the vault's own test: what it refuses is not "usable"
        return CheckResult(
            "keyring",
            False,
            None,
            _(
                "The only keyring found is {name}, which keeps secrets in a plain file or not at "
                "all. GPU Companion never stores private keys there, so key generation stays off "
                "until a system keyring exists."
            ).format(name=name),
            install_hint("keyring", os_info),
        )
    try:
        kr.get_password("gpu-companion", "environment-check")
    except KeyringLocked:
        return CheckResult(
            "keyring",
            False,
            None,
            _("The system keyring is locked and could not be unlocked."),
            _(
                "Unlock it (log in to your desktop session, or open your keyring manager and "
                "unlock the default collection), then run the check again."
            ),
        )
    except NoKeyringError as exc:
        return CheckResult(
            "keyring",
            False,
            None,
            _("No usable keyring: {error}").format(error=exc),
            install_hint("keyring", os_info),
        )
    except Exception as exc:  # KeyringError, D-Bus errors, "Prompt dismissed", ...
        return CheckResult(
            "keyring",
            False,
            None,
            _("The system keyring did not answer: {error}").format(error=exc),
            _(
                "Make sure your keyring service is running and unlocked, then run the check "
                "again. {hint}"
            ).format(hint=install_hint("keyring", os_info)),
        )
    return CheckResult("keyring", True, None, _("usable: {name}").format(name=name))


def run_checks(
    path: str | None = None,
    backend: Any = None,
    os_info: OsInfo | None = None,
    agent_socket: Path | None = None,
    app_running: bool = False,
) -> Iterator[CheckResult]:
    """All checks, one result at a time (the UI shows each as it arrives). `agent_socket` is
    the app's own agent; `app_running` says it should answer (the window asks, not `doctor`)."""
    os_info = os_info or detect_os()
    yield check_keyring(os_info, backend)
    for tool in TOOLS:
        if tool == "ssh-agent":
            yield check_agent(os_info, path, agent_socket, app_running)
        else:
            yield check_tool(tool, os_info, path)


def check_agent(
    os_info: OsInfo,
    path: str | None = None,
    agent_socket: Path | None = None,
    app_running: bool = False,
) -> CheckResult:
    """The app's own agent (what `ssh ALIAS` and rsync use) and the session's (what "Load into
    ssh-agent" uses), each as it really is: found on PATH is not the same as running."""
    found = check_tool("ssh-agent", os_info, path)
    if not found.ok:
        return found
    parts = []
    ok = True
    fix = ""
    if agent_socket is not None:
        keys = agent_key_count(agent_socket)
        if keys is None:
            if app_running:
                parts.append(
                    _("GPU Companion's agent is not running ({socket})").format(socket=agent_socket)
                )
                ok = False
                fix = _("The app could not start its ssh-agent: the log file says why.")
            else:
                parts.append(
                    _(
                        "GPU Companion's agent is not running ({socket}); it starts with the app"
                    ).format(socket=agent_socket)
                )
        else:
            parts.append(
                ngettext(
                    "GPU Companion's agent runs with {n} key(s) ({socket})",
                    "GPU Companion's agent runs with {n} key(s) ({socket})",
                    keys,
                ).format(n=keys, socket=agent_socket)
            )
    session = os.environ.get("SSH_AUTH_SOCK", "")
    if not session:
        parts.append(
            _(
                'no ssh-agent in this session (SSH_AUTH_SOCK is not set): "Load into ssh-agent" '
                "needs one, the app's own connections do not"
            )
        )
    else:
        keys = agent_key_count(Path(session))
        parts.append(
            ngettext(
                "the session's agent holds {n} key(s)", "the session's agent holds {n} key(s)", keys
            ).format(n=keys)
            if keys is not None
            else _("SSH_AUTH_SOCK is set ({socket}) but no agent answers there").format(
                socket=session
            )
        )
    sep = _("; ")
    return CheckResult("ssh-agent", ok, None, sep.join([found.detail, *parts]), fix)
