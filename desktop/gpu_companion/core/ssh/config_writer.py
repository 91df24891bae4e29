"""The generated ssh config: one managed file plus one `Include` line at the top of ~/.ssh/config.

Every other byte of the user's file is kept (it is handled as bytes, never decoded and re-encoded);
it is backed up before the first change; writes are atomic (temp names start with '.', so a `*`
glob never picks one up) with mode 0600; a second write changes nothing; `remove()` undoes it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.validation import (
    validate_alias,
    validate_hostname,
    validate_port,
    validate_user,
)

MARKER = b"# Added by GPU Companion (undo: gpu-companion ssh-config --remove)\n"
_BLOCK_RE = re.compile(rb"(?m)^# Added by GPU Companion[^\n]*\nInclude [^\n]*\n")
FORWARD_PORTS: dict[int, str] = {8888: "Jupyter", 6006: "TensorBoard", 8000: "inference server"}
ALIVE_INTERVAL_S, ALIVE_COUNT = 15, 4  # a dead link is noticed after a minute, not two hours


@dataclass(frozen=True)
class HostEntry:
    """One `Host` block of the managed file."""

    alias: str
    hostname: str
    port: int = 22
    user: str = "root"
    identity_file: Path | None = None
    proxy_jump: str = ""
    forwards: tuple[int, ...] = ()
    identity_agent: Path | None = None  # the app's own ssh-agent socket

    def validated(self) -> HostEntry:
        """Field-level checks: any value that could inject a directive is refused."""
        if self.identity_file is not None:
            check_path("identity_file", self.identity_file)
        if self.identity_agent is not None:
            check_path("identity_agent", self.identity_agent)
        bad = [p for p in self.forwards if p not in FORWARD_PORTS]
        if bad:
            raise ValidationError(
                "forwards", f"Port forwarding is offered for {sorted(FORWARD_PORTS)}, not {bad}."
            )
        return replace(
            self,
            alias=validate_alias(self.alias),
            hostname=validate_hostname(self.hostname),
            port=validate_port(self.port),
            user=validate_user(self.user),
            proxy_jump=validate_proxy_jump(self.proxy_jump),
            forwards=tuple(sorted(set(self.forwards))),
        )


def validate_proxy_jump(value: str) -> str:
    """'' or a comma-separated list of [user@]host[:port] (what ssh's ProxyJump takes)."""
    value = value.strip()
    if not value:
        return ""
    if value.lower() == "none":
        raise ValidationError("proxy_jump", "Leave the jump host empty to connect directly.")
    for hop in value.split(","):
        user, _, rest = hop.rpartition("@")
        if user:
            _field("proxy_jump", validate_user, user)
        host, port = rest, ""
        if rest.startswith("["):
            host, _, port = rest[1:].partition("]")
            port = port.removeprefix(":")
        elif rest.count(":") == 1:
            host, _, port = rest.partition(":")
        _field("proxy_jump", validate_hostname, host)
        if port:
            _field("proxy_jump", validate_port, port)
    return value


def _field(name: str, check: object, value: str) -> None:
    try:
        check(value)  # type: ignore[operator]
    except ValidationError as exc:
        raise ValidationError(name, f"Jump host: {exc.message}") from None


def check_path(name: str, path: Path) -> str:
    """A path as an ssh config argument: absolute, no quotes, '%', '#' or control characters."""
    text = str(path)
    if not path.is_absolute():
        raise ValidationError(name, f"{text!r} must be an absolute path.")
    if any(c in text for c in '"%#\\') or any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise ValidationError(
            name, f"The path {text!r} has a quote, '%', '#', '\\' or a control character."
        )
    return f'"{text}"' if any(c.isspace() for c in text) else text


@dataclass
class WriteResult:
    changed: list[Path] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # alias -> why
    backup: Path | None = None
    checked_with_ssh: int = 0  # blocks validated by `ssh -G`

    def summary(self) -> str:
        lines = [f"changed: {p}" for p in self.changed] or ["nothing to change"]
        if self.backup:
            lines.append(f"backup of your ssh config: {self.backup}")
        lines += [f"skipped {a}: {why}" for a, why in self.skipped.items()]
        return "\n".join(lines)


def with_include(data: bytes, block: bytes) -> bytes:
    """`data` with our block first; any block of ours elsewhere is taken out (no duplicates)."""
    return block + without_include(data)


def without_include(data: bytes) -> bytes:
    return _BLOCK_RE.sub(b"", data)


def atomic_write(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Write a '.'-prefixed temp file beside `path`, fsync, chmod, then rename over it."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class SshConfigWriter:
    def __init__(self, home: Path, managed_dir: Path | None = None) -> None:
        self.home = home
        self.ssh_dir = home / ".ssh"
        self.managed_dir = managed_dir or self.ssh_dir / "gpu-companion"
        self.user_config = self.ssh_dir / "config"
        self.config_path = self.managed_dir / "config"
        self.known_hosts = self.managed_dir / "known_hosts"
        self.backup_path = self.ssh_dir / "config.gpu-companion.bak"

    @property
    def include_block(self) -> bytes:
        return MARKER + f"Include {check_path('managed_dir', self.config_path)}\n".encode()

    def _target(self) -> Path:
        """The real file behind ~/.ssh/config (dotfile managers keep it as a symlink)."""
        return self.user_config.resolve() if self.user_config.is_symlink() else self.user_config

    def _read_user_config(self) -> bytes | None:
        target = self._target()
        try:
            return target.read_bytes()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise UserError(f"{target} is a directory, not an ssh config file.") from None
        except OSError as exc:
            raise UserError(f"Could not read {target}: {exc.strerror}.") from exc

    def is_installed(self) -> bool:
        data = self._read_user_config() or b""
        return data.startswith(self.include_block) and self.config_path.exists()

    def user_aliases(self) -> set[str]:
        """Literal `Host` names the user's own config defines (wildcards and negations aside)."""
        data = without_include(self._read_user_config() or b"")
        names: set[str] = set()
        for raw in data.decode("utf-8", errors="replace").splitlines():
            parts = raw.strip().split(None, 1)
            if len(parts) == 2 and parts[0].lower() == "host":
                for name in parts[1].replace("=", " ").split():
                    name = name.strip('"')
                    if not any(c in name for c in "*?!"):
                        names.add(name.lower())
        return names

    def render(self, entries: list[HostEntry]) -> str:
        """The managed file for already validated, non-conflicting entries."""
        out = [
            "# Managed by GPU Companion: edits here are overwritten.",
            "# Change hosts in the app, or run: gpu-companion ssh-config --write",
            "",
        ]
        known = check_path("known_hosts", self.known_hosts)
        for e in entries:
            out += [
                f"Host {e.alias}",
                f"    HostName {e.hostname}",
                f"    Port {e.port}",
                f"    User {e.user}",
            ]
            if e.identity_file is not None:
                out.append(f"    IdentityFile {check_path('identity_file', e.identity_file)}")
            else:
                out.append("    # this host's platform has no key in GPU Companion yet")
            if e.identity_agent is not None:
                out.append(f"    IdentityAgent {check_path('identity_agent', e.identity_agent)}")
            # pinned: the Include comes first and ssh keeps the first value, so a user's
            # `Host *` cannot weaken these for a managed host
            out += [
                "    IdentitiesOnly yes",
                "    StrictHostKeyChecking yes",
                "    ForwardAgent no",
                f"    UserKnownHostsFile {known}",
                f"    ServerAliveInterval {ALIVE_INTERVAL_S}",
                f"    ServerAliveCountMax {ALIVE_COUNT}",
                "    ConnectTimeout 20",
            ]
            if e.proxy_jump:
                out.append(f"    ProxyJump {e.proxy_jump}")
            for port in e.forwards:
                out.append(f"    LocalForward 127.0.0.1:{port} 127.0.0.1:{port}")
            out.append("")
        return "\n".join(out)

    def plan(self, entries: list[HostEntry]) -> tuple[str, dict[str, str]]:
        """Validate everything, then the managed text and the aliases left out (and why)."""
        valid = [e.validated() for e in entries]  # raises before anything is written
        user_aliases = self.user_aliases()
        skipped: dict[str, str] = {}
        kept: list[HostEntry] = []
        for e in valid:
            if e.alias.lower() in user_aliases:
                skipped[e.alias] = (
                    f"your own {self.user_config} already defines 'Host {e.alias}'; it was left "
                    "as is (rename one of them to use the managed entry)"
                )
            elif any(k.alias.lower() == e.alias.lower() for k in kept):
                skipped[e.alias] = "the alias appears twice"
            else:
                kept.append(e)
        return self.render(kept), skipped

    def write_managed(self, entries: list[HostEntry]) -> WriteResult:
        """Only the managed file (and the app's known_hosts): what `ssh -F` and rsync use inside
        the app, whether or not the user asked for the Include in ~/.ssh/config."""
        text, skipped = self.plan(entries)
        result = WriteResult(skipped=skipped)
        data = text.encode("utf-8")
        self.ssh_dir.mkdir(exist_ok=True, mode=0o700)
        self.managed_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not self.config_path.exists() or self.config_path.read_bytes() != data:
            kept = [e for e in entries if e.alias not in skipped]
            result.checked_with_ssh = self.validate_with_ssh(data, kept)
            atomic_write(self.config_path, data)
            result.changed.append(self.config_path)
        if not self.known_hosts.exists():
            atomic_write(self.known_hosts, b"")
        return result

    def write(self, entries: list[HostEntry]) -> WriteResult:
        result = self.write_managed(entries)
        old = self._read_user_config()
        new = with_include(old or b"", self.include_block)
        if new != old:
            target = self._target()
            if old is not None and not self.backup_path.exists():
                shutil.copy2(target, self.backup_path)
                self.backup_path.chmod(0o600)
                result.backup = self.backup_path
            atomic_write(target, new)
            result.changed.append(target)
        return result

    def remove(self) -> list[Path]:
        """Take our Include line out of ~/.ssh/config and delete the managed file."""
        changed: list[Path] = []
        old = self._read_user_config()
        if old is not None:
            new = without_include(old)
            if new != old:
                atomic_write(self._target(), new)
                changed.append(self._target())
        if self.config_path.exists():
            self.config_path.unlink()
            changed.append(self.config_path)
        return changed

    def validate_with_ssh(self, data: bytes, entries: list[HostEntry]) -> int:
        """`ssh -G` each alias against the rendered text; 0 when ssh is not installed.

        `ssh -G` exits 0 for an unknown alias too (it prints `hostname ALIAS`), so the printed
        hostname, port and user are compared with what was meant.
        """
        ssh = shutil.which("ssh")
        if not ssh or not entries:
            return 0
        fd, tmp = tempfile.mkstemp(prefix=".check.", dir=self.managed_dir)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            for e in entries:
                e = e.validated()
                done = subprocess.run(
                    [ssh, "-G", "-F", tmp, "--", e.alias],
                    capture_output=True,
                    text=True,
                    timeout=10,
                    check=False,
                )
                got = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
                want = {"hostname": e.hostname.lower(), "port": str(e.port), "user": e.user}
                seen = {
                    k: got.get(k, "").lower() if k == "hostname" else got.get(k, "") for k in want
                }
                if done.returncode != 0 or seen != want:
                    raise UserError(
                        f"ssh reads the generated entry for {e.alias!r} differently than "
                        f"intended ({seen} instead of {want}); nothing was written.",
                        hint=done.stderr.strip()[:300],
                    )
        finally:
            Path(tmp).unlink(missing_ok=True)
        return len(entries)
