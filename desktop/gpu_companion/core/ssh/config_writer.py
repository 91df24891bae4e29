"""The generated ssh config: one managed file plus one `Include` line at the top of ~/.ssh/config.

Every other byte of the user's file is kept (it is handled as bytes, never decoded and re-encoded);
it is backed up (atomically) before the first change; writes are atomic (temp names start with '.',
so a `*` glob never picks one up) with mode 0600; a second write changes nothing; `remove()` undoes
it, down to deleting a config the app created. Only the exact block the app writes is ever taken
out. A config that is read-only, another user's, or a dangling link is refused with a message.
Which aliases the user's own config already sends somewhere is asked of `ssh -G` (resolve.py).
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.validation import (
    validate_alias,
    validate_hostname,
    validate_port,
    validate_user,
)
from gpu_companion.core.ssh.resolve import names_the_config_sends_elsewhere, resolve, ssh_binary

log = logging.getLogger(__name__)

MARKER = b"# Added by GPU Companion (undo: gpu-companion ssh-config --remove)\n"
FORWARD_PORTS: dict[int, str] = {8888: "Jupyter", 6006: "TensorBoard", 8000: "inference server"}
ALIVE_INTERVAL_S, ALIVE_COUNT = 15, 4  # a dead link is noticed after a minute, not two hours
# What a user's `Host *` must not weaken for a rented host (the app's UserKnownHostsFile is pinned
# too). ssh keeps the first value, and the Include is kept first, so these win. Not pinned, on
# purpose: ClearAllForwardings (it only removes the forwards the user asked for), LocalCommand
# (never run with PermitLocalCommand no), ProxyJump/ProxyCommand (the user's own route, e.g. a
# company bastion; the host key is still checked end to end against the app's known_hosts).
PINNED: tuple[tuple[str, str], ...] = (
    ("IdentitiesOnly", "yes"),
    ("StrictHostKeyChecking", "yes"),
    ("ForwardAgent", "no"),
    ("ForwardX11", "no"),
    ("ForwardX11Trusted", "no"),
    ("PermitLocalCommand", "no"),
    ("UpdateHostKeys", "no"),
    ("VerifyHostKeyDNS", "no"),
)


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
                "forwards",
                _("Port forwarding is offered for {ports}, not {bad}.").format(
                    ports=sorted(FORWARD_PORTS), bad=bad
                ),
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
        raise ValidationError("proxy_jump", _("Leave the jump host empty to connect directly."))
    for hop in value.split(","):
        user, _sep, rest = hop.rpartition("@")
        if user:
            _field("proxy_jump", validate_user, user)
        host, port = rest, ""
        if rest.startswith("["):
            host, _sep, port = rest[1:].partition("]")
            port = port.removeprefix(":")
        elif rest.count(":") == 1:
            host, _sep, port = rest.partition(":")
        _field("proxy_jump", validate_hostname, host)
        if port:
            _field("proxy_jump", validate_port, port)
    return value


def _field(name: str, check: object, value: str) -> None:
    try:
        check(value)  # type: ignore[operator]
    except ValidationError as exc:
        raise ValidationError(
            name, _("Jump host: {problem}").format(problem=exc.message)
        ) from None


def check_path(name: str, path: Path) -> str:
    """A path as an ssh config argument: absolute, no quotes, '%', '#' or control characters."""
    text = str(path)
    if not path.is_absolute():
        raise ValidationError(
            name, _("{path} must be an absolute path.").format(path=repr(text))
        )
    if any(c in text for c in '"%#\\') or any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise ValidationError(
            name,
            _("The path {path} has a quote, '%', '#', '\\' or a control character.").format(
                path=repr(text)
            ),
        )
    return f'"{text}"' if any(c.isspace() for c in text) else text


@dataclass
class WriteResult:
    changed: list[Path] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # alias -> why
    backup: Path | None = None
    checked_with_ssh: int = 0  # blocks validated by `ssh -G`

    def summary(self) -> str:
        lines = [_("changed: {path}").format(path=p) for p in self.changed] or [
            _("nothing to change")
        ]
        if self.backup:
            lines.append(_("backup of your ssh config: {path}").format(path=self.backup))
        lines += [
            _("skipped {alias}: {why}").format(alias=a, why=why) for a, why in self.skipped.items()
        ]
        return "\n".join(lines)


def with_include(data: bytes, block: bytes) -> bytes:
    """`data` with our block first; any copy of it elsewhere is taken out (no duplicates)."""
    return block + without_include(data, block)


def without_include(data: bytes, block: bytes) -> bytes:
    """`data` without the exact `block` wherever it starts a line. A user's own comment that
    only looks like the marker, or names another file, stays."""
    out, start = bytearray(), 0
    while (i := data.find(block, start)) != -1:
        if i == 0 or data[i - 1 : i] == b"\n":
            out += data[start:i]
        else:
            out += data[start : i + len(block)]
        start = i + len(block)
    return bytes(out + data[start:])


def make_private_dirs(path: Path) -> None:
    """Create `path` and any missing parent with mode 0700 (~/.ssh among them): `mkdir(parents=
    True)` would create the parents with the umask's mode, usually 0755."""
    missing = []
    while not path.exists():
        missing.append(path)
        path = path.parent
    for p in reversed(missing):
        p.mkdir(mode=0o700)
        os.chmod(p, 0o700)


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


