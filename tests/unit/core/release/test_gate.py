"""Release and override against the real store: the meter ends, evidence and overrides are kept."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.hosts.registry import Host, HostRegistry, Platform
from gpu_companion.core.providers.custom import (
    CustomCommands,
    CustomProvider,
    command_argv,
    target_of,
)
from gpu_companion.core.release import (
    ChecklistConfig,
    Override,
    ReleaseChecklist,
    ReleaseContext,
    ReleaseServices,
    release_host,
)
from gpu_companion.core.release.gate import InstanceAction
from gpu_companion.core.release.items import ManualConfirmation
from gpu_companion.core.release.record import ChecklistSettings, StoreReleaseLedger
from gpu_companion.core.spend.ledger import SpendLedger


class RecordingSshConfig:
    def __init__(self) -> None:
        self.removed: list[str] = []

    def remove_host(self, alias: str) -> None:
        self.removed.append(alias)


def no_ssh(host: Host):  # type: ignore[no-untyped-def]
    raise AssertionError("manual items never connect")


@pytest.fixture
def setup(store, tmp_path: Path):  # type: ignore[no-untyped-def]
    registry = HostRegistry(store)
    vast = registry.save_platform(Platform("vast.ai"))
    host = registry.save_host(Host("gpu1", "203.0.113.5", 41022, "root", vast.id))
    cfg = ChecklistConfig(
        manual=("Snapshot taken", "Pushed to S3"),
        disabled=("checkpoints", "archive", "leftovers", "processes"),
    )
    checklist = ReleaseChecklist.build(host, cfg)
    ctx = ReleaseContext(host, no_ssh, tmp_path, cfg, sync=None)  # type: ignore[arg-type]
    spend = SpendLedger(store)
    spend.start_rental(vast.id, "0.50", host_id=host.id)
    ledger = StoreReleaseLedger(store, spend)
    ssh_config = RecordingSshConfig()
    services = ReleaseServices(ledger, registry, ssh_config)
    return host, checklist, ctx, ledger, services, registry, ssh_config


def tick_all(checklist: ReleaseChecklist, ctx: ReleaseContext) -> None:
    for item in checklist.items:
        assert isinstance(item, ManualConfirmation)
        item.tick("done")
    list(checklist.run_all(ctx))


def test_release_is_refused_until_every_item_passed(setup):
    host, checklist, ctx, ledger, services, registry, _ = setup
    list(checklist.run_all(ctx))
    assert not checklist.ready()
    with pytest.raises(UserError, match="Snapshot taken, Pushed to S3 not passed"):
        release_host(checklist, services)
    assert ledger.meter_ends("gpu1") == [] and ledger.history("gpu1") == []
    assert registry.host("gpu1").state == "active"


def test_release_ends_the_meter_stores_evidence_marks_released(setup):
    host, checklist, ctx, ledger, services, registry, ssh_config = setup
    tick_all(checklist, ctx)
    assert checklist.ready()
    record = release_host(checklist, services)
    assert ledger.meter_ends("gpu1") == [record.at]
    assert ledger.spend.running_for_host(host.id) is None
    [stored] = ledger.history("gpu1")
    assert stored.kind == "release" and stored.id == record.id
    assert [e["summary"] for e in stored.evidence] == ["confirmed: done", "confirmed: done"]
    assert registry.host("gpu1").state == "released"
    assert ssh_config.removed == ["gpu1"]


def test_override_needs_the_typed_alias_and_a_reason(setup):
    host, checklist, ctx, ledger, services, registry, _ = setup
    list(checklist.run_all(ctx))
    for bad, match in (
        (Override("", "provider outage"), "Type the host alias"),
        (Override("gpu", "provider outage"), "Type the host alias"),
        (Override("GPU1", "provider outage"), "Type the host alias"),
        (Override("gpu1", "   "), "Say why"),
    ):
        with pytest.raises(ValidationError, match=match):
            release_host(checklist, services, override=bad)
    assert ledger.history("gpu1") == [] and ledger.meter_ends("gpu1") == []
    record = release_host(checklist, services, override=Override("gpu1", "instance already gone"))
    [stored] = ledger.history("gpu1")
    assert stored.kind == "override" and stored.reason == "instance already gone"
    assert stored.failing_items == (
        "Snapshot taken [failed]: not confirmed yet",
        "Pushed to S3 [failed]: not confirmed yet",
    )
    assert ledger.meter_ends("gpu1") == [record.at]
    assert ledger.spend.running_for_host(host.id) is None
    assert registry.host("gpu1").state == "released"


CLOUD = """
import pathlib, sys
state = pathlib.Path(sys.argv[1])
if sys.argv[2] == "show":
    print("instance", sys.argv[3], state.read_text() if state.exists() else "not found")
elif sys.argv[2] == "destroy":
    print("destroy", *sys.argv[3:])
    if sys.argv[3] == "quota":
        print("quota error")
        sys.exit(3)
    state.unlink()
