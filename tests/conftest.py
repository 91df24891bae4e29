"""Shared fixtures: isolation from the real user's files, and the harness of real services.

The harness (tests/harness) starts a real OpenSSH server, a real Secret Service keyring in a private
D-Bus session and an nvidia-smi stand-in. In CI (CI=true) a missing component fails the test;
elsewhere it skips with the reason.
"""

from __future__ import annotations

import io
import os
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
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
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
    return home


@pytest.fixture
def app_paths(isolated_home: Path):  # type: ignore[no-untyped-def]
    from gpu_companion.core.paths import AppPaths

    return AppPaths.default().ensure()


@pytest.fixture
def store(app_paths):  # type: ignore[no-untyped-def]
    from gpu_companion.core.store import Store

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


# --- SSH clients for the monitor (until the keyring-backed SessionFactory is wired in) -------


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
        client.load_host_keys(str(known_hosts))
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        opened.append(client)
        client.connect(
            "127.0.0.1",
            port=sshd.port,
            username=sshd.user,
            pkey=client_identity.private_key,
            allow_agent=False,
            look_for_keys=False,
            timeout=10,
        )
        return client

    connect.known_hosts = known_hosts  # type: ignore[attr-defined]
    yield connect
    for client in opened:
        client.close()
