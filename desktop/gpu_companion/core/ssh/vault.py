"""One SSH key per platform: the private half only in the OS keyring, the public half on disk.

The private key (OpenSSH format, encrypted when the user chose a passphrase) is a keyring secret;
the app loads it into paramiko from memory and hands it to ssh-agent over a pipe. Nothing private
is ever written to disk except by the explicit, warned `export_private_key`. Keys belong to the
platform's id (a renamed platform keeps its key), and the keyring service name carries the data
dir's own id (two data dirs never share an entry).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.lazy import lazy_import
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.ssh.keyring_errors import (
    KeyringUnavailable,
    classify,
    is_safe_backend,
    safe_backend,
)
from gpu_companion.core.ssh.keys import (
    KEY_KINDS,
    PrivateKey,
    fingerprint_of,
    key_kind,
    openssh_text,
    parse_private_key,
    public_line,
    to_paramiko,
)
from gpu_companion.core.storage.identity import data_dir_id
from gpu_companion.core.storage.store import Store

if TYPE_CHECKING:
    import paramiko
else:
    paramiko = lazy_import("paramiko")

SERVICE = "gpu-companion"
_SLUG_RE = re.compile(r"[^a-z0-9._-]+")

__all__ = [
    "KEY_KINDS",
    "KeyVault",
    "KeyringUnavailable",
    "StoredKey",
    "RotateResult",
    "safe_backend",
]


@dataclass(frozen=True)
class StoredKey:
    """What the app knows about a platform's key without touching the keyring."""

    platform: str  # the platform's name now (the key belongs to its id)
    kind: str  # "ed25519" | "rsa" | "ecdsa"
    bits: int
    fingerprint: str  # "SHA256:..." as ssh-keygen prints it
    comment: str
    created: str  # ISO timestamp (UTC)
    public_path: Path
    encrypted: bool
    has_previous: bool = False
    platform_id: int = 0

    @property
    def fingerprint_line(self) -> str:
        """The line `ssh-keygen -lf <public file>` prints."""
        return f"{self.bits} {self.fingerprint} {self.comment} ({self.kind.upper()})"

    @property
    def public_line(self) -> str:
        return self.public_path.read_text(encoding="ascii").strip()


@dataclass(frozen=True)
class RotateResult:
    old: StoredKey
    new: StoredKey
    hosts_on_old_key: list[str]