"""


def custom_action(host: Host, tmp_path: Path, release_args: str = "{alias} '{hostname}:{port}'"):  # type: ignore[no-untyped-def]
    script = tmp_path / "cloud.py"
    script.write_text(CLOUD)
    state = tmp_path / "instance"
    state.write_text("running")
    base = f"{sys.executable} {script} {state}"
    commands = CustomCommands(
        f"{base} destroy {release_args}", f"{base} show {{alias}}", "not found", "running"
    ).validated()
    provider = CustomProvider("mycloud", commands, target_of(replace(host, instance_id="77")))
    return InstanceAction(provider, "77"), state


def test_a_custom_release_runs_as_argv_and_counts_once_read_back(setup, tmp_path):
    host, checklist, ctx, ledger, services, registry, _ = setup
    tick_all(checklist, ctx)
    action, state = custom_action(host, tmp_path)
    record = release_host(checklist, services, action)
    assert not state.exists()
    [stored] = ledger.history("gpu1")
    assert "destroy gpu1 203.0.113.5:41022" in stored.command_output
    assert "read back: gone. instance gpu1 not found" in stored.command_output
    assert stored.release_command == (action.describe(),) and record.id == stored.id
    assert registry.host("gpu1").state == "released"


def test_a_failing_release_command_keeps_the_meter_and_the_host(setup, tmp_path):
    host, checklist, ctx, ledger, services, registry, ssh_config = setup
    tick_all(checklist, ctx)
    action, state = custom_action(host, tmp_path, release_args="quota")
    with pytest.raises(UserError, match="did not destroy instance 77: The release command "
                                        "exited 3.*meter keeps going"):  # fmt: skip
        release_host(checklist, services, action)
    assert ledger.meter_ends("gpu1") == [] and state.exists()
    assert registry.host("gpu1").state == "active" and ssh_config.removed == []
    [stored] = ledger.history("gpu1")
    assert stored.kind == "failed" and "quota error" in stored.command_output


def test_a_missing_release_program_is_explained(setup, tmp_path):
    host, checklist, ctx, ledger, services, *_ = setup
    tick_all(checklist, ctx)
    action, _ = custom_action(host, tmp_path)
    commands = replace(action.provider.commands, release="no-such-provider-cli rm {alias}")
    action = replace(action, provider=CustomProvider("mycloud", commands, target_of(host)))
    with pytest.raises(UserError, match="not found on this computer"):
        release_host(checklist, services, action)
    assert ledger.meter_ends("gpu1") == []


def test_release_command_templates_are_validated(store):
    target = target_of(Host("gpu1", "203.0.113.5"))
    with pytest.raises(ValidationError, match="does not parse"):
        command_argv("mycloud destroy 'unclosed", target)
    with pytest.raises(ValidationError, match="Unknown placeholder"):
        command_argv("mycloud destroy {instance}", target)
    settings = ChecklistSettings(store)
    registry = HostRegistry(store)
    p = registry.save_platform(Platform("RunPod"))
    verify = "mycloud show {alias}"
    with pytest.raises(ValidationError):
        settings.save_commands(p.id, CustomCommands("mycloud rm {nope}", verify, "gone"))
    with pytest.raises(ValidationError, match="cannot be trusted"):
        settings.save_commands(p.id, CustomCommands("runpodctl remove pod {alias}", verify, "x"))
    with pytest.raises(ValidationError, match="verify command"):
        settings.save_commands(p.id, CustomCommands("mycloud rm {alias}"))
    saved = settings.save_commands(p.id, CustomCommands(" mycloud rm {alias} ", verify, "gone"))
    assert settings.commands(p.id) == saved == CustomCommands("mycloud rm {alias}", verify, "gone")
    # a value with shell syntax stays one argument
    assert command_argv("echo {alias}", target_of(Host("a;rm", "h"))) == ["echo", "a;rm"]
    with pytest.raises(ValidationError, match="not an instance id"):
        command_argv("mycloud rm {instance_id}", replace(target, instance_id="--all"))


def test_a_released_host_leaves_the_managed_ssh_config(store, tmp_path):
    from dataclasses import replace

    from gpu_companion.core.ssh.config_writer import SshConfigWriter
    from gpu_companion.core.ssh.managed import ManagedConfig
    from gpu_companion.core.ssh.vault import KeyVault

    registry = HostRegistry(store)
    host = registry.save_host(Host("gpu1", "203.0.113.5", 41022, "root"))
    registry.save_host(Host("gpu2", "203.0.113.6", 22, "root"))
    writer = SshConfigWriter(tmp_path / "home")
    managed = ManagedConfig(writer, registry, KeyVault(store, tmp_path / "keys"))
    managed.sync()
    assert "Host gpu1\n" in writer.config_path.read_text()
    registry.save_host(replace(host, state="released"))
    managed.remove_host("gpu1")
    text = writer.config_path.read_text()
    assert "Host gpu1\n" not in text and "Host gpu2\n" in text
    assert not writer.user_config.exists()  # ~/.ssh/config only once the user sets it up
