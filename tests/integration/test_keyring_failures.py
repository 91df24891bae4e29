"""The three real ways a keyring fails, each with its own message and nothing written instead.

Each test runs its own private D-Bus/gnome-keyring so the shared, unlocked one stays untouched.
"""

from __future__ import annotations

import pytest

from gpu_companion.core.hosts.registry import Host, HostRegistry, Platform
from gpu_companion.core.ssh.config_writer import SshConfigWriter
from gpu_companion.core.ssh.connection import ConnectionProblem, SessionFactory
from gpu_companion.core.ssh.keyring_errors import KeyringUnavailable
from gpu_companion.core.ssh.managed import entries_from_registry
from gpu_companion.core.ssh.vault import KeyVault
from tests.harness.keyring_session import KeyringSession
from tests.harness.sshd import ComponentMissing

pytestmark = pytest.mark.keyring


@pytest.fixture
def own_session(tmp_path, keyring_session):
    sessions = []

    def start(**kwargs):
        s = KeyringSession(tmp_path / f"kr{len(sessions)}", **kwargs)
        sessions.append(s)
        try:
            return s.start()
        except ComponentMissing as exc:
            from tests.conftest import missing_component

            missing_component(str(exc))

    yield start
    for s in reversed(sessions):
        s.stop()


def assert_refused_cleanly(vault, kind, words):
    with pytest.raises(KeyringUnavailable) as info:
        vault.generate("vast.ai")
    assert info.value.kind == kind
    text = str(info.value)
    for w in words:
        assert w in text
    assert "Traceback" not in text
    # nothing was stored anywhere instead: no metadata, no public key file
    assert vault.keys() == []
    assert not vault.public_key_path("vast.ai").exists()
    with pytest.raises(KeyringUnavailable):
        vault.check_keyring()


def test_wrong_unlock_password_means_locked(own_session, store, tmp_path):
    session = own_session(password="the right one")
    vault = KeyVault(store, tmp_path / "keys", session.backend())
    vault.check_keyring()  # works while unlocked
    session.restart_daemon("a wrong one")
    assert_refused_cleanly(vault, "locked", ["locked", "Unlock it"])


def test_bus_without_keyring_daemon_means_prompt_dismissed(own_session, store, tmp_path):
    session = own_session(with_daemon=False)
    vault = KeyVault(store, tmp_path / "keys", session.backend())
    assert_refused_cleanly(vault, "dismissed", ["dismissed", "Start your keyring"])


def test_no_dbus_at_all_means_no_backend(keyring_session, store, tmp_path, monkeypatch):
    from keyring.backends import SecretService, fail

    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS")
    for backend in (SecretService.Keyring(), fail.Keyring()):
        vault = KeyVault(store, tmp_path / "keys", backend)
        assert_refused_cleanly(vault, "no_backend", ["Secret Service", "never stored in plain"])


def test_a_locked_keyring_blocks_only_what_needs_the_key(
    own_session, store, tmp_path, isolated_home
):
    session = own_session(password="pw")
    vault = KeyVault(store, tmp_path / "keys", session.backend())
    reg = HostRegistry(store)
    p = reg.save_platform(Platform("vast.ai"))
    host = reg.save_host(Host("gpu1", "127.0.0.1", 22, "root", platform_id=p.id))
    vault.generate("vast.ai")
    session.restart_daemon("wrong")
    with pytest.raises(KeyringUnavailable) as info:
        vault.load_pkey("vast.ai")
    assert info.value.kind == "locked"
    # the app's own connection explains it instead of failing with a traceback
    writer = SshConfigWriter(isolated_home)
    with pytest.raises(ConnectionProblem) as problem:
        SessionFactory(vault, writer.known_hosts).connect(host)
    assert problem.value.kind == "keyring" and "Unlock it" in str(problem.value)
    # what does not need the private key keeps working: the ssh config uses the public file
    result = writer.write(entries_from_registry(reg, vault))
    assert writer.config_path in result.changed
    assert str(vault.key("vast.ai").public_path) in writer.config_path.read_text()


class PlaintextKeyring:
    """Stands for keyrings.alt's file backend, which keyring may pick (or chain to)."""

    __module__ = "keyrings.alt.file"

    def __init__(self):
        self.written = {}

    def get_password(self, service, user):
        return self.written.get((service, user))

    def set_password(self, service, user, secret):
        self.written[(service, user)] = secret


def test_a_plain_text_backend_is_never_used(store, tmp_path, keyring_backend, monkeypatch):
    from keyring.backends import chainer

    from gpu_companion.core.ssh.vault import safe_backend

    plain = PlaintextKeyring()
    vault = KeyVault(store, tmp_path / "keys", plain)
    assert_refused_cleanly(vault, "no_backend", ["never stored in plain"])
    assert plain.written == {}
    # in a chain, the plain-text fallback is dropped and the real keyring kept
    monkeypatch.setattr(
        chainer.ChainerBackend, "backends", property(lambda self: [plain, keyring_backend])
    )
    assert safe_backend(chainer.ChainerBackend()) is keyring_backend