class KeyVault:
    """Generate, import, rotate, delete and use per-platform keys.

    `backend` is a keyring backend; None means `keyring.get_keyring()` on first use, so building
    the vault never touches D-Bus. `service` is the keyring service name: by default
    "gpu-companion/<data dir id>"; `legacy_service` is where earlier versions kept the secrets,
    under the platform's name.
    """

    def __init__(
        self,
        store: Store,
        public_dir: Path,
        backend: Any = None,
        service: str | None = None,
        legacy_service: str = SERVICE,
    ) -> None:
        self.store = store
        self.public_dir = public_dir
        self._backend = backend
        self._service = service
        self.legacy_service = legacy_service
        self._moving = False

    @property
    def service(self) -> str:
        if self._service is None:
            self._service = f"{SERVICE}/{data_dir_id(self.store.db)}"
        return self._service

    @service.setter
    def service(self, value: str) -> None:
        self._service = value

    # --- keyring access, with every failure mapped to KeyringUnavailable ---------------------

    @property
    def backend(self) -> Any:
        if self._backend is None:
            import keyring

            self._backend = keyring.get_keyring()
        self._backend = safe_backend(self._backend)  # a chain is judged by what it would use
        if not is_safe_backend(self._backend):
            raise KeyringUnavailable("no_backend", f"refused {type(self._backend).__name__}")
        return self._backend

    @backend.setter
    def backend(self, value: Any) -> None:
        self._backend = value

    def _keyring(
        self, op: str, user: str, secret: str | None = None, service: str | None = None
    ) -> str | None:
        if service is None:
            self.move_legacy_secrets()
        service = service or self.service
        try:
            if op == "get":
                value = self.backend.get_password(service, user)
                return None if value is None else str(value)
            if op == "set":
                self.backend.set_password(service, user, secret)
                return None
            try:
                self.backend.delete_password(service, user)
            except Exception as exc:  # PasswordDeleteError: nothing stored under that name
                if type(exc).__name__ != "PasswordDeleteError":
                    raise
            return None
        except Exception as exc:
            mapped = classify(exc)
            if mapped is None and isinstance(exc, OSError):
                mapped = KeyringUnavailable("no_backend", str(exc))
            if mapped is None:
                raise
            raise mapped from exc

    # --- other secrets (a provider's API key): the same keyring entry rules as the keys ---------

    def secret(self, name: str) -> str | None:
        return self._keyring("get", f"secret:{name}")

    def set_secret(self, name: str, value: str) -> None:
        """Store and read back: a keyring that silently dropped the value is an error."""
        self._keyring("set", f"secret:{name}", value)
        if self._keyring("get", f"secret:{name}") != value:
            raise KeyringUnavailable("error", f"secret:{name} did not read back")

    def delete_secret(self, name: str) -> None:
        self._keyring("delete", f"secret:{name}")

    def check_keyring(self) -> None:
        """Raise KeyringUnavailable when the keyring cannot be read right now."""
        self._keyring("get", "probe")

    @staticmethod
    def _secret_name(platform: str | int, previous: bool = False) -> str:
        """The keyring user name: the platform's id (earlier versions used its name)."""
        return f"{'previous-' if previous else ''}ssh-key:{platform}"

    def move_legacy_secrets(self) -> int:
        """Move secrets stored by name under the legacy service to this vault's service, keyed
        by platform id: copy, read back, then delete the old entry; a key is never lost (a
        failure leaves the old entry in place and the move is tried again on next use)."""
        if self._moving:
            return 0
        rows = self.store.db.execute(
            "SELECT platform_id, keyring_name FROM ssh_keys WHERE keyring_name IS NOT NULL"
        ).fetchall()
        if not rows:
            return 0
        self._moving = True
        moved = 0
        try:
            for platform_id, old_name in rows:
                for previous in (False, True):
                    old_user = self._secret_name(old_name, previous)
                    new_user = self._secret_name(platform_id, previous)
                    text = self._keyring("get", old_user, service=self.legacy_service)
                    if text is None:
                        continue  # nothing there (or moved before a crash cleared the mark)
                    self._keyring("set", new_user, text, service=self.service)
                    if self._keyring("get", new_user, service=self.service) != text:
                        raise KeyringUnavailable("error", f"{new_user} did not read back")
                    self._keyring("delete", old_user, service=self.legacy_service)
                    moved += 1
                with self.store.transaction() as db:
                    db.execute(
                        "UPDATE ssh_keys SET keyring_name = NULL WHERE platform_id = ?",
                        [platform_id],
                    )
        finally:
            self._moving = False
        return moved

    # --- metadata in the store ----------------------------------------------------------------

    def keys(self) -> list[StoredKey]:
        rows = self.store.db.execute(
            "SELECT p.name, k.kind, k.bits, k.fingerprint, k.comment, k.created_at, "
            "k.public_file, k.encrypted, k.has_previous, k.platform_id "
            "FROM ssh_keys k JOIN platforms p ON p.id = k.platform_id ORDER BY p.name"
        ).fetchall()
        return [
            StoredKey(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                r[5],
                self.public_dir / r[6],
                bool(r[7]),
                bool(r[8]),
                r[9],
            )
            for r in rows
        ]

    def key(self, platform: str) -> StoredKey | None:
        return next((k for k in self.keys() if k.platform == platform), None)

    def _platform_id(self, platform: str) -> int:
        """The id of the platform called `platform`; a key for a new name makes the platform."""
        row = self.store.db.execute(
            "SELECT id FROM platforms WHERE name = ?", [platform]
        ).fetchone()
        if row is not None:
            return int(row[0])
        with self.store.transaction() as db:
            cur = db.execute(
                "INSERT INTO platforms (name, created_at) VALUES (?, ?)",
                [platform, datetime.now(timezone.utc).isoformat(timespec="seconds")],
            )
        assert cur.lastrowid is not None
        return int(cur.lastrowid)

    def public_key_path(self, platform: str) -> Path:
        """Where the platform's public key lives (or will live)."""
        slug = _SLUG_RE.sub("-", platform.strip().lower()).strip("-.") or "platform"
        return self.public_dir / f"{slug}.pub"

    def fingerprint(self, platform: str) -> str:
        return self._require(platform).fingerprint_line

    def _require(self, platform: str) -> StoredKey:
        found = self.key(platform)
        if found is None:
            raise UserError(
                _("The platform {platform} has no SSH key yet.").format(platform=repr(platform)),
                hint=_("Generate or import one on the Keys page."),
            )
        return found

    def platform_of(self, host: Host) -> str | None:
        if host.platform_id is None:
            return None
        row = self.store.db.execute(
            "SELECT name FROM platforms WHERE id = ?", [host.platform_id]
        ).fetchone()
        return str(row[0]) if row else None

    def hosts_using(self, platform: str) -> list[str]:
        rows = self.store.db.execute(
            "SELECT h.alias FROM hosts h JOIN platforms p ON p.id = h.platform_id "
            "WHERE p.name = ? AND h.state = 'active' ORDER BY h.alias",
            [platform],
        ).fetchall()
        return [str(r[0]) for r in rows]

    def shared_public_keys(self) -> dict[str, list[str]]:
        """Fingerprints used by more than one platform: one leaked key would open all of them."""
        seen: dict[str, list[str]] = {}
        for k in self.keys():
            seen.setdefault(k.fingerprint, []).append(k.platform)
        return {fp: names for fp, names in seen.items() if len(names) > 1}

    # --- creating keys ------------------------------------------------------------------------

    def generate(
        self, platform: str, kind: str = "ed25519", passphrase: str | None = None
    ) -> StoredKey:
        """A fresh key for `platform`; refuses to overwrite one (use rotate)."""
        if kind not in ("ed25519", "rsa"):
            raise UserError(
                _("Unknown key type {kind}; choose ed25519 or rsa.").format(kind=repr(kind))
            )
        self._refuse_existing(platform)
        key: PrivateKey = (
            ed25519.Ed25519PrivateKey.generate()
            if kind == "ed25519"
            else rsa.generate_private_key(public_exponent=65537, key_size=4096)
        )
        return self._save(platform, key, passphrase or None)

    def import_private_key(
        self,
        platform: str,
        pem_text: str,
        passphrase: str | None = None,
        new_passphrase: str | None = None,
    ) -> StoredKey:
        """Import an OpenSSH or PEM private key (encrypted or not) pasted or read from a file.

        It is stored protected by `new_passphrase` when given, else by the passphrase it came
        with (None: unencrypted inside the keyring).
        """
        self._refuse_existing(platform)
        key = parse_private_key(pem_text, passphrase)
        keep = new_passphrase if new_passphrase is not None else passphrase
        return self._save(platform, key, keep or None)

    def _refuse_existing(self, platform: str) -> None:
        if not platform.strip():
            raise UserError(_("Choose a platform first."))
        if self.key(platform) is not None:
            raise UserError(
                _("{platform} already has a key.").format(platform=repr(platform)),
                hint=_("Use Rotate to replace it, or Delete it first."),
            )
        path = self.public_key_path(platform)
        clash = next((k for k in self.keys() if k.public_path == path), None)
        if clash is not None:
            raise UserError(
                _("{platform} and {other} would share the public key file {file}.").format(
                    platform=repr(platform), other=repr(clash.platform), file=path.name
                ),
                hint=_("Rename one of the platforms."),
            )

    def _save(
        self, platform: str, key: PrivateKey, passphrase: str | None, previous: bool = False
    ) -> StoredKey:
        kind = key_kind(key)
        comment = f"gpu-companion:{key_comment_name(platform)}:{date.today().isoformat()}"
        pub = public_line(key, comment)
        bits = 256 if isinstance(key, ed25519.Ed25519PrivateKey) else key.key_size
        platform_id = self._platform_id(platform)
        # Keyring first: if it is locked or missing, nothing else is written.
        self._keyring("set", self._secret_name(platform_id), openssh_text(key, passphrase))
        path = self.public_key_path(platform)
        self.public_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        # a temp file renamed over the name: a link planted there is replaced, never followed
        from gpu_companion.core.ssh.config_writer import atomic_write

        atomic_write(path, (pub + "\n").encode("ascii"), mode=0o644)
        stored = StoredKey(
            platform=platform,
            kind=kind,
            bits=bits,
            fingerprint=fingerprint_of(key),
            comment=comment,
            created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            public_path=path,
            encrypted=passphrase is not None,
            has_previous=previous,
            platform_id=platform_id,
        )
        with self.store.transaction() as db:
            db.table("ssh_keys").upsert(
                {
                    "platform_id": platform_id,
                    "kind": stored.kind,
                    "bits": stored.bits,
                    "fingerprint": stored.fingerprint,
                    "comment": stored.comment,
                    "created_at": stored.created,
                    "public_file": path.name,
                    "encrypted": int(stored.encrypted),
                    "has_previous": int(previous),
                },
                pk="platform_id",
            )
        return stored

    # --- using keys ---------------------------------------------------------------------------

    def private_text(self, platform: str, previous: bool = False) -> str:
        stored = self._require(platform)
        text = self._keyring("get", self._secret_name(stored.platform_id, previous))
        if text is None:
            raise UserError(
                _("The keyring no longer holds the private key of {platform}.").format(
                    platform=repr(platform)
                ),
                hint=_(
                    "It may have been removed in your keyring manager: rotate or delete the key."
                ),
            )
        return text

    def load_pkey(
        self, platform: str, passphrase: str | None = None, previous: bool = False
    ) -> paramiko.PKey:
        """The platform's key as a paramiko key, decrypted in memory."""
        return to_paramiko(parse_private_key(self.private_text(platform, previous), passphrase))

    def load_pkeys(self, platform: str, passphrase: str | None = None) -> list[paramiko.PKey]:
        """The current key, then the one it replaced while hosts may still expect it."""
        keys = [self.load_pkey(platform, passphrase)]
        if self._require(platform).has_previous:
            try:
                keys.append(self.load_pkey(platform, passphrase, previous=True))
            except UserError:
                pass
        return keys

    def load_into_agent(
        self,
        platform: str,
        lifetime_s: int | None = None,
        passphrase: str | None = None,
        agent_socket: Path | None = None,
    ) -> str:
        """Add the key to an ssh-agent through `ssh-add -` (stdin, never a file): the session's
        (SSH_AUTH_SOCK) or, given `agent_socket`, the app's own."""
        env = dict(os.environ)
        if agent_socket is not None:
            env["SSH_AUTH_SOCK"] = str(agent_socket)
        if not env.get("SSH_AUTH_SOCK"):
            raise UserError(
                _("No ssh-agent is running in this session (SSH_AUTH_SOCK is not set)."),
                hint=_('Start one (eval "$(ssh-agent)") or log in to a desktop that runs it.'),
            )
        key = parse_private_key(self.private_text(platform), passphrase)
        argv = ["ssh-add"]
        if lifetime_s:
            if lifetime_s < 1:
                raise UserError(_("The lifetime must be a positive number of seconds."))
            argv += ["-t", str(int(lifetime_s))]
        argv.append("-")
        try:
            done = subprocess.run(
                argv,
                input=openssh_text(key, None).encode(),
                env=env,
                capture_output=True,
                timeout=15,
                check=False,
            )
        except FileNotFoundError:
            raise UserError(_("ssh-add is not installed (Debian: openssh-client).")) from None
        if done.returncode != 0:
            err = done.stderr.decode(errors="replace").strip()
            raise UserError(
                _("ssh-agent refused the key: {error}.").format(error=err or _("ssh-add failed"))
            )
        if agent_socket is not None and lifetime_s:
            said = _("The {platform} key is loaded into the app's ssh-agent for {seconds} s.")
        elif agent_socket is not None:
            said = _("The {platform} key is loaded into the app's ssh-agent until the agent stops.")
        elif lifetime_s:
            said = _("The {platform} key is loaded into ssh-agent for {seconds} s.")
        else:
            said = _("The {platform} key is loaded into ssh-agent until the agent stops.")
        return said.format(platform=platform, seconds=lifetime_s)

    def export_private_key(self, platform: str, path: Path) -> Path:
        """The one way private material reaches disk: explicit, mode 0600, never overwriting."""
        text = self.private_text(platform)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise UserError(
                _("{path} already exists; choose a new file name.").format(path=path)
            ) from None
        except OSError as exc:
            raise UserError(
                _("Could not create {path}: {error}.").format(path=path, error=exc.strerror)
            ) from exc
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(text)
        os.chmod(path, 0o600)
        return path

    # --- rotating and deleting ----------------------------------------------------------------

    def rotate(
        self, platform: str, kind: str | None = None, passphrase: str | None = None
    ) -> RotateResult:
        """A new key; the old private key stays as 'previous' so running hosts stay reachable
        until the new public key is in place (then `forget_previous`)."""
        old = self._require(platform)
        old_text = self.private_text(platform)
        self._keyring("set", self._secret_name(old.platform_id, previous=True), old_text)
        new_kind = kind or ("rsa" if old.kind == "rsa" else "ed25519")
        key: PrivateKey = (
            ed25519.Ed25519PrivateKey.generate()
            if new_kind == "ed25519"
            else rsa.generate_private_key(public_exponent=65537, key_size=4096)
        )
        new = self._save(platform, key, passphrase or None, previous=True)
        return RotateResult(old, new, self.hosts_using(platform))

    def forget_previous(self, platform: str) -> None:
        stored = self._require(platform)
        self._keyring("delete", self._secret_name(stored.platform_id, previous=True))
        with self.store.transaction() as db:
            db.execute(
                "UPDATE ssh_keys SET has_previous = 0 WHERE platform_id = ?", [stored.platform_id]
            )

    def delete(self, platform: str) -> None:
        """Remove the key from the keyring first, then the public file and the record."""
        stored = self._require(platform)
        self._keyring("delete", self._secret_name(stored.platform_id))
        self._keyring("delete", self._secret_name(stored.platform_id, previous=True))
        stored.public_path.unlink(missing_ok=True)
        with self.store.transaction() as db:
            db.execute("DELETE FROM ssh_keys WHERE platform_id = ?", [stored.platform_id])


def key_comment_name(platform: str) -> str:
    """The platform as it appears in a public key's comment: ASCII, because the key is pasted
    into web consoles and written to authorized_keys files that may expect it. A name like
    恒源云 is written in punycode (xn--9kqr64bsmk), as in domain names."""
    return platform if platform.isascii() else "xn--" + platform.encode("punycode").decode("ascii")
