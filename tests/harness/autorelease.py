"""Auto-release test rigs shared by the integration and window tests: a moved clock, a provider
CLI stand-in that records its argv, and a rented harness host with an idle policy."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

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
def provider_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`vastai` on PATH: records its argv, answers like the real CLI would (`show instance ID`
    with its table, `destroy`/`stop` with a line)."""
    bin_dir = tmp_path / "provider-bin"
    bin_dir.mkdir()
    log = tmp_path / "vastai-calls.jsonl"
    script = bin_dir / "vastai"
    script.write_text(
        "#!/usr/bin/env python3\nimport json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        "if sys.argv[1:3] == ['show', 'instance']:\n"
        "    print('ID       Machine  Status   Num  Model     $/hr')\n"
        "    print(sys.argv[3] + '     7781     running  1x   RTX_4090  0.3900')\n"
        "else:\n"
        "    print('destroying instance ' + sys.argv[-1])\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def calls(log: Path) -> list[list[str]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def rented(fleet, standin, tmp_path: Path):  # type: ignore[no-untyped-def]
    """box-a rented on vast.ai (instance 4242), a checklist whose one item is a job marker,
    an idle-after-1-minute policy with a 1-minute notice, and the service on a moved clock."""
    from dataclasses import replace

    from gpu_companion.core.autorelease.policy import Policy
    from gpu_companion.core.autorelease.service import AutoReleaseService, save_policy
    from gpu_companion.core.release.config import ChecklistConfig, CustomCommand

    s = fleet.services
    host = replace(s.registry.host("box-a"), instance_id="4242")
    host = s.registry.save_host(host)
    s.release.settings.save_release_command(
        host.platform_id, "vastai destroy instance {instance_id}"
    )
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
