"""The release page on a real host: Release stays disabled until every item passed and none is
stale; pressing it ends the meter and stores the evidence; override needs the typed alias."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.release import ChecklistConfig, ItemState
from gpu_companion.core.release.queued_sync import QueuedCheckpointSync
from gpu_companion.ui.release.model import ChecklistModel
from tests.integration.release.conftest import box, box_host, passing_setup  # noqa: F401

WAIT = 60_000


def use_box_queue(ctx, box) -> QueuedCheckpointSync:  # type: ignore[no-untyped-def]  # noqa: F811
    """The app's transfer queue and release sync, over the box's ssh config and agent: the
    Transfers page, the release gate and the alerts then share this one queue."""
    from gpu_companion.core.transfers.engine import TransferEngine
    from gpu_companion.core.transfers.queue import TransferQueue

    engine = TransferEngine(box.ssh_argv, box.connect)
    ctx.__dict__["transfers"] = TransferQueue(ctx.store, engine, ctx.registry.host,
                                              save_every_s=0.2)  # fmt: skip
    ctx.release.connect = box.connect
    ctx.release.sync = QueuedCheckpointSync(ctx.transfers, ctx.release.backup_root)
    return ctx.release.sync


def idle(qtbot, page) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: not page.busy(), timeout=WAIT)


def test_release_enables_only_when_all_passed_and_not_stale(window, ctx, qtbot, box, monkeypatch):  # noqa: F811
    from gpu_companion.core.hosts.registry import Platform

    platform = ctx.registry.save_platform(Platform("harness"))
    host = ctx.registry.save_host(replace(box_host(box), platform_id=platform.id))
    rental = ctx.ledger.start_rental(platform.id, "1.20", host_id=host.id)
    ctx.release.connect = box.connect
    use_box_queue(ctx, box)
    ctx.release.settings.save_config(host.alias, passing_setup(box, custom=()))
    page = window.navigate("release")
    window.open_release(host.alias)  # the tray's way in
    assert window.stack.currentWidget() is page and page.host_box.currentData() == "box"
    assert not page.release_btn.isEnabled()
    assert "0 of" not in page.status.text() and "not passed" in page.status.text()

    for key in ("checkpoints", "archive"):
        page.select(key)
        assert page.fix_btn.isEnabled()
        page.fix_btn.click()
        idle(qtbot, page)
    page.select("manual:0")
    monkeypatch.setattr(page, "_ask_text", lambda *a: "snapshot snap-0042")
    page.confirm_btn.click()
    page.run_all()
    idle(qtbot, page)
    checklist = page.checklist()
    assert checklist is not None
    assert [it.state for it in checklist.items] == [ItemState.PASSED] * 5, [
        (it.key, it.evidence) for it in checklist.items
    ]
    assert page.release_btn.isEnabled()
    assert page.status.text().startswith("All 5 items passed")

    (box.remote / "ckpt" / "step-900.pt").write_bytes(b"late checkpoint")
    page.check_changes()
    idle(qtbot, page)
    assert checklist.item("checkpoints").state is ItemState.STALE
    assert not page.release_btn.isEnabled()
    page.select("checkpoints")
    assert page.fix_btn.text() == "Sync now"
    page.fix_btn.click()
    idle(qtbot, page)
    assert page.release_btn.isEnabled()

    asked: list[str] = []
    monkeypatch.setattr(page, "_ask", lambda title, text: asked.append(text) or True)
    page.release_btn.click()
    qtbot.waitUntil(lambda: ctx.registry.host("box").state == "released", timeout=WAIT)
    idle(qtbot, page)
    assert "end the rental's meter" in asked[0]
    ledger = ctx.release.ledger
    assert len(ledger.meter_ends("box")) == 1
    ended = ctx.ledger.rental(rental.id)
    assert ended.end_reason == "release" and len(ended.evidence["checks"]) == 5
    [record] = ledger.history("box")
    assert record.kind == "release" and len(record.evidence) == 5
    assert {e["item"] for e in record.evidence} == {
        "checkpoints",
        "archive",
        "leftovers",
        "processes",
        "manual:0",
    }
    assert "evidence of 5 items" in page.history.item(0).text()
    assert not page.release_btn.isEnabled() and not page.run_all_btn.isEnabled()


@pytest.fixture
def unready(ctx):  # type: ignore[no-untyped-def]
    host = ctx.registry.save_host(Host("gpu1", "203.0.113.5", 41022))
    cfg = ChecklistConfig(
        manual=("Snapshot taken",), disabled=("checkpoints", "archive", "leftovers", "processes")
    )
    ctx.release.settings.save_config(host.alias, cfg)
    return host


def test_override_needs_the_typed_alias_and_records_reason_and_failing_items(
    window, ctx, qtbot, unready, monkeypatch
):
    page = window.navigate("release")
    page.open_host("gpu1")
    assert not page.release_btn.isEnabled() and page.override_btn.isEnabled()
    page.override_btn.click()
    dialog = page.override_dialog
    assert dialog is not None and not dialog.ok.isEnabled()
    dialog.reason.setPlainText("instance already destroyed by the provider")
    assert not dialog.ok.isEnabled()  # no alias typed
    dialog.alias.setText("gpu")
    assert not dialog.ok.isEnabled()
    dialog.accept()  # refused while disabled
    assert dialog.isVisible() and ctx.release.ledger.history("gpu1") == []
    dialog.alias.setText("gpu1")
    assert dialog.ok.isEnabled()
    monkeypatch.setattr(page, "_ask", lambda *a: True)
    dialog.ok.click()
    qtbot.waitUntil(lambda: bool(ctx.release.ledger.history("gpu1")), timeout=WAIT)
    idle(qtbot, page)
    [record] = ctx.release.ledger.history("gpu1")
    assert record.kind == "override"
    assert record.reason == "instance already destroyed by the provider"
    assert record.failing_items == ("Snapshot taken [not run]",)
    text = page.history.item(0).text()
    assert "reason: instance already destroyed" in text and "Snapshot taken [not run]" in text
    assert ctx.registry.host("gpu1").state == "released"


def test_the_checklist_model_passes_the_model_tester(qtmodeltester, unready):
    from gpu_companion.core.release import ReleaseChecklist

    model = ChecklistModel()
    model.set_rows(ReleaseChecklist.build(unready, ChecklistConfig()).items)
    qtmodeltester.check(model)
    assert model.rowCount() == 5


def test_the_page_shows_its_empty_state_without_hosts(window):
    page = window.navigate("release")
    assert page.stack.currentWidget() is page.empty
