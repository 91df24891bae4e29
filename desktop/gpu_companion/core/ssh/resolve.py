"""What `ssh NAME` resolves to, asked of OpenSSH itself (`ssh -G`): the one place the app answers
"where does this name go", so `Host=name`, `Include`, `Match`, case and first-value-wins are
OpenSSH's own rules, not a parser's guess. (paramiko's SSHConfig is used only by the import,
which needs the user's own blocks and must never run `Match exec`; `ssh -G` runs it, as the
user's own `ssh NAME` does.)
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _

Resolved = dict[str, list[str]]

# What decides where a connection goes; a user's `Host *` that sets e.g. ServerAliveInterval
# says nothing about one name in particular.
DESTINATION_KEYS = ("hostname", "port", "user", "proxyjump", "proxycommand", "hostkeyalias")
# A name no user block is written for: what the config says about every name.
PROBE_NAME = "gpu-companion-probe.invalid"
_NAME_MARK = "\0name\0"


def ssh_binary() -> str | None:
    return shutil.which("ssh")


def resolve(name: str, config: Path | None = None, *, timeout: float = 10) -> Resolved | None:
    """`ssh -G [-F config] -- name` as {option: [values]}; None when ssh is not installed.

    Raises UserError when ssh rejects the config (its message is the hint). `ssh -G` exits 0 for
    a name no block mentions too: compare the printed values, never the exit code alone.
    """
    ssh = ssh_binary()
    if ssh is None:
        return None
    argv = [ssh, "-G", *(["-F", str(config)] if config is not None else []), "--", name]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            errors="replace",
            stdin=subprocess.DEVNULL,
            timeout=timeout,
            check=False,
            env={**os.environ, "LC_ALL": "C"},
        )
    except subprocess.TimeoutExpired:
        raise UserError(
            _("ssh took more than {seconds} s to read {config}.").format(
                seconds=f"{timeout:.0f}", config=config or _("your ssh config")
            ),
            hint=_("A `Match exec` command in it may be hanging."),
        ) from None
    if done.returncode != 0:
        raise UserError(
            _("ssh cannot read {config}.").format(config=config or _("your ssh config")),
            hint=done.stderr.strip()[:300],
        )
    out: Resolved = {}
    for line in done.stdout.splitlines():
        key, _sep, value = line.partition(" ")
        out.setdefault(key, []).append(value)
    return out


def _destination(resolved: Resolved, name: str) -> dict[str, list[str]]:
    """The destination options, with `name` in the host name replaced by a mark (a `Host *`
    with `HostName %h.example.org` treats every name alike)."""
    dest = {k: resolved.get(k, []) for k in DESTINATION_KEYS}
    dest["hostname"] = [v.replace(name.lower(), _NAME_MARK) for v in dest["hostname"]]
    return dest


def names_the_config_sends_elsewhere(names: list[str], config: Path) -> set[str] | None:
    """The names `config` sends somewhere it would not send any other name: a `Host` or `Match`
    block for the name (also `Host=name`, a pattern, or one in an Included file) that sets where
    it connects. None when ssh is not installed."""
    probe = resolve(PROBE_NAME, config)
    if probe is None:
        return None
    usual = _destination(probe, PROBE_NAME)
    found = set()
    for name in names:
        resolved = resolve(name, config)
        if resolved is not None and _destination(resolved, name) != usual:
            found.add(name)
    return found
