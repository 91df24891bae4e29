"""A real OpenSSH server on 127.0.0.1 and a free port, with its own host key and authorized keys."""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .util import free_port, port_open, wait_for, which


class ComponentMissing(RuntimeError):
    """A real component the tests need is not installed."""


@dataclass
class SshServer:
    """sshd -D on 127.0.0.1:<free port>, every file it uses under `root`.

    `path_prefix` dirs go first on each session's PATH (SetEnv), which is how the nvidia-smi
    stand-in and a hidden rsync reach remote commands. `env` adds more SetEnv variables.
    `launcher` prefixes the sshd argv (e.g. `unshare --pid --fork --mount-proc` for a host whose
    process list holds only its own sessions, as a rented container's does; `kill_sessions`
    does not apply then).
    """

    root: Path
    path_prefix: list[Path] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    launcher: list[str] = field(default_factory=list)
    port: int = 0
    user: str = field(default_factory=lambda: _current_user())
    proc: subprocess.Popen[bytes] | None = None

    @property
    def host_key_path(self) -> Path:
        return self.root / "ssh_host_ed25519_key"

    @property
    def authorized_keys(self) -> Path:
        return self.root / "authorized_keys"

    @property
    def log_path(self) -> Path:
        return self.root / "sshd.log"

    def start(self) -> SshServer:
        sshd = which("sshd")
        keygen = which("ssh-keygen")
        if not sshd or not keygen:
            raise ComponentMissing("OpenSSH server not installed (Debian: openssh-server)")
        self.root.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
        if not self.host_key_path.exists():
            self.regenerate_host_key(restart=False)
        self.authorized_keys.touch(mode=0o600, exist_ok=True)
        self.port = self.port or free_port()
        self._write_config()
        self._spawn(sshd)
        return self

    def _write_config(self) -> None:
        path = ":".join(
            [*(str(p) for p in self.path_prefix), os.environ.get("PATH", "/usr/bin:/bin")]
        )
        env = " ".join(f"{k}={v}" for k, v in {"PATH": path, **self.env}.items())
        lines = [
            "ListenAddress 127.0.0.1",
            f"Port {self.port}",
            f"HostKey {self.host_key_path}",
            f"PidFile {self.root / 'sshd.pid'}",
            f"AuthorizedKeysFile {self.authorized_keys}",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "PubkeyAuthentication yes",
            "PermitRootLogin prohibit-password",
            "UsePAM no",
            "StrictModes no",
            "PrintMotd no",
            "LogLevel VERBOSE",
            "MaxStartups 200",
            "MaxSessions 50",
            "Subsystem sftp internal-sftp",
            f"SetEnv {env}",
        ]
        (self.root / "sshd_config").write_text("\n".join(lines) + "\n")

    def _spawn(self, sshd: str) -> None:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [*self.launcher, sshd, "-D", "-e", "-f", str(self.root / "sshd_config")],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        try:
            wait_for(lambda: port_open(self.port) or self.proc.poll() is not None, 10, "sshd")
        finally:
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited: {self.log_path.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        sshd = which("sshd")
        assert sshd
        self._write_config()
        self._spawn(sshd)

    def kill_sessions(self) -> int:
        """Kill every per-connection sshd child (cuts live connections, keeps the listener)."""
        if not self.proc:
            return 0
        out = subprocess.run(
            ["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
        for pid in out:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        return len(out)

    def regenerate_host_key(self, restart: bool = True) -> None:
        """A new host key, as a new instance behind a recycled address would have."""
        self.host_key_path.unlink(missing_ok=True)
        Path(str(self.host_key_path) + ".pub").unlink(missing_ok=True)
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(self.host_key_path)],
            check=True,
        )
        if restart and self.proc:
            self.restart()

    def host_public_key(self) -> str:
        return Path(str(self.host_key_path) + ".pub").read_text().split()[1]

    def known_hosts_line(self) -> str:
        return f"[127.0.0.1]:{self.port} ssh-ed25519 {self.host_public_key()}\n"

    def authorize(self, public_key_line: str) -> None:
        with self.authorized_keys.open("a") as f:
            f.write(public_key_line.strip() + "\n")


def _current_user() -> str:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name
