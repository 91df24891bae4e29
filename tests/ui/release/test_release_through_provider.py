"""Release from the Release page through a platform's vast.ai account, against a local server
that answers like vast.ai's API: the confirmation says what will be asked of the provider before
anything is sent; the meter ends only once vast.ai reports the instance gone; a refusal keeps the
host active and its meter running; without a provider, nothing is sent and the user is told to
release the instance in its console."""

from __future__ import annotations

import uuid

import pytest

from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.core.release import ChecklistConfig
from gpu_companion.ui.common import worker
from tests.harness.autorelease import calls, vast_api  # noqa: F401  (a fixture)

WAIT = 30_000
ALL_BUILTINS = ("checkpoints", "archive", "leftovers", "processes")


@pytest.fixture
def messages(ctx):  # type: ignore[no-untyped-def]
    seen: list = []
    unsubscribe = ctx.notifier.subscribe(seen.append)
    yield seen
    unsubscribe()


def rent(ctx, platform_name: str, instance_id: str = "4242") -> Host:  # type: ignore[no-untyped-def]
    platform = ctx.registry.platforms()
    p = next((x for x in platform if x.name == platform_name), None)
    p = p or ctx.registry.save_platform(Platform(platform_name))
    host = ctx.registry.save_host(
        Host("vast-4090", "203.0.113.7", 41022, "root", p.id, instance_id=instance_id)
    )
    ctx.release.settings.save_config(
        host.alias, ChecklistConfig(manual=("Snapshot taken",), disabled=ALL_BUILTINS)
    )
    ctx.ledger.start_rental(p.id, "2.40", host_id=host.id)
    return host


def release_anyway(page, qtbot, monkeypatch, answer: bool = True) -> list[str]:  # type: ignore[no-untyped-def]
    """Release anyway as a user would; returns what the confirmation asked."""
    asked: list[str] = []
    monkeypatch.setattr(page, "_ask", lambda title, text: asked.append(text) or answer)
    page.open_host("vast-4090")
    page.override_btn.click()
    dialog = page.override_dialog
    dialog.alias.setText("vast-4090")
    dialog.reason.setPlainText("results are on the hub")
    dialog.ok.click()
    qtbot.waitUntil(lambda: not page.busy(), timeout=WAIT)
    worker.wait_all()
    return asked


@pytest.fixture
def account(ctx, keyring_backend, vast_api):  # type: ignore[no-untyped-def]  # noqa: F811
    ctx.vault.backend = keyring_backend
    ctx.vault.service = f"gpu-companion-uitest-{uuid.uuid4().hex[:8]}"
    acc = ctx.providers.add("vast.ai", vast_api.api_key, platform="vast.ai")
    yield acc
    ctx.providers.remove(acc)


@pytest.mark.keyring
def test_release_asks_vast_ai_and_ends_the_meter_once_it_reports_the_instance_gone(
    window,
    ctx,
    account,
    vast_api,  # noqa: F811
    qtbot,
    monkeypatch,
):
    host = rent(ctx, "vast.ai")
    page = window.navigate("release")
    [asked] = release_anyway(page, qtbot, monkeypatch)
    assert asked.splitlines()[:3] == [
        "This will:",
        "• ask vast.ai to destroy instance 4242, then read it back until vast.ai reports it gone",
        "• end the rental's meter only once vast.ai confirms",
    ]
    assert calls(vast_api) == [["destroy", "instance", "4242"]]
    assert 4242 not in vast_api.instances
    assert ctx.registry.host("vast-4090").state == "released"
    assert ctx.ledger.running_for_host(host.id) is None
    [record] = ctx.release.ledger.history("vast-4090")
    assert record.kind == "override"
    assert record.release_command == (
        "ask vast.ai to destroy instance 4242, then read it back until vast.ai reports it gone",
    )
    assert "read back: gone" in record.command_output


@pytest.mark.keyring
def test_a_refusal_keeps_the_host_active_and_its_meter_running(
    window,
    ctx,
    account,
    vast_api,  # noqa: F811
    qtbot,
    monkeypatch,
    messages,
):
    host = rent(ctx, "vast.ai")
    vast_api.refuse_next("destroy")
    page = window.navigate("release")
    release_anyway(page, qtbot, monkeypatch)
    assert 4242 in vast_api.instances
    assert ctx.registry.host("vast-4090").state == "active"
    assert ctx.ledger.running_for_host(host.id) is not None
    [error] = [m for m in messages if m.key == "release-error"]
    assert error.text.startswith("vast.ai did not destroy instance 4242")
    assert "meter keeps going" in error.text
    qtbot.waitUntil(lambda: window.banners.with_key("release-error") is not None, timeout=WAIT)
    [record] = ctx.release.ledger.history("vast-4090")
    assert record.kind == "failed"
    assert "The provider refused, host kept" in page.history.item(0).text()


@pytest.mark.keyring
def test_a_host_without_an_instance_id_is_refused_before_anything_is_asked(
    window,
    ctx,
    account,
    vast_api,  # noqa: F811
    qtbot,
    monkeypatch,
    messages,
):
    rent(ctx, "vast.ai", instance_id="")
    page = window.navigate("release")
    assert release_anyway(page, qtbot, monkeypatch) == []  # no confirmation offered
    [error] = [m for m in messages if m.key == "release-error"]
    assert "vast-4090 has no instance id, so vast.ai cannot be asked to destroy it" in error.text
    assert calls(vast_api) == [] and ctx.registry.host("vast-4090").state == "active"


def test_without_a_provider_nothing_is_sent_and_the_console_is_named(
    window, ctx, qtbot, monkeypatch
):
    host = rent(ctx, "Uni cluster")
    page = window.navigate("release")
    [asked] = release_anyway(page, qtbot, monkeypatch)
    assert asked.splitlines()[1] == (
        "• nothing is sent to a provider: release the instance in its console yourself"
    )
    assert "• end the rental's meter" in asked.splitlines()
    assert ctx.registry.host("vast-4090").state == "released"
    assert ctx.ledger.running_for_host(host.id) is None


def test_an_old_cli_template_is_refused_with_what_to_do(window, ctx, qtbot, monkeypatch, messages):
    host = rent(ctx, "vast.ai")
    with ctx.store.transaction() as db:  # saved by an earlier version, before the validation
        db.table("release_commands").upsert(
            {"platform_id": host.platform_id, "command": "vastai destroy instance {instance_id}"},
            pk="platform_id",
        )
    page = window.navigate("release")
    assert release_anyway(page, qtbot, monkeypatch) == []
    [error] = [m for m in messages if m.key == "release-error"]
    assert "The vast.ai CLI cannot be trusted to release" in error.text
    assert "add a vast.ai provider account instead" in error.text
    assert ctx.registry.host("vast-4090").state == "active"
    assert ctx.ledger.running_for_host(host.id) is not None
