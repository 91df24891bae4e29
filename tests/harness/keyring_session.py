"""A private D-Bus session bus with a real gnome-keyring Secret Service in a temp dir.

Failure modes are real too: a wrong unlock password leaves the collection locked, a bus without the
daemon makes keyring's prompt fail, and no bus at all gives keyring's NoKeyringError.
"""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .sshd import ComponentMissing
from .util import wait_for, which

ENV_KEYS = (
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
)


@dataclass
class KeyringSession:
    """start() sets the environment of this process; stop() restores it."""

    root: Path
    password: str | None = "harness-unlock"
    with_daemon: bool = True
    env: dict[str, str] = field(default_factory=dict)
    _bus_pid: int | None = None
    _daemon: subprocess.Popen[bytes] | None = None
    _saved: dict[str, str | None] = field(default_factory=dict)

    def start(self) -> KeyringSession:
        dbus = which("dbus-daemon")
        gkd = which("gnome-keyring-daemon")
        if not dbus or (self.with_daemon and not gkd):
            raise ComponentMissing(
                "dbus-daemon and gnome-keyring not installed (Debian: gnome-keyring)"
            )
        for sub in ("run", "data", "config", "cache"):
            (self.root / sub).mkdir(parents=True, exist_ok=True, mode=0o700)
        self.env = {
            "XDG_RUNTIME_DIR": str(self.root / "run"),
            "XDG_DATA_HOME": str(self.root / "data"),
            "XDG_CONFIG_HOME": str(self.root / "config"),
            "XDG_CACHE_HOME": str(self.root / "cache"),
        }
        out = subprocess.run(
            [dbus, "--session", "--fork", "--nopidfile", "--print-address=1", "--print-pid=1"],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, **self.env},
        ).stdout.split()
        self.env["DBUS_SESSION_BUS_ADDRESS"] = out[0]
        self._bus_pid = int(out[1])
        self._apply_env()
        if self.with_daemon:
            self._start_daemon(self.password)
        return self

    def restart_daemon(self, password: str | None) -> None:
        """Restart gnome-keyring with `password`: a wrong one leaves the keyring locked."""
        self._stop_daemon()
        self._start_daemon(password)

    def _start_daemon(self, password: str | None) -> None:
        gkd = which("gnome-keyring-daemon")
        assert gkd
        self._daemon = subprocess.Popen(
            [gkd, "--foreground", "--unlock", "--components=secrets"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, **self.env},
            start_new_session=True,
        )
        assert self._daemon.stdin
        self._daemon.stdin.write((password or "").encode())
        self._daemon.stdin.close()
        wait_for(self._secret_service_up, 15, "gnome-keyring's Secret Service")

    def _secret_service_up(self) -> bool:
        """Whether our daemon owns the Secret Service name. (secretstorage's
        check_service_availability also says yes when the name is merely activatable; a first
        call would then D-Bus-activate a second, password-less daemon that can win the name and
        leave the login collection locked.)"""
        try:
            import secretstorage
            from jeepney.bus_messages import message_bus
            from jeepney.io.blocking import Proxy

            conn = secretstorage.dbus_init()
            try:
                return bool(Proxy(message_bus, conn).NameHasOwner("org.freedesktop.secrets")[0])
            finally:
                conn.close()
        except Exception:
            return False

    def _apply_env(self) -> None:
        for k in ENV_KEYS:
            self._saved.setdefault(k, os.environ.get(k))
            os.environ[k] = self.env[k]

    def _stop_daemon(self) -> None:
        if self._daemon and self._daemon.poll() is None:
            os.killpg(self._daemon.pid, signal.SIGTERM)
            try:
                self._daemon.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self._daemon.pid, signal.SIGKILL)
                self._daemon.wait(5)
        self._daemon = None

    def stop(self) -> None:
        self._stop_daemon()
        if self._bus_pid:
            try:
                os.kill(self._bus_pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            self._bus_pid = None
        for k, v in self._saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self._saved.clear()

    def backend(self):  # type: ignore[no-untyped-def]
        """keyring's SecretService backend bound to this session's bus."""
        from keyring.backends import SecretService

        return SecretService.Keyring()
