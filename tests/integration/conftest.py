"""Fixtures for the integration tests: the app's own transfer queue, wired as shipped."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.integration.transfer_helpers import ShippedTransfers


@pytest.fixture
def ship(app_paths, keyring_backend, monkeypatch) -> Iterator[Callable[..., ShippedTransfers]]:  # type: ignore[no-untyped-def]
    """`ship(server, passphrase=None)`: the app's Services with one host on `server`, as a user has
    it after the wizard (see ShippedTransfers); its key leaves the keyring afterwards."""
    import keyring.core

    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)  # only the app's own agent
    # what keyring picks in a fresh process on this desktop: the Secret Service on the harness
    # bus (keyring caches its first pick per process, so an earlier test may have seen none)
    monkeypatch.setattr(keyring.core, "_keyring_backend", keyring_backend)
    made: list[ShippedTransfers] = []

    def make(server, passphrase: str | None = None) -> ShippedTransfers:  # type: ignore[no-untyped-def]
        made.append(ShippedTransfers(app_paths, server, passphrase=passphrase))
        return made[-1]

    yield make
    for shipped in made:
        shipped.close()


@pytest.fixture
def shipped_transfers(ship, sshd) -> ShippedTransfers:  # type: ignore[no-untyped-def]
    """The app's queue (`.queue` is `Services.transfers`) and host `gpu-test` on the harness
    sshd, through the app's managed ssh config, its ssh-agent and its known_hosts."""
    return ship(sshd)
