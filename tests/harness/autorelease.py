"""Auto-release test rigs shared by the integration and window tests: a moved clock, a local
server that answers like vast.ai's API (reached by the real vastai client code), and a rented
harness host with an idle policy."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harness.fake_vast import FakeVast
from tests.harness.util import wait_for


class Clock:
    """Real time plus an offset the test moves (readings keep their real timestamps)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, minutes: float) -> None:
        self.offset += minutes * 60


@pytest.fixture
def vast_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeVast]:
    """A local server that answers like vast.ai's REST API (the real `vastai` client code talks
    to it through `VAST_URL`), with instance 4242 running."""
    with FakeVast() as fake:
        fake.add_instance(4242, label="box-a", gpu_name="RTX 4090", num_gpus=1, dph_total=2.4)
        monkeypatch.setenv("VAST_URL", fake.url)
        yield fake


def link_vast(services: Any, fake: FakeVast, platform_id: int) -> None:
    """The host's platform talks to `fake` through a vast.ai account (its key in the keyring)."""
    platform = services.registry.platform(platform_id)
    services.providers.add("vast.ai", fake.api_key, platform=platform.name)


def calls(fake: FakeVast) -> list[list[str]]:
    """What was asked of vast.ai that changes an instance: destroy or stop, by id."""
    out = []
    for (method, path), body in zip(
        [r for r in fake.requests if r[0] in ("DELETE", "PUT")], fake.bodies, strict=False
    ):
        iid = path.rstrip("/").rsplit("/", 1)[-1]
        if method == "DELETE":
            out.append(["destroy", "instance", iid])
        elif isinstance(body, dict) and body.get("state") == "stopped":
            out.append(["stop", "instance", iid])
    return out


@pytest.fixture
def rented(fleet, standin, vast_api, tmp_path: Path):  # type: ignore[no-untyped-def]
    """box-a rented on vast.ai (instance 4242), a checklist whose one item is a job marker,
    an idle-after-1-minute policy with a 1-minute notice, and the service on a moved clock."""
    from dataclasses import replace

    from gpu_companion.core.autorelease.policy import Policy
    from gpu_companion.core.autorelease.service import AutoReleaseService, save_policy
    from gpu_companion.core.release.config import ChecklistConfig, CustomCommand

    s = fleet.services
    host = replace(s.registry.host("box-a"), instance_id="4242")
    host = s.registry.save_host(host)
    link_vast(s, vast_api, host.platform_id)
    marker = tmp_path / "job-saved"
    s.release.settings.save_config(host.alias, ChecklistConfig(
        manual=(), disabled=("checkpoints", "archive", "leftovers", "processes"),
        custom=(CustomCommand("results saved", f"test -e {marker}"),)))  # fmt: skip
    save_policy(s.store, host.id, Policy(idle_minutes=1, stall_minutes=1, notice_minutes=1))
    rental = s.ledger.start_rental(host.platform_id, "2.40", host_id=host.id)
    clock = Clock()
    service = AutoReleaseService(s.store, s.registry, s.ledger, s.release, s.notifier, wall=clock,
                                 last_sync=s.transfers.last_verified_download)  # fmt: skip
    s.monitor().subscribe(service.on_event)
    messages: list[str] = []
    s.notifier.subscribe(lambda m: messages.append(m.text))
    s.monitor().watch(host)
    return s, host, rental, service, clock, marker, messages


def wait_for_readings(service, alias: str = "box-a") -> None:  # type: ignore[no-untyped-def]
    wait_for(lambda: service.detectors.get(alias) is not None
             and service.detectors[alias].last_seen is not None, 30, "readings")  # fmt: skip
