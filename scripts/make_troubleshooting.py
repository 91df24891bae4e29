#!/usr/bin/env python3
"""Writes docs/troubleshooting.md from the app's own messages, so the page says what the app says.

    python scripts/make_troubleshooting.py          # rewrite the page
    python scripts/make_troubleshooting.py --check  # exit 1 when the page is out of date

The tables come from core/transfers/rsync/errors.py (exit codes and the output lines that refine
them), core/monitor/nvsmi_errors.py, core/system/envcheck.py and core/common/validation.py; the
prose around them is here.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "desktop"))

from gpu_companion.core.common.errors import ValidationError  # noqa: E402
from gpu_companion.core.common.validation import (  # noqa: E402
    validate_alias,
    validate_hostname,
    validate_port,
    validate_user,
)
from gpu_companion.core.monitor import nvsmi_errors  # noqa: E402
from gpu_companion.core.system import envcheck  # noqa: E402
from gpu_companion.core.transfers.rsync import errors as rsync_errors  # noqa: E402

OUT = REPO / "docs" / "troubleshooting.md"


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def agent_messages() -> list[str]:
    """What ssh prints when the app's agent is not running, and the words for a refused key."""
    from pathlib import Path as P

    from gpu_companion.core.hosts.registry import Host
    from gpu_companion.core.ssh.agent import IDENTITY_DIR, auth_help

    class Key:
        platform, kind, fingerprint = "vast.ai", "ed25519", "SHA256:<the key's fingerprint>"
        public_path = P("~/.local/share/gpu-companion/keys/vast.ai.pub")

    class Vault:
        def platform_of(self, _host: object) -> str:
            return "vast.ai"

        def key(self, _platform: str) -> Key:
            return Key()

    host = Host("gpu1", "203.0.113.7", 41022, "root")
    return [
        "The managed entries send `ssh`, `scp` and rsync to GPU Companion's own ssh-agent, which",
        "runs while the app runs (window or tray) and holds each platform's key from the keyring.",
        "With the app closed, a terminal prints:",
        "",
        f"    no such identity: /run/user/1000/gpu-companion-1000-…/{IDENTITY_DIR}/vast.ai: No "
        "such file or directory",
        "    root@203.0.113.7: Permission denied (publickey).",
        "",
        "Start the app (the tray is enough) and run the command again. When the host itself",
        "refuses the key, a transfer stops at once, without retries, and says:",
        "",
        f"> {auth_help(host, Vault())}",  # type: ignore[arg-type]
    ]


def rsync_codes() -> list[str]:
    rows = [
        "| exit code | kind | what the app tells you | retry helps |",
        "| --- | --- | --- | --- |",
    ]
    for code in sorted(rsync_errors._EXITS):
        if code == 0:
            continue
        info = rsync_errors.explain_exit_code(code)
        rows.append(
            f"| {code} | {info.category} | {cell(info.message)} | "
            f"{'yes' if info.retryable else 'no'} |"
        )
    return rows


def rsync_hints() -> list[str]:
    rows = ["| the output contains | what the app tells you |", "| --- | --- |"]
    for pattern, _category, message, _retry in rsync_errors._OUTPUT_HINTS:
        readable = re.sub(r"\\\(|\(\?:|\)|\\", "", pattern.pattern).replace("|", " / ")
        rows.append(f"| {cell(readable)} | {cell(message)} |")
    return rows


def gpu_errors() -> list[str]:
    samples = {
        "GPU lost": "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.",
        "driver/library mismatch": "Failed to initialize NVML: Driver/library version mismatch",
        "no driver": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
        "driver.",
        "inside a container": "Failed to initialize NVML: Unknown Error",
        "not installed": "bash: nvidia-smi: command not found",
        "no GPU": "No devices were found",
    }
    rows = ["| nvidia-smi prints | the app says | what to do |", "| --- | --- | --- |"]
    for sample in samples.values():
        err = nvsmi_errors.detect_gpu_error(sample)
        assert err is not None, sample
        rows.append(f"| `{cell(sample)}` | {cell(err.message)} | {cell(err.hint)} |")
    return rows


def field_messages() -> list[str]:
    cases = [
        (validate_alias, "gpu box"),
        (validate_alias, "-x"),
        (validate_hostname, "host#1"),
        (validate_hostname, "exämple.com"),
        (validate_user, "9root"),
        (validate_port, "70000"),
    ]
    rows = ["| you typed | the app says |", "| --- | --- |"]
    for fn, value in cases:
        try:
            fn(value)
        except ValidationError as exc:
            rows.append(f"| `{value}` | {cell(exc.message)} |")
    return rows


def install_lines() -> list[str]:
    systems = [
        ("Debian, Ubuntu", envcheck.OsInfo("linux", ("debian",))),
        ("Fedora, RHEL", envcheck.OsInfo("linux", ("fedora",))),
        ("Arch", envcheck.OsInfo("linux", ("arch",))),
        ("openSUSE", envcheck.OsInfo("linux", ("opensuse",))),
        ("macOS", envcheck.OsInfo("darwin")),
        ("Windows", envcheck.OsInfo("windows")),
    ]
    rows = ["| system | ssh, ssh-agent | rsync | keyring |", "| --- | --- | --- | --- |"]
    for name, info in systems:
        hints = [
            envcheck.install_hint(t, info).removeprefix("Install it with: ")
            for t in ("ssh", "rsync", "keyring")
        ]
        rows.append(f"| {name} | " + " | ".join(cell(h) for h in hints) + " |")
    return rows


