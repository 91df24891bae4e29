"""Shared fixtures: isolation from the real user's files, and the harness of real services.

The harness (tests/harness) starts a real OpenSSH server, a real Secret Service keyring in a private
D-Bus session and an nvidia-smi stand-in. In CI (CI=true) a missing component fails the test;
elsewhere it skips with the reason.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from tests.harness.keyring_session import KeyringSession  # noqa: E402
from tests.harness.sshd import ComponentMissing, SshServer  # noqa: E402
from tests.harness.standin import NvidiaSmiStandIn  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing_component(reason: str) -> None:
    """In CI a missing real component fails the test; elsewhere it skips with the reason."""
    if IN_CI:
        pytest.fail(f"required test component missing in CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def shared_fixtures() -> Path:
    """The real captured tool outputs in ../shared/fixtures (reference data, never copied here)."""
    path = Path(
        os.environ.get("GPU_COMPANION_SHARED_FIXTURES", REPO.parent / "shared" / "fixtures")
    )
    if not path.is_dir():
        missing_component(f"shared fixtures not found at {path}")
    return path


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A temporary HOME, XDG dirs and app dir per test: nothing touches the real user's files."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True, mode=0o700)
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_CACHE_HOME", ".cache"),
    ):
        (home / sub).mkdir(parents=True, exist_ok=True)
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.setenv("GPU_COMPANION_HOME", str(tmp_path / "app"))
    # a short private runtime dir, as a desktop session gives one: the app's agent socket and
    # shared connections go there (pytest's own paths are too long for a Unix socket)
    runtime = Path(tempfile.mkdtemp(prefix="gc-rt-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    # English unless a test asks for another language (the `zh_cn` fixture)
    for var in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    yield home
    shutil.rmtree(runtime, ignore_errors=True)
    from gpu_companion.core.common import i18n

    if i18n.current() != i18n.DEFAULT:
        i18n.install(i18n.DEFAULT)


@pytest.fixture
def zh_cn(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """This test speaks Simplified Chinese: the locale says so, gettext's catalogs are
    installed (and, when a QApplication exists, Qt's); English again afterwards."""
    from gpu_companion.core.common import i18n

    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    language = i18n.choose(None, None)  # as the app chooses: no --lang, no setting
    assert language == "zh_CN"
    i18n.install(language)
    app = None
    if "PySide6.QtWidgets" in sys.modules:
        from PySide6.QtWidgets import QApplication

        app = QApplication.instance()
    if app is not None:
        from gpu_companion.ui.common.i18n import install_translators

        install_translators(app, language)
    yield language
    if app is not None:
        from gpu_companion.ui.common.i18n import install_translators

        install_translators(app, i18n.DEFAULT)
    i18n.install(i18n.DEFAULT)


@pytest.fixture
def app_paths(isolated_home: Path):  # type: ignore[no-untyped-def]
    from gpu_companion.core.common.paths import AppPaths

    return AppPaths.default().ensure()


@pytest.fixture
def store(app_paths):  # type: ignore[no-untyped-def]
    from gpu_companion.core.storage.store import Store

    s = Store(app_paths.database)
    yield s
    s.close()


# --- the nvidia-smi stand-in and OpenSSH ---------------------------------------------------


@pytest.fixture
def standin(tmp_path: Path) -> NvidiaSmiStandIn:
    return NvidiaSmiStandIn(tmp_path / "standin")


@dataclass
class ClientIdentity:
    """A client key pair made for one test; the private half lives only in memory."""

    private_key: object  # paramiko.PKey
    public_line: str


def make_ed25519():  # type: ignore[no-untyped-def]
    """A fresh paramiko Ed25519 key, generated in memory."""
    import paramiko
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    pem = (
        Ed25519PrivateKey.generate()
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.OpenSSH,
            serialization.NoEncryption(),
        )
        .decode()
    )
    return paramiko.Ed25519Key.from_private_key(io.StringIO(pem))


