"""The notification center on the test store and the manual clock, with real local servers.

Secrets live in `MemorySecrets` here (the keyring is not what these tests are about; the CLI
tests in tests/integration/test_notify_channels.py use the harness keyring)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timezone

import pytest

from tests.harness.fake_notify import FakeNotify


class MemorySecrets:
    """The vault's secret API over a dict; `fail_set` makes the next store refuse."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.fail_set = False

    def secret(self, name: str) -> str | None:
        return self.values.get(name)

    def set_secret(self, name: str, value: str) -> None:
        if self.fail_set:
            from gpu_companion.core.common.errors import UserError

            raise UserError("The keyring is locked.")
        self.values[name] = value

    def delete_secret(self, name: str) -> None:
        self.values.pop(name, None)


@pytest.fixture
def secrets() -> MemorySecrets:
    return MemorySecrets()


@pytest.fixture
def center(store, secrets, manual_clock) -> Iterator[object]:  # type: ignore[no-untyped-def]
    from gpu_companion.core.notify.center import NotifyCenter

    c = NotifyCenter(store, secrets, manual_clock, tz=timezone.utc, timeout_s=3)
    yield c
    c.stop()


@pytest.fixture
def http_server() -> Iterator[FakeNotify]:
    with FakeNotify() as server:
        yield server
