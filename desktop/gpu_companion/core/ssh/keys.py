"""Private key text in, key objects out: parsing, OpenSSH serialisation, fingerprints, paramiko.

All in memory: nothing here touches the disk.
"""

from __future__ import annotations

import base64
import hashlib
import io
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.lazy import lazy_import

if TYPE_CHECKING:
    import paramiko
else:
    paramiko = lazy_import("paramiko")

KEY_KINDS = ("ed25519", "rsa")
PrivateKey = ed25519.Ed25519PrivateKey | rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey


class PassphraseNeeded(UserError):
    """The key is encrypted and no passphrase (or a wrong one) was given."""

    def __init__(self, wrong: bool) -> None:
        super().__init__(
            _("The passphrase is wrong.") if wrong else _("This key is protected by a passphrase."),
            hint=_("Enter the key's passphrase."),
        )
        self.wrong = wrong


def parse_private_key(text: str, passphrase: str | None = None) -> PrivateKey:
    """An OpenSSH or PEM (PKCS#1/PKCS#8) private key; clear messages for everything else."""
    data = text.strip().encode("utf-8", errors="replace") + b"\n"
    if b"PRIVATE KEY" not in data:
        if data.startswith((b"ssh-", b"ecdsa-")):
            raise UserError(
                _("That is a public key."),
                hint=_("Import the private key file (the one without .pub)."),
            )
        raise UserError(_("This is not a private key (no 'PRIVATE KEY' block found)."))
    pw = passphrase.encode() if passphrase else None
    loader = (
        serialization.load_ssh_private_key
        if b"OPENSSH PRIVATE KEY" in data
        else serialization.load_pem_private_key
    )
    try:
        key = loader(data, password=pw)
    except TypeError:  # encrypted but no password, or a password for an unencrypted key
        if pw is None:
            raise PassphraseNeeded(wrong=False) from None
        key = loader(data, password=None)
    except ValueError as exc:
        if pw is not None and ("password" in str(exc).lower() or "decrypt" in str(exc).lower()):
            raise PassphraseNeeded(wrong=True) from None
        if pw is not None:
            raise PassphraseNeeded(wrong=True) from None
        raise UserError(_("The key could not be read: {error}.").format(error=exc)) from None
    except Exception as exc:  # unsupported cipher, missing bcrypt, ...
        raise UserError(_("The key could not be read: {error}.").format(error=exc)) from None
    if not isinstance(
        key, (ed25519.Ed25519PrivateKey, rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)
    ):
        raise UserError(
            _("{kind} keys are not supported; use an ed25519 or RSA key.").format(
                kind=type(key).__name__
            )
        )
    if isinstance(key, rsa.RSAPrivateKey) and key.key_size < 2048:
        raise UserError(
            _("This RSA key has only {bits} bits; use at least 2048.").format(bits=key.key_size)
        )
    return key


def key_kind(key: PrivateKey) -> str:
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "ed25519"
    if isinstance(key, rsa.RSAPrivateKey):
        return "rsa"
    return "ecdsa"


def openssh_text(key: PrivateKey, passphrase: str | None) -> str:
    enc: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase.encode())
        if passphrase
        else serialization.NoEncryption()
    )
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, enc
    ).decode("ascii")


def public_blob_line(key: PrivateKey) -> str:
    """'<type> <base64>' of the public half."""
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
        .decode("ascii")
    )


def public_line(key: PrivateKey, comment: str) -> str:
    return f"{public_blob_line(key)} {comment}"


def fingerprint_of(key: PrivateKey) -> str:
    """SHA256 of the public key blob, base64 without padding, as ssh-keygen -l prints it."""
    blob = base64.b64decode(public_blob_line(key).split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def to_paramiko(key: PrivateKey) -> paramiko.PKey:
    text = io.StringIO(openssh_text(key, None))
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return paramiko.Ed25519Key.from_private_key(text)
    if isinstance(key, rsa.RSAPrivateKey):
        return paramiko.RSAKey.from_private_key(text)
    return paramiko.ECDSAKey.from_private_key(text)
