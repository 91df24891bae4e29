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
        "winget": "winget install MSYS2.MSYS2, then in the MSYS2 shell: pacman -S rsync, and "
        "add C:\\msys64\\usr\\bin to PATH (rsync has no native Windows build)",
    },
    "keyring": {
        "apt": "sudo apt install gnome-keyring (or use KWallet on KDE)",
        "dnf": "sudo dnf install gnome-keyring (or use KWallet on KDE)",
        "pacman": "sudo pacman -S gnome-keyring (or use KWallet on KDE)",
        "zypper": "sudo zypper install gnome-keyring (or use KWallet on KDE)",
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
        return f"Install it with: {line}"
    if tool == "keyring":
        if os_info.family == "darwin":
            return "Open Keychain Access and unlock the login keychain."
        if os_info.family == "windows":
            return "Windows Credential Manager should be available; sign in to your account."
        return "Install a Secret Service keyring (gnome-keyring or KWallet) and log in again."
    package = {"ssh": "OpenSSH client", "ssh-agent": "OpenSSH client"}.get(tool, tool)
    return f"Install the {package} package with your system's package manager."


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
            f"`{tool}` was not found on the PATH.",
            install_hint(tool, os_info),
        )
    version = _version_of(tool, exe)
    detail = f"found at {exe}"
    fix = ""
    if tool == "rsync" and version == "openrsync":
        detail += " (openrsync: transfers work, without the overall progress bar)"
        fix = install_hint("rsync", os_info) + " for full progress reporting."
    elif tool == "rsync" and version is None:
        return CheckResult(
            tool,
            False,
            None,
            f"{exe} did not answer --version like rsync.",
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
            f"The keyring library is missing: {exc}.",
            "Reinstall GPU Companion.",
        )
    from gpu_companion.core.ssh.keyring_errors import is_safe_backend, safe_backend

    kr = safe_backend(backend if backend is not None else keyring.get_keyring())
    name = f"{type(kr).__module__.rsplit('.', 1)[-1]} ({type(kr).__name__})"
    if isinstance(kr, fail.Keyring):
        return CheckResult(
            "keyring",
            False,
            None,
            "No system keyring was found. GPU Companion keeps private keys only in the system "
            "keyring and never in plain files, so key generation stays off until one exists.",
            install_hint("keyring", os_info),
        )
    if not is_safe_backend(kr):  # the vault's own test: what it refuses is not "usable"
        return CheckResult(
            "keyring",
            False,
            None,
            f"The only keyring found is {name}, which keeps secrets in a plain file or not at "
            "all. GPU Companion never stores private keys there, so key generation stays off "
            "until a system keyring exists.",
            install_hint("keyring", os_info),
        )
    try:
        kr.get_password("gpu-companion", "environment-check")
    except KeyringLocked:
        return CheckResult(
            "keyring",
            False,
            None,
            "The system keyring is locked and could not be unlocked.",
            "Unlock it (log in to your desktop session, or open your keyring manager and "
            "unlock the default collection), then run the check again.",
        )
    except NoKeyringError as exc:
        return CheckResult(
            "keyring", False, None, f"No usable keyring: {exc}", install_hint("keyring", os_info)
        )
    except Exception as exc:  # KeyringError, D-Bus errors, "Prompt dismissed", ...
        return CheckResult(
            "keyring",
            False,
            None,
            f"The system keyring did not answer: {exc}",
            "Make sure your keyring service is running and unlocked, then run the check again. "
            + install_hint("keyring", os_info),
        )
    return CheckResult("keyring", True, None, f"usable: {name}")


def run_checks(
    path: str | None = None, backend: Any = None, os_info: OsInfo | None = None
) -> Iterator[CheckResult]:
    """All checks, one result at a time (the UI shows each as it arrives)."""
    os_info = os_info or detect_os()
    yield check_keyring(os_info, backend)
    for tool in TOOLS:
        yield check_tool(tool, os_info, path)
