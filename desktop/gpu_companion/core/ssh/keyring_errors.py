"""What a keyring failure means for the user: locked, prompt dismissed, or no Secret Service at all.

Measured against a real gnome-keyring: a wrong unlock password raises `KeyringLocked`, a D-Bus
session without the daemon raises `InitError("... Prompt dismissed..")`, no D-Bus at all gives
secretstorage's `SecretServiceNotAvailableException` (or `NoKeyringError` from keyring's fail
backend when keyring picked its own backend).
"""

from __future__ import annotations

from typing import Any

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import N_, _

KINDS = ("locked", "dismissed", "no_backend", "error")

_WHAT_TO_DO = {
    "locked": (
        N_("Your system keyring is locked."),
        N_("Unlock it (log in again, or open your keyring manager, e.g. Seahorse / 'Passwords and "
           "Keys', and unlock the 'Login' keyring), then try again."),
    ),
    "dismissed": (
        N_("The keyring did not answer: its unlock prompt was dismissed or no keyring daemon is "
           "running."),
        N_("Start your keyring (e.g. gnome-keyring-daemon or KWallet) and accept its prompt, "
           "then try again."),
    ),
    "no_backend": (
        N_("No system keyring (Secret Service) is available, so keys cannot be stored safely."),
        N_("Install and start a Secret Service provider (Debian/Ubuntu: gnome-keyring or "
           "kwalletmanager) inside a desktop session. Keys are never stored in plain text "
           "instead."),
    ),
    "error": (
        N_("The system keyring reported an error."),
        N_("Check that your keyring is running and unlocked, then try again."),
    ),
}


class KeyringUnavailable(UserError):
    """The OS keyring cannot be used right now; `kind` is one of KINDS."""

    def __init__(self, kind: str, detail: str = "") -> None:
        message, hint = _WHAT_TO_DO[kind]
        super().__init__(_(message), hint=_(hint))
        self.kind = kind
        self.detail = detail


def classify(exc: BaseException) -> KeyringUnavailable | None:
    """Map an exception raised by keyring/secretstorage/jeepney to KeyringUnavailable, else None."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    module = type(exc).__module__ or ""
    text = str(exc)
    if "KeyringLocked" in names or "LockedException" in names:
        return KeyringUnavailable("locked", text)
    if "dismissed" in text.lower():
        return KeyringUnavailable("dismissed", text)
    if names & {"NoKeyringError", "SecretServiceNotAvailableException"}:
        return KeyringUnavailable("no_backend", text)
    if module.startswith(("jeepney", "dbus")) or "DBusErrorResponse" in names:
        return KeyringUnavailable("no_backend", text)
    if "KeyringError" in names or module.startswith(("keyring", "secretstorage")):
        return KeyringUnavailable("error", text)
    return None


_UNSAFE_MODULES = ("keyrings.alt", "keyring.backends.fail", "keyring.backends.null")


def is_safe_backend(backend: Any) -> bool:
    """Plain-text and no-op backends never hold a private key (keyrings.alt stores files).

    The one test of a backend: the vault refuses what it refuses, and `doctor` and the welcome
    check call usable only what the vault would use."""
    return not type(backend).__module__.startswith(_UNSAFE_MODULES)


def safe_backend(backend: Any) -> Any:
    """The backend keyring picked, minus anything unsafe.

    keyring's chainer tries each backend in turn when a write fails, so a locked Secret Service
    would silently fall through to a plain-text file backend: take the first safe one instead.
    """
    from keyring.backends import chainer

    if isinstance(backend, chainer.ChainerBackend):
        fallback = backend.backends[-1] if backend.backends else backend  # never a list
        return next((b for b in backend.backends if is_safe_backend(b)), fallback)
    return backend
