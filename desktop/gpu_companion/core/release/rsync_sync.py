"""`CheckpointSync` with real rsync over the generated ssh config, until the transfer engine's
"sync checkpoints" preset replaces it (same Protocol: swap the object, keep the checks).

A checksum dry-run with --itemize-changes lists every file whose content differs; an empty list is
the proof that the local copy is complete.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.release.context import SyncPlan
from gpu_companion.core.transfers.rsync.errors import explain_exit_code


def local_mirror(root: Path, host: Host, remote_dir: str) -> Path:
    """Where a remote dir lands: `<root>/<alias>/<remote path without ~ or leading />`."""
    rel = remote_dir[2:] if remote_dir.startswith("~/") else remote_dir
    parts = [p for p in PurePosixPath(rel).parts if p not in ("/", ".", "..", "~")]
    return root.joinpath(host.alias, *parts)


def _remote_spec(host: Host, remote_dir: str) -> str:
    rel = remote_dir[2:] if remote_dir.startswith("~/") else remote_dir
    return f"{host.alias}:{rel.rstrip('/') or '.'}/"


def pending_from_itemized(output: str) -> tuple[str, ...]:
    """Files an `rsync -i` run would send: `>f`/`<f`/`cf`/`cL`/`hf` lines, not attribute-only."""
    pending = []
    for line in output.splitlines():
        if len(line) > 12 and line[0] in "<>ch" and line[1] in "fLDS" and line[11] == " ":
            pending.append(line[12:])
    return tuple(pending)


@dataclass
class RsyncCheckpointSync:
    ssh_argv: Sequence[str]  # e.g. ["ssh", "-F", "/path/to/generated/config"]
    local_root: Path
    env: Mapping[str, str] = field(default_factory=dict)
    bwlimit_kib: int | None = None
    timeout: float = 3600
    before_connect: Callable[[Host], None] | None = None  # readies the app's ssh-agent

    def build_argv(self, host: Host, remote_dir: str, dry_run: bool) -> list[str]:
        argv = [
            "rsync",
            "-a",
            "--checksum",
            "--itemize-changes",
            "--protect-args",
            "--partial-dir=.rsync-partial",
            "-e",
            shlex.join(self.ssh_argv),
        ]
        if dry_run:
            argv.append("--dry-run")
        if self.bwlimit_kib:
            argv.append(f"--bwlimit={self.bwlimit_kib}")
        dest = local_mirror(self.local_root, host, remote_dir)
        return [*argv, "--", _remote_spec(host, remote_dir), f"{dest}/"]

    def _run(self, host: Host, remote_dir: str, dry_run: bool) -> SyncPlan:
        dest = local_mirror(self.local_root, host, remote_dir)
        dest.mkdir(parents=True, exist_ok=True)
        if self.before_connect is not None:
            self.before_connect(host)
        env = {**os.environ, **self.env, "LC_ALL": "C"}
        try:
            done = subprocess.run(
                self.build_argv(host, remote_dir, dry_run),
                capture_output=True,
                text=True,
                env=env,
                timeout=self.timeout,
                check=False,
            )
        except FileNotFoundError as exc:
            raise UserError(
                "rsync is not installed on this computer.",
                hint="Install rsync (Debian/Ubuntu: apt install rsync).",
            ) from exc
        except subprocess.TimeoutExpired as exc:
            raise UserError(
                f"rsync from {host.alias} took longer than {self.timeout:.0f} s."
            ) from exc
        if done.returncode != 0:
            info = explain_exit_code(done.returncode, done.stderr + done.stdout)
            raise UserError(
                f"Could not compare {remote_dir} on {host.alias}: {info.message}",
                hint=done.stderr.strip()[-300:],
            )
        return SyncPlan(remote_dir, dest, pending_from_itemized(done.stdout))

    def plan(self, host: Host, remote_dir: str) -> SyncPlan:
        return self._run(host, remote_dir, dry_run=True)

    def sync(self, host: Host, remote_dir: str) -> SyncPlan:
        return self._run(host, remote_dir, dry_run=False)