def connection_messages() -> list[str]:
    """Each failure kind as the app words it, produced by the real classifier."""
    import socket
    import tempfile
    from pathlib import Path

    import paramiko
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from gpu_companion.core.hosts.registry import Host
    from gpu_companion.core.ssh.connection import ConnectionProblem, SessionFactory
    from gpu_companion.core.ssh.keys import to_paramiko
    from gpu_companion.core.ssh.vault import KeyVault
    from gpu_companion.core.storage.store import Store

    host = Host("gpu1", "203.0.113.7", 41022, "root")
    where = "203.0.113.7:41022"  # as connect() words it
    # fixed example keys, so the page does not change from one run to the next
    offered, before = (
        to_paramiko(Ed25519PrivateKey.from_private_bytes(bytes([seed]) * 32)) for seed in (1, 2)
    )
    empty = paramiko.HostKeys()
    known = paramiko.HostKeys()
    known.add("[203.0.113.7]:41022", before.get_name(), before)
    refused = paramiko.ssh_exception.NoValidConnectionsError(
        {("203.0.113.7", 41022): ConnectionRefusedError(111, "Connection refused")}
    )
    cases = [
        ("first contact", paramiko.SSHException("not found in known_hosts"), offered, empty),
        ("host key changed", paramiko.BadHostKeyException("h", offered, before), None, known),
        ("key refused", paramiko.AuthenticationException("Authentication failed."), None, empty),
        ("name not found", socket.gaierror(-2, "Name or service not known"), None, empty),
        ("refused", refused, None, empty),
        ("timeout", TimeoutError("timed out"), None, empty),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "db.sqlite3")
        try:
            factory = SessionFactory(KeyVault(store, Path(tmp) / "keys"), Path(tmp) / "kh")
            problems = [
                (what, factory._explain(exc, host, where, key, hk)) for what, exc, key, hk in cases
            ]
            try:
                factory.connect(host)  # no platform, so no key: the app says so before dialling
            except ConnectionProblem as exc:
                problems.append(("no key", exc))
        finally:
            store.close()
    rows = ["| situation | what the app tells you | what to do |", "| --- | --- | --- |"]
    for what, problem in problems:
        rows.append(f"| {what} | {cell(problem.message)} | {cell(problem.hint)} |")
    return rows


def render() -> str:
    parts = [
        "# Troubleshooting",
        "",
        "<!-- Generated by scripts/make_troubleshooting.py from the app's own messages: edit the",
        "     script (or the messages in desktop/gpu_companion/core/), then run it again. -->",
        "",
        "Every message below is the exact text GPU Companion shows. Find the one you saw, then do",
        "what its row says. The log file (Settings → Logs → Open folder) has the details of",
        "anything unexpected.",
        "",
        "## First run: something is missing on this computer",
        "",
        "The welcome dialog, **Settings → Check this computer…** and `gpu-companion doctor` check",
        "the system keyring, `ssh`, `ssh-agent` and `rsync`. For anything missing they print the",
        "install command for your system:",
        "",
        *install_lines(),
        "",
        "**The system keyring is locked and could not be unlocked.** Log in to your desktop",
        "session (the login password unlocks the default keyring), or open your keyring manager",
        "(Passwords and Keys, KWalletManager, Keychain Access) and unlock it, then *Check again*.",
        "",
        "**No system keyring was found.** GPU Companion keeps private keys only in the system",
        "keyring and never in plain files, so key generation stays off until one exists. On a",
        "desktop without one, install gnome-keyring (or use KWallet) and log in again.",
        "",
        "## Host key changed, key refused, disk full: what ssh and rsync said",
        "",
        "During a transfer the app reads ssh's and rsync's output; these lines say more than",
        "the exit code, so their message wins (core/transfers/rsync/errors.py):",
        "",
        *rsync_hints(),
        "",
        "## `ssh ALIAS` in a terminal, and a key the host refused",
        "",
        *agent_messages(),
        "",
        "## Connecting: what the app's own SSH connections say",
        "",
        "Test connection, the monitor, the self-check and the release checklist connect with the",
        "platform's key from the keyring and the app's own known_hosts (core/ssh/connection.py).",
        "Example host `gpu1` (`root` at 203.0.113.7, port 41022):",
        "",
        *connection_messages(),
        "",
        "## Transfers stopped: rsync exit codes",
        "",
        "When a transfer stops, the app reads rsync's exit code and its last lines.",
        '"Retry helps" means starting the same transfer again is likely to work; files that',
        "already arrived are not sent twice.",
        "",
        *rsync_codes(),
        "",
        "## The GPU stopped reporting",
        "",
        *gpu_errors(),
        "",
        "## A field was refused when adding a host",
        "",
        "Values end up in ssh config files and remote commands, so anything that could inject",
        "a directive is refused, with the reason next to the field:",
        "",
        *field_messages(),
        "",
        "## The app does not start",
        "",
        "- `GPU Companion could not start: ...` followed by the log path: the database could not",
        "  be opened. Nothing was changed; the log says why. A copy of the database is taken",
        "  before every schema upgrade, next to it in the data folder.",
        '- On Linux, `qt.qpa.plugin: Could not load the Qt platform plugin "xcb"`: the system',
        "  lacks X libraries Qt needs. On Debian/Ubuntu:",
        "  `sudo apt install libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxkbcommon-x11-0`.",
        "- A second start only brings the running window forward: GPU Companion runs once per",
        "  user. Look for it in the tray.",
        "",
    ]
    return "\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = render()
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT} is out of date: run scripts/make_troubleshooting.py", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
