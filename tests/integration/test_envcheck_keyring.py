"""The environment check's keyring probe against a real gnome-keyring (unlocked and locked)."""

from __future__ import annotations

import pytest

from gpu_companion.core.system.envcheck import OsInfo, check_keyring

DEBIAN = OsInfo("linux", ("debian",), "Debian GNU/Linux 12 (bookworm)")


@pytest.mark.keyring
def test_unlocked_keyring_is_usable(keyring_backend):
    result = check_keyring(DEBIAN, keyring_backend)
    assert result.ok, result
    assert "SecretService" in result.detail


@pytest.mark.keyring
def test_locked_keyring_is_reported(keyring_session, keyring_backend):
    keyring_session.restart_daemon("not-the-password")
    try:
        result = check_keyring(DEBIAN, keyring_session.backend())
    finally:
        keyring_session.restart_daemon(keyring_session.password)
    assert not result.ok
    assert result.detail == "The system keyring is locked and could not be unlocked."
    assert result.fix.startswith("Unlock it")