def connect_verified(client, known_hosts: Path, port: int, user: str, pkey, host="127.0.0.1"):  # type: ignore[no-untyped-def]
    """Connect `client` as the app would: a known_hosts file, RejectPolicy, one in-memory key."""
    import paramiko

    client.load_host_keys(str(known_hosts))
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    for attempt in (1, 2):
        try:
            client.connect(
                host, port=port, username=user, pkey=pkey, allow_agent=False,
                look_for_keys=False, timeout=10,
            )  # fmt: skip
            return client
        except paramiko.ssh_exception.NoValidConnectionsError:
            # Right after a harness sshd restarts on its port, about one loopback connect in a
            # few hundred is reset at once while the server listens (seen under load; plain
            # connects 30-80 ms later succeeded): the test is about what follows, so once more.
            if attempt == 2:
                raise
            time.sleep(0.1)
    raise AssertionError("unreachable")


@pytest.fixture
def client_identity() -> ClientIdentity:
    pkey = make_ed25519()
    return ClientIdentity(pkey, f"{pkey.get_name()} {pkey.get_base64()} harness-client")


@pytest.fixture
def sshd(
    tmp_path: Path, standin: NvidiaSmiStandIn, client_identity: ClientIdentity
) -> Iterator[SshServer]:
    """A real sshd on 127.0.0.1:<free port>; the stand-in nvidia-smi is first on its PATH and the
    test's client key is authorized."""
    server = SshServer(tmp_path / "sshd", path_prefix=[standin.bin_dir], env=standin.env)
    try:
        server.start()
    except ComponentMissing as exc:
        missing_component(str(exc))
    server.authorize(client_identity.public_line)
    yield server
    server.stop()


# --- the Secret Service keyring ------------------------------------------------------------


@pytest.fixture(scope="session")
def keyring_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KeyringSession]:
    """One unlocked gnome-keyring in a private D-Bus session for the whole run."""
    session = KeyringSession(tmp_path_factory.mktemp("keyring"))
    try:
        session.start()
    except ComponentMissing as exc:
        missing_component(str(exc))
    yield session
    session.stop()


