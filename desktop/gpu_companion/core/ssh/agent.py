"""The app's own ssh-agent: `ssh-agent -D -a SOCK` in a private runtime dir while the app runs.

Keys go in from the keyring through `ssh-add -t LIFETIME -` (stdin, never a file), so rsync, the
app's `ssh -F`, and the user's terminal `ssh ALIAS` work with no private key on disk. The runtime
dir's path is stable per data dir, so the managed ssh config can name it even while the app is
closed; ssh then says `no such identity: .../start-GPU-Companion-to-use-this-key/<platform>`.
Nothing is trusted for being there: the dir and the socket are checked (runtime.py) before the
app attaches to an agent and before each key goes in.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.ssh.config_writer import atomic_write
from gpu_companion.core.ssh.runtime import (
    SOCKET_PATH_MAX,
    check_agent_socket,
    check_private_dir,
    ensure_private_dir,
    parents_problem,
    private_dir_problem,
    recorded_temp_dir,
)
from gpu_companion.core.ssh.vault import KeyVault, StoredKey

log = logging.getLogger(__name__)

DEFAULT_LIFETIME_S = 12 * 3600  # a working day; the app adds the key again on the next use
# ssh reports a missing IdentityFile by its path: the folder's name is the message a user reads
# when the app is closed ("no such identity: .../start-GPU-Companion-to-use-this-key/vast-ai").
IDENTITY_DIR = "start-GPU-Companion-to-use-this-key"
CONTROL_PERSIST_S = 120
# the longest socket path under the runtime dir: ssh binds `ControlPath=<cm>/%C` (40 hex
# characters) as `<path>.<16 random characters>` first
_LONGEST_TAIL = len("/cm/") + 40 + len(".") + 16


@dataclass(frozen=True)
class RuntimePaths:
    """Where the agent socket, the public key stems and the shared-connection sockets live."""

    root: Path

    @property
    def socket(self) -> Path:
        return self.root / "agent.sock"

    @property
    def identity_dir(self) -> Path:
        return self.root / IDENTITY_DIR

    @property
    def control_dir(self) -> Path:
        return self.root / "cm"

    def identity_stem(self, public_path: Path) -> Path:
        """The IdentityFile ssh is given: `<stem>.pub` exists only while the key is loaded."""
        return self.identity_dir / public_path.name.removesuffix(".pub")

    @classmethod
    def for_data_dir(cls, data_dir: Path, base: Path | None = None) -> RuntimePaths:
        """$XDG_RUNTIME_DIR (a private per-user tmpfs) when it is private and short enough, named
        by a hash of the data dir so two app homes never share an agent; else `run` in the data
        dir; else (a long home, macOS) a fresh mkdtemp name under /tmp that the data dir records
        for the app's other processes. Never a name a neighbour can guess and make first; make()
        and each use check the dir again."""
        tag = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:10]
        if base is not None:
            return cls(base / f"gpu-companion-{tag}")
        xdg = os.environ.get("XDG_RUNTIME_DIR", "")
        if xdg and os.path.isabs(xdg):
            root = Path(xdg) / f"gpu-companion-{tag}"
            if _fits(root) and private_dir_problem(Path(xdg)) is None:
                return cls(root)
        own = Path(os.path.abspath(data_dir)) / "run"
        if _fits(own) and parents_problem(own) is None:
            return cls(own)
        return cls(recorded_temp_dir(data_dir))

    def make(self) -> None:
        """Create the dirs 0700, or check the ones there: UserError for a dir that is another
        user's, open to others, or a link (someone made it first), and nothing is used."""
        ensure_private_dir(self.root)
        for sub in (self.identity_dir, self.control_dir):
            ensure_private_dir(sub)

    def check(self) -> None:
        """UserError unless the dir is still a private one of ours: before each use."""
        check_private_dir(self.root)


def _fits(root: Path) -> bool:
    return len(os.fsencode(root)) + _LONGEST_TAIL <= SOCKET_PATH_MAX