def _write_or_say(path: Path, data: bytes) -> None:
    """atomic_write, with a disk or permission failure said in words (the old file is intact)."""
    try:
        atomic_write(path, data)
    except OSError as exc:
        raise UserError(
            _("Could not write {path}: {error}; the file was left as it was.").format(
                path=path, error=exc.strerror or exc
            )
        ) from exc


def _create_empty(path: Path) -> None:
    """An empty file where there is none, in one step: a check-then-write could replace a file
    written in between (a host key the user trusted that moment, on another thread)."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass
    except OSError as exc:
        raise UserError(
            _("Could not create {path}: {error}.").format(path=path, error=exc.strerror or exc)
        ) from exc


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

    def _writable_target(self) -> Path:
        """The file to replace, or a UserError saying why it is left alone (nothing written)."""
        target = self._target()
        block = self.include_block.decode()
        if self.user_config.is_symlink() and not target.exists():
            raise UserError(
                _("{link} is a link to {target}, which does not exist; it was left as is.").format(
                    link=self.user_config, target=target
                ),
                hint=_("Point the link at your ssh config (or remove it), then try again."),
            )
        try:
            st = target.stat()
        except FileNotFoundError:
            return target
        if st.st_uid != os.geteuid():
            raise UserError(
                _("{path} belongs to another user (uid {uid}); it was left as is.").format(
                    path=target, uid=st.st_uid
                ),
                hint=_(
                    "Make it yours, or add these two lines at its top yourself:\n{lines}"
                ).format(lines=block),
            )
        if not st.st_mode & stat.S_IWUSR:
            raise UserError(
                _("{path} is read-only; it was left as is.").format(path=target),
                hint=_(
                    "Make it writable, or add these two lines at its top yourself:\n{lines}"
                ).format(lines=block),
            )
        return target

    def _replace_user_config(self, target: Path, data: bytes) -> None:
        _write_or_say(target, data)

    def _read_user_config(self) -> bytes | None:
        target = self._target()
        try:
            return target.read_bytes()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise UserError(
                _("{path} is a directory, not an ssh config file.").format(path=target)
            ) from None
        except OSError as exc:
            raise UserError(
                _("Could not read {path}: {error}.").format(path=target, error=exc.strerror)
            ) from exc

    def is_installed(self) -> bool:
        """The Include is in ~/.ssh/config *first*: only then do the pinned options win."""
        data = self._read_user_config() or b""
        return data.startswith(self.include_block) and self.config_path.exists()

    def is_included(self) -> bool:
        """The Include is in ~/.ssh/config anywhere (a user or a tool may have put lines above
        it since): the user asked for it, so a sync puts it back first."""
        data = self._read_user_config() or b""
        return without_include(data, self.include_block) != data

    def user_claims(self, aliases: list[str]) -> set[str]:
        """The aliases the user's own config (our Include taken out) already sends somewhere, as
        `ssh -G` reads it: `Host=name`, Included files and patterns count, case is ssh's."""
        data = without_include(self._read_user_config() or b"", self.include_block)
        if not data.strip() or not aliases:
            return set()
        fd, tmp = tempfile.mkstemp(prefix=".gpu-companion-user-config.")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            found = names_the_config_sends_elsewhere(aliases, Path(tmp))
        except (UserError, OSError) as exc:  # ssh cannot read the user's file: theirs fails too
            log.warning("alias check skipped: %s", exc)
            return set()
        finally:
            Path(tmp).unlink(missing_ok=True)
        return found or set()

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
            out += [f"    {name} {value}" for name, value in PINNED]
            out += [
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

    def plan(
        self, entries: list[HostEntry], *, for_include: bool = True
    ) -> tuple[str, dict[str, str]]:
        """Validate everything, then the managed text and the aliases left out (and why).

        `for_include`: the text is Included first in ~/.ssh/config, so an alias the user's own
        config already sends somewhere is left out; the app's own `ssh -F` needs no such check.
        """
        valid = [e.validated() for e in entries]  # raises before anything is written
        aliases = list(dict.fromkeys(e.alias for e in valid))
        claimed = self.user_claims(aliases) if for_include else set()
        skipped: dict[str, str] = {}
        kept: list[HostEntry] = []
        for e in valid:
            if e.alias in claimed:
                skipped[e.alias] = _(
                    "your own {config} already defines where 'ssh {alias}' goes "
                    "(see `ssh -G {alias}`); it was left as is (rename one of them to use the "
                    "managed entry)"
                ).format(config=self.user_config, alias=e.alias)
            elif any(k.alias.lower() == e.alias.lower() for k in kept):
                skipped[e.alias] = _("the alias appears twice")
            else:
                kept.append(e)
        return self.render(kept), skipped

    def write_managed(self, entries: list[HostEntry], *, for_include: bool = False) -> WriteResult:
        """Only the managed file (and the app's known_hosts): what `ssh -F` and rsync use inside
        the app, whether or not the user asked for the Include in ~/.ssh/config."""
        text, skipped = self.plan(entries, for_include=for_include)
        result = WriteResult(skipped=skipped)
        data = text.encode("utf-8")
        make_private_dirs(self.managed_dir)
        if not self.config_path.exists() or self.config_path.read_bytes() != data:
            kept = [e for e in entries if e.alias not in skipped]
            result.checked_with_ssh = self.validate_with_ssh(data, kept)
            _write_or_say(self.config_path, data)
            result.changed.append(self.config_path)
        _create_empty(self.known_hosts)
        return result

    def write(self, entries: list[HostEntry]) -> WriteResult:
        result = self.write_managed(entries, for_include=True)
        old = self._read_user_config()
        new = with_include(old or b"", self.include_block)
        if new != old:
            target = self._writable_target()
            if old is not None and not self.backup_path.exists():
                _write_or_say(self.backup_path, old)
                result.backup = self.backup_path
            self._replace_user_config(target, new)
            result.changed.append(target)
        return result

    def remove(self) -> list[Path]:
        """Take our Include line out of ~/.ssh/config and delete the managed file."""
        changed: list[Path] = []
        old = self._read_user_config()
        if old is not None:
            new = without_include(old, self.include_block)
            if new != old:
                target = self._writable_target()
                if not new and not self.backup_path.exists():
                    target.unlink()  # the app created it: no config was there before
                else:
                    self._replace_user_config(target, new)
                changed.append(target)
        if self.config_path.exists():
            self.config_path.unlink()
            changed.append(self.config_path)
        return changed

    def validate_with_ssh(self, data: bytes, entries: list[HostEntry]) -> int:
        """`ssh -G` each alias against the rendered text; 0 when ssh is not installed.

        `ssh -G` exits 0 for an unknown alias too (it prints `hostname ALIAS`), so the printed
        hostname, port and user are compared with what was meant.
        """
        if ssh_binary() is None or not entries:
            return 0
        fd, tmp = tempfile.mkstemp(prefix=".check.", dir=self.managed_dir)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            for e in entries:
                e = e.validated()
                got = resolve(e.alias, Path(tmp)) or {}
                want = {"hostname": e.hostname.lower(), "port": str(e.port), "user": e.user}
                seen = {k: (got.get(k) or [""])[0] for k in want}
                seen["hostname"] = seen["hostname"].lower()
                if seen != want:
                    raise UserError(
                        _(
                            "ssh reads the generated entry for {alias} differently than "
                            "intended ({seen} instead of {want}); nothing was written."
                        ).format(alias=repr(e.alias), seen=seen, want=want)
                    )
        finally:
            Path(tmp).unlink(missing_ok=True)
        return len(entries)