@pytest.fixture
def keyring_backend(keyring_session: KeyringSession, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """keyring's SecretService backend on the harness bus (the D-Bus env survives isolated_home)."""
    for k, v in keyring_session.env.items():
        if k == "DBUS_SESSION_BUS_ADDRESS":
            monkeypatch.setenv(k, v)
    return keyring_session.backend()


# --- the spend ledger on a manual clock --------------------------------------------------------


@pytest.fixture
def manual_clock():  # type: ignore[no-untyped-def]
    """A clock that only moves when the test says so (starts Wed 2025-01-15 09:00 UTC)."""
    from datetime import datetime, timezone

    from gpu_companion.core.common.clock import ManualClock

    return ManualClock(datetime(2025, 1, 15, 9, 0, tzinfo=timezone.utc))


@pytest.fixture
def ledger(store, manual_clock):  # type: ignore[no-untyped-def]
    """A SpendLedger on the test store and the manual clock, periods in UTC, with one platform
    ("vast.ai", USD, per-second billing) and one host ("vast-4090") on it."""
    from datetime import timezone

    from gpu_companion.core.hosts.registry import Host, HostRegistry, Platform
    from gpu_companion.core.spend.ledger import SpendLedger

    reg = HostRegistry(store)
    p = reg.save_platform(Platform("vast.ai", "", "second", "USD"))
    reg.save_host(Host("vast-4090", "ssh4.vast.ai", 41022, "root", p.id, "RTX 4090", 1))
    return SpendLedger(store, manual_clock, tz=timezone.utc)


# --- self-check and wizard: a test host with the real CPU build of torch -------------------


@pytest.fixture
def torch_bin() -> Path:
    """The bin dir of this venv, whose python3 has the CPU build of torch (torch==2.13.0, extra
    `selfcheck-test`): first on a test host's PATH, torch.cuda.is_available() is really False."""
    import importlib.util
    import sys

    if importlib.util.find_spec("torch") is None:
        missing_component(
            "torch==2.13.0 (CPU build) not installed: pip install -e '.[selfcheck-test]'"
        )
    return Path(sys.executable).parent


@pytest.fixture
def torch_sshd(
    tmp_path: Path, standin: NvidiaSmiStandIn, client_identity: ClientIdentity, torch_bin: Path
) -> Iterator[SshServer]:
    """The harness sshd with the nvidia-smi stand-in and then torch's python3 first on PATH; its
    sessions get their own empty HOME, so the login user's dotfiles (a ~/.bashrc that puts pyenv
    first on PATH) do not change which python3 answers."""
    home = tmp_path / "remote-home"
    home.mkdir()
    server = SshServer(
        tmp_path / "sshd-torch",
        path_prefix=[standin.bin_dir, torch_bin],
        env={**standin.env, "HOME": str(home)},
    )
    try:
        server.start()
    except ComponentMissing as exc:
        missing_component(str(exc))
    server.authorize(client_identity.public_line)
    yield server
    server.stop()


@pytest.fixture
def ssh_client_factory(client_identity: ClientIdentity, tmp_path: Path):  # type: ignore[no-untyped-def]
    """`connect(host) -> paramiko.SSHClient` with the harness key, verified against a known_hosts
    file holding the server's key (RejectPolicy): what core/connection.SessionFactory will do."""
    import paramiko

    def factory(server: SshServer):  # type: ignore[no-untyped-def]
        known = tmp_path / f"known_hosts-{server.port}"
        known.write_text(server.known_hosts_line())

        def connect(host):  # type: ignore[no-untyped-def]
            return connect_verified(
                paramiko.SSHClient(), known, host.port, host.user, client_identity.private_key,
                host.hostname,
            )  # fmt: skip

        return connect

    return factory


# --- keys and connections ------------------------------------------------------------------


@pytest.fixture
def vault(store, keyring_backend, app_paths):  # type: ignore[no-untyped-def]
    """A KeyVault on the harness keyring under a service name of its own (removed afterwards)."""
    import uuid

    from gpu_companion.core.ssh.vault import KeyVault

    v = KeyVault(
        store,
        app_paths.data_dir / "keys",
        keyring_backend,
        service=f"gpu-companion-test-{uuid.uuid4().hex[:8]}",
    )
    yield v
    for k in v.keys():
        v.delete(k.platform)


@pytest.fixture
def ssh_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private ssh-agent (`ssh-agent -D -a SOCK`); SSH_AUTH_SOCK points at it."""
    import subprocess
    import time

    from tests.harness.util import which

    agent = which("ssh-agent")
    if not agent:
        missing_component("ssh-agent not installed (Debian: openssh-client)")
    sock = tmp_path / "agent.sock"
    proc = subprocess.Popen(
        [agent, "-D", "-a", str(sock)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 5
    while not sock.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
    yield sock
    proc.terminate()
    proc.wait(5)


# --- transfers: an ssh config and an SFTP client factory for the harness sshd ---------------


@dataclass
class SshTarget:
    """How the transfer engine reaches the harness sshd: `ssh -F <config>` plus a Host whose
    alias is the config's Host name, and a paramiko client factory (RejectPolicy)."""

    host: object  # gpu_companion.core.hosts.registry.Host
    ssh_argv: list[str]
    config_path: Path
    key_path: Path
    server: SshServer
    pkey: object

    def client_factory(self, _host: object = None):  # type: ignore[no-untyped-def]
        import paramiko

        client = paramiko.SSHClient()
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        client.load_host_keys(str(self.config_path.parent / "known_hosts"))
        client.connect(
            "127.0.0.1",
            port=self.server.port,
            username=self.server.user,
            pkey=self.pkey,
            allow_agent=False,
            look_for_keys=False,
            timeout=10,
        )
        return client


@pytest.fixture
def ssh_target(tmp_path: Path, sshd: SshServer) -> SshTarget:
    """A test-only key made by ssh-keygen, authorized on the sshd, and a strict ssh config."""
    import subprocess

    import paramiko

    from gpu_companion.core.hosts.registry import Host

    d = tmp_path / "ssh cfg"  # a space in the path: the engine must quote the -e command
    d.mkdir()
    key = d / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    sshd.authorize((d / "id_ed25519.pub").read_text())
    (d / "known_hosts").write_text(sshd.known_hosts_line())
    config = d / "config"
    config.write_text(
        "Host gpu-test\n"
        "  HostName 127.0.0.1\n"
        f"  Port {sshd.port}\n"
        f"  User {sshd.user}\n"
        f'  IdentityFile "{key}"\n'
        "  IdentitiesOnly yes\n"
        f'  UserKnownHostsFile "{d / "known_hosts"}"\n'
        "  StrictHostKeyChecking yes\n"
        "  BatchMode yes\n"
        "  ConnectTimeout 10\n"
    )
    pkey = paramiko.Ed25519Key.from_private_key_file(str(key))
    host = Host(alias="gpu-test", hostname="127.0.0.1", port=sshd.port, user=sshd.user, id=1)
    return SshTarget(host, ["ssh", "-F", str(config)], config, key, sshd, pkey)


# --- SSH clients for the monitor's collector tests ----------------------------------------


@pytest.fixture
def harness_client_factory(sshd: SshServer, client_identity: ClientIdentity, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A ClientFactory for the harness sshd: the test key from memory, its known_hosts line,
    RejectPolicy. Every host connects to the harness, whatever its hostname says."""
    import paramiko

    known_hosts = tmp_path / "monitor_known_hosts"
    known_hosts.write_text(sshd.known_hosts_line())
    opened: list[paramiko.SSHClient] = []

    def connect(host):  # type: ignore[no-untyped-def]
        client = paramiko.SSHClient()
        opened.append(client)  # closed at teardown even when the connect fails
        return connect_verified(
            client, known_hosts, sshd.port, sshd.user, client_identity.private_key
        )

    connect.known_hosts = known_hosts  # type: ignore[attr-defined]
    yield connect
    for client in opened:
        client.close()


# --- two rented hosts as the app ships them (fleet runs and exports) -----------------------------


@dataclass
class Fleet:
    services: object  # gpu_companion.services.Services
    servers: list[SshServer]
    aliases: list[str]
    platform: str


@pytest.fixture
def second_sshd(tmp_path: Path, standin: NvidiaSmiStandIn) -> Iterator[SshServer]:
    server = SshServer(tmp_path / "sshd-b", path_prefix=[standin.bin_dir], env=standin.env)
    try:
        server.start()
    except ComponentMissing as exc:
        missing_component(str(exc))
    yield server
    server.stop()


@pytest.fixture
def fleet(app_paths, keyring_backend, sshd, second_sshd, monkeypatch) -> Iterator[Fleet]:  # type: ignore[no-untyped-def]
    import keyring.backend
    import keyring.core

    from gpu_companion.core.hosts.registry import Host, Platform
    from gpu_companion.core.ssh.connection import ConnectionProblem
    from gpu_companion.services import build_services

    # keyring picks its backend once per process; pick again on this test's D-Bus, as a fresh
    # app process would
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    monkeypatch.delattr(keyring.backend.get_all_keyring, "saved_result", raising=False)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)  # only the app's own agent
    services = build_services(app_paths)
    platform = f"harness-{uuid.uuid4().hex[:6]}"  # the keyring outlives a test: a fresh name
    p = services.registry.save_platform(Platform(platform))
    key = services.vault.generate(platform)
    servers, aliases = [sshd, second_sshd], ["box-a", "box-b"]
    for alias, server in zip(aliases, servers, strict=True):
        server.authorize(key.public_line)
        host = services.registry.save_host(
            Host(alias, "127.0.0.1", server.port, server.user, p.id, "stand-in", 2)
        )
        with pytest.raises(ConnectionProblem) as first_contact:  # unknown host key: the dialog
            services.sessions.connect(host)
        services.sessions.trust_host_key(host, first_contact.value.key)  # the user said yes
        services.sessions.connect(host).close()
    services.start()  # as run_gui: the app's own ssh-agent, then keys and the managed config
    assert services.start_background() == []
    services.ssh_sync.flush(30)
    yield Fleet(services, servers, aliases, platform)
    services.close()
    services.vault.delete(platform)
