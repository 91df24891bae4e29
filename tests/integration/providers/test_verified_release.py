"""A release counts only when the provider confirms it: the app's services as shipped (keyring,
store, ledger, managed ssh config), the real vastai and runpod client code against local servers
that answer like their APIs, refusals included. Each case ends with the meter's state."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.harness.fake_runpod import FakeRunPod
from tests.harness.fake_vast import FakeVast

pytestmark = pytest.mark.keyring
NEEDS_SSH = ("checkpoints", "archive", "leftovers", "processes")  # covered elsewhere


@dataclass
class Rig:
    services: Any
    fake: Any
    alias: str
    messages: list[str]

    def host(self) -> Any:
        return self.services.registry.host(self.alias)

    def running(self) -> Any:
        return self.services.ledger.running_for_alias(self.alias)

    def kinds(self) -> list[str]:
        return [r.kind for r in self.services.release.ledger.history(self.alias)]

    def release(self, action: str = "destroy", within_s: float = 2.0) -> Any:
        from gpu_companion.core.release import ReleaseChecklist, release_host

        s, host = self.services, self.host()
        checklist = ReleaseChecklist.build(host, s.release.settings.config(host.alias))
        checklist.items[0].tick("backed up by hand")
        for _ in checklist.run_all(s.release.context(host)):
            pass
        assert checklist.ready()
        act = s.release.instance_action(host, action)
        services = replace(s.release.services(), confirm_within_s=within_s, confirm_every_s=0.1)
        return release_host(checklist, services, act)


def _services(app_paths, monkeypatch) -> Any:  # type: ignore[no-untyped-def]
    import keyring.backend
    import keyring.core

    from gpu_companion.services import build_services

    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    monkeypatch.delattr(keyring.backend.get_all_keyring, "saved_result", raising=False)
    return build_services(app_paths)


def _rented(services: Any, kind: str, fake: Any, instance_id: str, rate: str) -> str:
    """A host on a fresh platform linked to `fake` through an account, metered at `rate`, with a
    checklist of one confirmation (the checks that need ssh are covered elsewhere)."""
    from gpu_companion.core.hosts.registry import Host
    from gpu_companion.core.release.config import ChecklistConfig

    platform = f"{kind}-{uuid.uuid4().hex[:6]}"
    account = services.providers.add(kind, fake.api_key, platform=platform)
    host = services.registry.save_host(
        Host("rig", "ssh5.example.net", 41022, "root", account.platform_id,
             instance_id=instance_id)  # fmt: skip
    )
    services.release.settings.save_config(host.alias, ChecklistConfig(
        manual=("data copied",), disabled=NEEDS_SSH))
    services.ledger.start_rental(account.platform_id, rate, host_id=host.id)
    return host.alias


@pytest.fixture
def vast(app_paths, keyring_backend, monkeypatch) -> Iterator[Rig]:  # type: ignore[no-untyped-def]
    with FakeVast() as fake:
        monkeypatch.setenv("VAST_URL", fake.url)
        fake.add_instance(4242, dph_total=0.4)
        s = _services(app_paths, monkeypatch)
        messages: list[str] = []
        s.notifier.subscribe(lambda m: messages.append(m.text))
        try:
            yield Rig(s, fake, _rented(s, "vast.ai", fake, "4242", "0.40"), messages)
        finally:
            s.close()


@pytest.fixture
def runpod(app_paths, keyring_backend, monkeypatch) -> Iterator[Rig]:  # type: ignore[no-untyped-def]
    with FakeRunPod() as fake:
        monkeypatch.setenv("RUNPOD_API_BASE_URL", fake.url)
        fake.add_pod("abc123xyz4lmno", costPerHr=0.69, volumeInGb=100)
        s = _services(app_paths, monkeypatch)
        try:
            yield Rig(s, fake, _rented(s, "runpod", fake, "abc123xyz4lmno", "0.69"), [])
        finally:
            s.close()


def _config_text() -> str:
    return (Path.home() / ".ssh" / "gpu-companion" / "config").read_text()


def test_a_confirmed_destroy_ends_the_meter_and_drops_the_ssh_block(vast: Rig) -> None:
    vast.services.managed_ssh.sync()
    assert "Host rig\n" in _config_text()
    record = vast.release()
    assert 4242 not in vast.fake.instances  # really destroyed at the provider
    assert vast.running() is None and vast.host().state == "released"
    assert "read back: gone" in record.command_output
    assert "Host rig\n" not in _config_text()
    [entry] = vast.services.store.db.execute(
        "SELECT step, outcome FROM release_journal").fetchall()  # fmt: skip
    assert entry == ("confirmed", "confirmed")


@pytest.mark.parametrize(
    "refusal, words",
    [
        ("401", "vast.ai refused the API key"),
        ("success-false", "Unable to destroy instance"),
        ("404", "no instance 4242"),
    ],
)
def test_a_refused_destroy_keeps_the_meter_and_says_what_the_provider_said(
    vast: Rig, refusal: str, words: str
) -> None:
    from gpu_companion.core.common.errors import UserError

    if refusal == "401":
        vast.fake.status_next("DELETE", 401, {"success": False, "error": "auth_error",
                                              "msg": "Invalid API key"})  # fmt: skip
    elif refusal == "404":
        vast.fake.status_next("DELETE", 404, {"success": False, "error": "no_such_instance",
                                              "msg": "Instance 4242 not found."})  # fmt: skip
    else:
        vast.fake.refuse_next("destroy")
    with pytest.raises(UserError) as caught:
        vast.release()
    text = str(caught.value)
    assert words in text and "meter keeps going" in text
    assert vast.running() is not None and vast.host().state == "active"
    assert vast.kinds()[0] == "failed"
    assert 4242 in vast.fake.instances


def test_an_id_the_provider_does_not_have_is_refused_before_anything_is_sent(vast: Rig) -> None:
    from gpu_companion.core.common.errors import UserError

    vast.services.registry.save_host(replace(vast.host(), instance_id="999"))
    with pytest.raises(UserError, match="vast.ai has no instance 999"):
        vast.release()
    assert vast.fake.methods("DELETE") == [] and vast.running() is not None


@pytest.mark.parametrize("bad", ["-1", "--all", "12 34", "4242;rm"])
def test_an_id_not_of_the_provider_s_shape_is_refused(vast: Rig, bad: str) -> None:
    from gpu_companion.core.common.errors import ValidationError

    vast.services.registry.save_host(replace(vast.host(), instance_id=bad))
    with pytest.raises(ValidationError):
        vast.release()
    assert vast.fake.requests == [] and vast.running() is not None


def test_a_destroy_the_provider_shows_late_is_waited_for(vast: Rig) -> None:
    vast.fake.linger(4242, reads=3)  # accepted, but still listed running for 3 reads
    vast.release(within_s=10)
    reads = [p for p in vast.fake.methods("GET") if p.endswith("/4242/")]
    assert len(reads) == 1 + 3 + 1  # the read before, three still running, the one gone
    assert vast.running() is None and vast.host().state == "released"


def test_still_running_at_the_deadline_is_unconfirmed_and_alerted(vast: Rig) -> None:
    from gpu_companion.core.common.errors import UserError

    vast.fake.linger(4242, reads=10_000)
    with pytest.raises(UserError) as caught:
        vast.release(within_s=1.0)
    assert "vast.ai still reports instance 4242 running after the destroy request" in str(
        caught.value
    )
    assert vast.running() is not None and vast.host().state == "active"
    assert vast.kinds()[0] == "unconfirmed"
    [entry] = vast.services.store.db.execute("SELECT outcome FROM release_journal").fetchall()
    assert entry == ("unconfirmed",)


def test_a_provider_that_does_not_answer_keeps_the_meter(vast: Rig) -> None:
    from gpu_companion.core.common.errors import UserError

    vast.services.providers.timeout_s = 1.0
    with vast.fake.hanging("DELETE"), pytest.raises(UserError, match="did not destroy"):
        vast.release()
    assert vast.running() is not None and vast.host().state == "active"


def test_a_stop_meters_the_disk_at_the_provider_s_storage_rate(vast: Rig) -> None:
    vast.release(action="stop")
    assert vast.host().state == "stopped"
    rental = vast.running()
    storage = Decimal(str(vast.fake.instances[4242]["storage_total_cost"]))
    assert rental.billing_mode == "stopped" and rental.rate == storage > 0
    assert not rental.computing
    ended = [r for r in vast.services.ledger.history() if r.ended_at is not None]
    assert [r.billing_mode for r in ended] == ["on-demand"]


def test_runpod_terminate_and_stop_are_read_back_through_the_sdk(runpod: Rig) -> None:
    runpod.fake.linger("abc123xyz4lmno", reads=2)
    runpod.release(action="stop", within_s=10)
    assert runpod.host().state == "stopped"
    stopped = runpod.running()
    assert stopped.billing_mode == "stopped"
    assert float(stopped.rate) == pytest.approx(100 * 0.20 / 730, rel=1e-3)  # RunPod's volume rate
    # destroying the stopped pod ends the disk meter too
    from gpu_companion.core.release import ReleaseChecklist, release_host

    s, host = runpod.services, runpod.host()
    act = s.release.instance_action(host, "destroy")
    checklist = ReleaseChecklist.build(host, s.release.settings.config(host.alias))
    services = replace(s.release.services(), confirm_within_s=5, confirm_every_s=0.1)
    from gpu_companion.core.release import Override

    release_host(checklist, services, act, Override(host.alias, "stopped pod, data copied"))
    assert runpod.running() is None and runpod.host().state == "released"
    assert "abc123xyz4lmno" not in runpod.fake.pods


def test_a_custom_platform_counts_only_what_its_verify_command_reads_back(
    app_paths, keyring_backend, monkeypatch, tmp_path: Path
) -> None:
    """A provider CLI that says "Aborted." and exits 0 (as `vastai destroy` does without a
    terminal) no longer releases anything: the verify command still shows the instance."""
    from gpu_companion.core.common.errors import UserError, ValidationError
    from gpu_companion.core.hosts.registry import Host, Platform
    from gpu_companion.core.providers.custom import CustomCommands
    from gpu_companion.core.release import Override, ReleaseChecklist, release_host

    state = tmp_path / "instance-7"
    state.write_text("running\n")
    cli = tmp_path / "mycloud"
    cli.write_text(
        f"#!{sys.executable}\nimport sys, pathlib\np = pathlib.Path({str(state)!r})\n"
        "if sys.argv[1] == 'show':\n"
        "    print('instance', sys.argv[2], p.read_text().strip() if p.exists() else 'not found')\n"
        "elif sys.stdin.read(1) == 'y':\n    p.unlink()\n"
        "else:\n    print('Are you sure? [y/N] Aborted.')\n"
    )
    cli.chmod(0o755)
    destroy, verify = f"{cli} destroy {{instance_id}}", f"{cli} show {{instance_id}}"
    s = _services(app_paths, monkeypatch)
    try:
        p = s.registry.save_platform(Platform(f"mycloud-{uuid.uuid4().hex[:6]}"))
        with pytest.raises(ValidationError, match="vast.ai CLI cannot be trusted"):
            s.release.settings.save_commands(p.id, CustomCommands(
                "vastai destroy instance {instance_id}", verify, "not found"))  # fmt: skip
        with pytest.raises(ValidationError, match="verify command"):
            s.release.settings.save_commands(p.id, CustomCommands(destroy))
        s.release.settings.save_commands(
            p.id, CustomCommands(destroy, verify, "not found", "running")
        )
        host = s.registry.save_host(Host("box7", "10.9.9.9", platform_id=p.id, instance_id="7"))
        s.ledger.start_rental(p.id, "1.00", host_id=host.id)
        checklist = ReleaseChecklist.build(host, s.release.settings.config(host.alias))
        act = s.release.instance_action(host)
        services = replace(s.release.services(), confirm_within_s=0.5, confirm_every_s=0.1)
        with pytest.raises(UserError, match="still reports instance 7 running"):
            release_host(checklist, services, act, Override("box7", "copied"))
        assert s.ledger.running_for_alias("box7") is not None
        assert s.registry.host("box7").state == "active" and state.exists()
        state.unlink()  # destroyed in the provider's console
        with pytest.raises(UserError, match="has no instance 7"):
            release_host(checklist, services, act, Override("box7", "copied"))
    finally:
        s.close()
