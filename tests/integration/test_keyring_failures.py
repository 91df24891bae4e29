"""The three real ways a keyring fails, each with its own message and nothing written instead.

Each test runs its own private D-Bus/gnome-keyring so the shared, unlocked one stays untouched.
"""

from __future__ import annotations

import pytest

from gpu_companion.core.keyring_errors import KeyringUnavailable
from gpu_companion.core.keyvault import KeyVault
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
    vault.check_keyring()  # works while unlocked (creates the collection)
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


def test_a_key_made_while_unlocked_is_unreadable_once_locked(own_session, store, tmp_path):
    session = own_session(password="pw")
    vault = KeyVault(store, tmp_path / "keys", session.backend())
    vault.generate("vast.ai")
    session.restart_daemon("wrong")
    with pytest.raises(KeyringUnavailable) as info:
        vault.load_pkey("vast.ai")
    assert info.value.kind == "locked"
    assert vault.key("vast.ai") is not None  # the metadata and public key stay usable