class AppAgent:
    """Owns one ssh-agent process; `ensure_for_host` loads the host's platform key on first use.

    `passphrase_for(platform)` answers for passphrase-protected keys (the UI asks once, in a
    dialog, and keeps the answer in memory); None or "" means not known yet.
    """

    def __init__(
        self,
        paths: RuntimePaths,
        vault: KeyVault,
        passphrase_for: Callable[[str], str | None] | None = None,
        lifetime_s: int = DEFAULT_LIFETIME_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.paths = paths
        self.vault = vault
        self.passphrase_for = passphrase_for
        self.lifetime_s = lifetime_s
        self.clock = clock
        self._proc: subprocess.Popen[bytes] | None = None
        self._watchdog: _AgentWatchdog | None = None
        self._attached = False  # using the window's agent from a CLI command
        self._loaded: dict[str, tuple[str, float]] = {}  # platform -> (fingerprint, expiry)
        self._lock = threading.Lock()

    # --- the process --------------------------------------------------------------------

    @property
    def running(self) -> bool:
        if self._attached:
            return self.paths.socket.exists()
        return self._proc is not None and self._proc.poll() is None

    def start_or_attach(self, timeout_s: float = 10) -> None:
        """For a CLI command: use the window's agent when one answers on the data dir's socket
        (never restart it: that would end the window's keys), else start one for this process,
        stopped again when the command closes its services. Two commands started together take
        turns (a file lock): one starts the agent, the other attaches to it."""
        import fcntl

        with self._lock:
            if self.running:
                return
            self.paths.make()  # or checks a dir someone else made, opened or linked: refused
            fd = os.open(self.paths.root / "agent.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW,
                         0o600)  # fmt: skip
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                if self._answers():
                    self._attached = True
                    return
                self._start_locked(timeout_s)
            finally:
                os.close(fd)  # closing drops the lock

    def _answers(self) -> bool:
        """Whether an agent of ours answers on the socket; UserError for a socket that is
        another user's or answered by another uid (in a private dir: something is wrong)."""
        try:
            if not stat.S_ISSOCK(os.lstat(self.paths.socket).st_mode):
                return False  # a crash leftover: start() replaces it
            check_agent_socket(self.paths.socket)
        except OSError:
            return False  # nothing listens: the same
        return agent_key_count(self.paths.socket) is not None

    def start(self, timeout_s: float = 10) -> None:
        """Start the agent (a no-op when it runs); UserError when ssh-agent is missing."""
        with self._lock:
            self._start_locked(timeout_s)

    def _start_locked(self, timeout_s: float) -> None:
        if self.running:
            return
        exe = shutil.which("ssh-agent")
        if exe is None:
            raise UserError(
                _(
                    "ssh-agent is not installed, so `ssh ALIAS` and rsync cannot use the keys "
                    "kept in the keyring."
                ),
                hint=_("Install the OpenSSH client (Debian: openssh-client)."),
            )
        self.paths.make()
        self._stale_cleanup()
        self._proc = subprocess.Popen(
            [exe, "-D", "-a", str(self.paths.socket)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a kill -9 of the app: _AgentWatchdog ends it
        )
        deadline = self.clock() + timeout_s
        while not self.paths.socket.exists():
            if self._proc.poll() is not None or self.clock() > deadline:
                err = (
                    self._proc.stderr.read().decode(errors="replace")
                    if self._proc.stderr
                    else ""
                )
                self._kill()
                raise UserError(
                    _("The app's ssh-agent did not start: {error}.").format(
                        error=err.strip() or _("no socket")
                    )
                )
            time.sleep(0.01)
        self._loaded.clear()
        atomic_write(self.paths.root / "agent.pid", str(self._proc.pid).encode())
        self._watchdog = _AgentWatchdog(self._proc.pid)
        log.info("ssh-agent started at %s", self.paths.socket)

    def _stale_cleanup(self) -> None:
        """What a crash left: the old agent (it outlives the app; its pid file names it), its
        socket and the public stems."""
        pid_file = self.paths.root / "agent.pid"
        try:
            pid = int(pid_file.read_text())
        except (OSError, ValueError):
            pid = 0
        if pid > 0 and _is_our_agent(pid, self.paths.socket):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            # it unlinks its socket path on the way out: wait, or it would take the new one
            deadline = time.monotonic() + 5
            while _is_our_agent(pid, self.paths.socket) and time.monotonic() < deadline:
                time.sleep(0.01)
        pid_file.unlink(missing_ok=True)
        self.paths.socket.unlink(missing_ok=True)
        close_control_masters(self.paths.control_dir)  # a dead run's shared connections
        for stale in self.paths.identity_dir.glob("*.pub"):
            stale.unlink()

    def stop(self) -> None:
        """Close shared connections, end the agent, remove the runtime dir; a no-op for an agent
        this object did not start (a CLI command must not end the window's agent)."""
        with self._lock:
            if self._proc is None:
                return
            close_control_masters(self.paths.control_dir)
            self._kill()
            self._loaded.clear()
            shutil.rmtree(self.paths.root, ignore_errors=True)

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        watchdog, self._watchdog = self._watchdog, None
        if watchdog is not None:
            watchdog.dismiss()
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stderr:
            proc.stderr.close()

    # --- keys -----------------------------------------------------------------------------

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """An environment whose SSH_AUTH_SOCK is the app's agent."""
        env = dict(os.environ if base is None else base)
        env["SSH_AUTH_SOCK"] = str(self.paths.socket)
        return env

    def identities(self) -> list[str]:
        """`ssh-add -l` lines (empty when the agent holds no key or does not run)."""
        if not self.running:
            return []
        done = subprocess.run(
            ["ssh-add", "-l"], env=self.env(), capture_output=True, text=True, timeout=10,
            check=False,
        )  # fmt: skip
        return done.stdout.splitlines() if done.returncode == 0 else []

    def _passphrase(self, stored: StoredKey, hint: str) -> str | None:
        """The passphrase an encrypted key needs (None for a plain one); UserError with `hint`
        when none was typed in this session."""
        if not stored.encrypted:
            return None
        passphrase = self.passphrase_for(stored.platform) if self.passphrase_for else None
        if not passphrase:
            raise UserError(
                _("The {platform} key is protected by a passphrase.").format(
                    platform=stored.platform
                ),
                hint=hint,
            )
        return passphrase

    def ensure_loaded(self, platform: str) -> bool:
        """Load the platform's key unless it is in the agent and not about to expire; False when
        the agent does not run (the caller's ssh then fails with its own words)."""
        if not self.running:
            return False
        stored = self.vault.key(platform)
        if stored is None:
            return False
        with self._lock:
            had = self._loaded.get(platform)
            if had and had[0] == stored.fingerprint and had[1] - 60 > self.clock():
                return True
            passphrase = self._passphrase(
                stored,
                _(
                    "Type it once (Test connection on the Hosts page, or Load into "
                    "ssh-agent on the Keys page); it is kept in memory until the app "
                    "closes."
                ),
            )
            self._check_agent()
            self.vault.load_into_agent(
                platform, self.lifetime_s, passphrase, agent_socket=self.paths.socket
            )
            stem = self.paths.identity_stem(stored.public_path)
            # a rename over the name: a link planted there is replaced, never followed
            atomic_write(
                stem.with_name(stem.name + ".pub"), (stored.public_line + "\n").encode("ascii"),
                mode=0o644,
            )  # fmt: skip
            self._loaded[platform] = (stored.fingerprint, self.clock() + self.lifetime_s)
            return True

    def _check_agent(self) -> None:
        """Right before a key goes in: the dir is still ours and private, and the socket is
        ours and answered by our uid (it may have changed since the attach); else UserError."""
        self.paths.check()
        check_private_dir(self.paths.identity_dir)
        try:
            check_agent_socket(self.paths.socket, started_here=self._proc is not None)
        except OSError as exc:
            raise UserError(
                _("The app's ssh-agent no longer answers at {socket} ({error}).").format(
                    socket=self.paths.socket, error=exc.strerror or exc
                ),
                hint=_("Restart GPU Companion."),
            ) from exc

    def ensure_for_host(self, host: Host) -> None:
        """What the app runs before its own ssh/rsync reach `host`."""
        platform = self.vault.platform_of(host)
        if platform is not None:
            self.ensure_loaded(platform)

    def lend_keys(self, hosts: list[Host], socket: Path) -> list[str]:
        """Put the keys `hosts` need into another agent, a run's own that outlives the app
        (from the keyring through `ssh-add -` on stdin, no lifetime: that agent ends with the
        run). Their public lines, for that run's IdentityFile."""
        lines = []
        for platform in sorted({p for h in hosts if (p := self.vault.platform_of(h))}):
            stored = self.vault.key(platform)
            if stored is None:
                continue
            passphrase = self._passphrase(
                stored,
                _(
                    "Type it once (Test connection on the Hosts page, or Load into "
                    "ssh-agent on the Keys page), then start the run again."
                ),
            )
            self.vault.load_into_agent(platform, None, passphrase, agent_socket=socket)
            lines.append(stored.public_line)
        return lines

    def preload(self, platforms: list[str]) -> list[str]:
        """Load the keys that need no passphrase (at start-up, for the terminal); the problems."""
        problems = []
        for platform in platforms:
            stored = self.vault.key(platform)
            if stored is None or (stored.encrypted and not self._passphrase_known(platform)):
                continue
            try:
                self.ensure_loaded(platform)
            except UserError as exc:
                problems.append(f"{platform}: {exc}")
        return problems

    def _passphrase_known(self, platform: str) -> bool:
        return bool(self.passphrase_for and self.passphrase_for(platform))


def _is_our_agent(pid: int, socket: Path) -> bool:
    """Whether `pid` is an ssh-agent serving `socket` (a recycled pid must not be killed)."""
    try:
        words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        done = subprocess.run(
            ["ps", "-o", "command=", "-p", str(pid)], capture_output=True, check=False
        )
        words = done.stdout.split()
    return any(w.endswith(b"ssh-agent") for w in words) and os.fsencode(socket) in words


def agent_key_count(socket: Path) -> int | None:
    """How many keys the agent at `socket` holds; None when nothing answers there."""
    try:
        done = subprocess.run(
            ["ssh-add", "-l"], env={**os.environ, "SSH_AUTH_SOCK": str(socket)},
            capture_output=True, text=True, timeout=10, check=False,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode == 0:
        return len(done.stdout.splitlines())
    return 0 if done.returncode == 1 else None


def control_options(control_dir: Path, persist_s: int = CONTROL_PERSIST_S) -> list[str]:
    """One shared connection per host for the app's own ssh and rsync (never for the terminal)."""
    return [
        "-o",
        "ControlMaster=auto",
        "-o",
        f"ControlPersist={persist_s}",
        "-o",
        f"ControlPath={control_dir}/%C",
    ]


# Reads the app's end of a pipe: end-of-file without a word means the app died (kill -9, a
# crash), and the agent it started goes too, the keys with it. ssh-agent is setgid on Debian, so
# a parent-death signal set before its exec is cleared: this small watcher keeps one instead.
_WATCHDOG = (
    'if ! read -r word; then '
    'grep -q ssh-agent "/proc/$1/cmdline" 2>/dev/null && kill "$1"; fi'
)


class _AgentWatchdog:
    def __init__(self, agent_pid: int) -> None:
        read_end, self._write_end = os.pipe()  # not inherited by later children
        try:
            self._proc = subprocess.Popen(
                ["sh", "-c", _WATCHDOG, "sh", str(agent_pid)],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            os.close(read_end)

    def dismiss(self) -> None:
        """The app stops the agent itself: the watcher leaves without a signal."""
        try:
            os.write(self._write_end, b"stop\n")
        except OSError:
            pass
        os.close(self._write_end)
        try:
            self._proc.wait(5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


def close_control_masters(control_dir: Path) -> int:
    """`ssh -O exit` each shared connection (they would otherwise outlive the app by minutes)."""
    closed = 0
    if not control_dir.is_dir():
        return 0
    for sock in control_dir.iterdir():
        if not sock.is_socket():
            continue
        subprocess.run(
            ["ssh", "-F", "/dev/null", "-o", f"ControlPath={sock}", "-O", "exit", "control"],
            capture_output=True, timeout=10, check=False,
        )  # fmt: skip
        closed += 1
    return closed


def auth_help(host: Host, vault: KeyVault, agent: AppAgent | None = None) -> str:
    """The plain words for "Permission denied (publickey)": which key the host must hold and
    where to paste it (a refused key is never retried: it will not start working by itself)."""
    platform = vault.platform_of(host)
    stored = vault.key(platform) if platform else None
    where = f"{host.user}@{host.hostname}:{host.port}"
    if stored is None:
        if platform:
            text = _(
                "{where} refused the login and {alias} has no key in GPU Companion "
                "(platform {platform}). Generate or import the platform's key on the Keys page, "
                "then paste its public key into the platform's console."
            ).format(where=where, alias=host.alias, platform=repr(platform))
        else:
            text = _(
                "{where} refused the login and {alias} has no key in GPU Companion "
                "(no platform chosen). Generate or import the platform's key on the Keys page, "
                "then paste its public key into the platform's console."
            ).format(where=where, alias=host.alias)
    else:
        text = _(
            "{where} refused the {platform} key ({kind} {fingerprint}). "
            "The instance must hold that public key: copy it on the Keys page "
            "({path}) and paste it into {platform}'s SSH keys in its console, "
            "or into ~/.ssh/authorized_keys on the instance, then start the job again."
        ).format(
            where=where,
            platform=platform,
            kind=stored.kind.upper(),
            fingerprint=stored.fingerprint,
            path=stored.public_path,
        )
    if agent is not None and not agent.running:  # the likelier cause comes first
        text = _(
            "GPU Companion's own ssh-agent is not running, so ssh had no key to offer: restart "
            "the app. If the login is still refused: {text}"
        ).format(text=text)
    return text
