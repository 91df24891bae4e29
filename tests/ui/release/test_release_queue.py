# ruff: noqa: F811  (the box fixture is imported from the release integration tests)
"""One checkpoint path: the release gate's copies are the Transfers page's queue jobs, and the
queue's verified downloads are the gate's evidence, whichever page started them."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from gpu_companion.core.hosts.registry import Platform
from gpu_companion.core.release import ItemState
from gpu_companion.core.transfers.job import JobState, TransferJob
from gpu_companion.core.transfers.presets import backup_dir
from gpu_companion.ui.transfers.dialogs import SyncCheckpointsDialog
from tests.integration.release.conftest import box, box_host, passing_setup  # noqa: F401
from tests.ui.release.test_release_page import WAIT, idle, use_box_queue

ONLY_CHECKPOINTS = ("archive", "leftovers", "processes")


@pytest.fixture
def rented(ctx, window, box):  # type: ignore[no-untyped-def]  # noqa: F811
    platform = ctx.registry.save_platform(Platform("harness"))
    host = ctx.registry.save_host(replace(box_host(box), platform_id=platform.id))
    ctx.ledger.start_rental(platform.id, "1.20", host_id=host.id, billing_mode="spot")
    use_box_queue(ctx, box)
    window.pages["transfers"].use_queue(ctx.transfers)  # built with the window, before the swap
    yield host
    window.pages["transfers"].stop()


def _check(window, qtbot, key: str):  # type: ignore[no-untyped-def]
    page = window.navigate("release")
    window.open_release("box")
    page.run_item(key)
    idle(qtbot, page)
    return page.checklist().item(key)


def test_checkpoints_downloaded_on_the_transfers_page_satisfy_the_checklist(
    window,
    ctx,
    qtbot,
    box,
    rented,  # noqa: F811
):
    cfg = passing_setup(box, disabled=ONLY_CHECKPOINTS, manual=(), custom=())
    ctx.release.settings.save_config("box", cfg)
    item = _check(window, qtbot, "checkpoints")
    assert (
        item.state is ItemState.FAILED
        and "no verified download whose copy is still on this computer" in item.evidence.summary
    )
    assert ctx.alerts.last_sync(rented.id) is None

    transfers = window.navigate("transfers")
    assert transfers.default_backup_root() == str(ctx.release.backup_root)  # one layout
    dialog = SyncCheckpointsDialog(transfers._hosts(), lambda h: None,
                                   transfers.default_backup_root())  # fmt: skip
    qtbot.addWidget(dialog)
    dialog.remote.setText(str(box.remote / "ckpt"))
    job = transfers.queue_checkpoint_sync(dialog)
    assert job is not None
    qtbot.waitUntil(lambda: ctx.transfers.get(job.id).state is JobState.DONE, timeout=WAIT)
    landed = backup_dir(ctx.release.backup_root, rented, str(box.remote / "ckpt"))
    assert (landed / "step-100.pt").read_bytes() == (
        box.remote / "ckpt" / "step-100.pt"
    ).read_bytes()

    item = _check(window, qtbot, "checkpoints")
    assert item.state is ItemState.PASSED, item.evidence
    assert f"(transfer #{job.id} to {landed})" in item.evidence.summary
    assert ctx.alerts.last_sync(rented.id) is not None  # the spot-rental alert is reset
    shutil.move(landed, landed.with_name("moved-away"))  # the local copy is gone: not a backup
    item = _check(window, qtbot, "checkpoints")
    assert (
        item.state is ItemState.FAILED
        and "no verified download whose copy is still on this computer" in item.evidence.summary
    )
    shutil.move(landed.with_name("moved-away"), landed)
    (box.remote / "ckpt" / "step-200.pt").write_bytes(b"newer than the download")
    item = _check(window, qtbot, "checkpoints")
    assert item.state is ItemState.FAILED
    assert item.evidence.details == (str(box.remote / "ckpt" / "step-200.pt"),)


def test_a_verified_copy_in_a_folder_the_user_chose_counts_and_is_named(
    window, ctx, qtbot, box, rented, tmp_path  # noqa: F811
):
    cfg = passing_setup(box, disabled=ONLY_CHECKPOINTS, manual=(), custom=())
    ctx.release.settings.save_config("box", cfg)
    transfers = window.navigate("transfers")
    mine = tmp_path / "my checkpoints"
    dialog = SyncCheckpointsDialog(transfers._hosts(), lambda h: None, str(mine))
    qtbot.addWidget(dialog)
    dialog.remote.setText(str(box.remote / "ckpt"))
    job = transfers.queue_checkpoint_sync(dialog)
    qtbot.waitUntil(lambda: ctx.transfers.get(job.id).state is JobState.DONE, timeout=WAIT)
    landed = Path(ctx.transfers.get(job.id).local_path)
    assert landed.is_relative_to(mine)
    item = _check(window, qtbot, "checkpoints")
    assert item.state is ItemState.PASSED, item.evidence
    assert f"(transfer #{job.id} to {landed})" in item.evidence.summary  # where the copy is
    shutil.rmtree(landed)  # the copy deleted: no longer a backup, and it says so
    item = _check(window, qtbot, "checkpoints")
    assert item.state is ItemState.FAILED
    assert "no verified download whose copy is still on this computer" in item.evidence.summary


def test_sync_now_is_a_queue_job_with_progress_and_cancel(window, ctx, qtbot, box, rented):  # noqa: F811
    cfg = passing_setup(box, disabled=ONLY_CHECKPOINTS, manual=(), custom=())
    ctx.release.settings.save_config("box", cfg)
    (box.remote / "ckpt" / "step-big.pt").write_bytes(os.urandom(3 * 2**20))
    ctx.release.sync.bwlimit_kbps = 256  # about 12 s: slow enough to cancel
    page = window.navigate("release")
    window.open_release("box")
    page.select("checkpoints")
    page.fix_btn.click()
    qtbot.waitUntil(lambda: "%" in page.status.text(), timeout=WAIT)
    assert page.cancel_btn.isVisible() and page.cancel_btn.isEnabled()
    assert page.status.text().startswith("Copying from box: ")
    [job] = [j for j in ctx.transfers.jobs() if j.state is JobState.RUNNING]
    assert job.label.startswith("Sync checkpoints: box:")  # the Transfers page lists it
    page.cancel_btn.click()
    idle(qtbot, page)
    item = page.checklist().item("checkpoints")
    assert item.state is ItemState.FAILED and "was cancelled" in item.evidence.summary
    assert ctx.transfers.get(job.id).state is JobState.CANCELLED
    assert not page.cancel_btn.isVisible()

    ctx.release.sync.bwlimit_kbps = 0
    page.fix_btn.click()
    idle(qtbot, page)
    assert item.state is ItemState.PASSED, item.evidence
    assert any(ln.startswith("checkpoints: ") and "Verified." in ln for ln in page.log)


def test_files_the_app_uploaded_are_not_left_behind(window, ctx, qtbot, box, rented, tmp_path):  # noqa: F811
    cfg = passing_setup(box, disabled=("checkpoints", "archive", "processes"), manual=(),
                        custom=())  # fmt: skip
    ctx.release.settings.save_config("box", cfg)
    data = tmp_path / "dataset"
    data.mkdir()
    (data / "shard-0.bin").write_bytes(os.urandom(2 * 2**20))  # over the 1 MiB threshold
    ctx.transfers.add(TransferJob(host_alias="box", direction="upload", local_path=str(data),
                                  remote_path=str(box.remote / "data")))  # fmt: skip
    ctx.transfers.run_until_idle(60)
    assert (box.remote / "data" / "shard-0.bin").exists()
    item = _check(window, qtbot, "leftovers")
    assert item.state is ItemState.PASSED, item.evidence
    assert item.evidence.figures["uploaded"] == 1
    uploaded = box.remote / "data" / "shard-0.bin"
    with uploaded.open("r+b") as f:  # changed on the host after the upload: the user's work now
        f.write(b"edited")
    item = _check(window, qtbot, "leftovers")
    assert item.state is ItemState.FAILED
    assert [d.split("\t")[0] for d in item.evidence.details] == [str(uploaded)]


def test_the_archive_download_is_a_queue_job(window, ctx, qtbot, box, rented):  # noqa: F811
    cfg = passing_setup(box, disabled=("checkpoints", "leftovers", "processes"), manual=(),
                        custom=())  # fmt: skip
    ctx.release.settings.save_config("box", cfg)
    page = window.navigate("release")
    window.open_release("box")
    page.select("archive")
    page.fix_btn.click()
    idle(qtbot, page)
    assert page.checklist().item("archive").state is ItemState.PASSED
    [job] = ctx.transfers.history()
    assert job.label.startswith("Download archive: box:llama-lora-") and job.verified
    assert Path(job.local_path) == ctx.release.backup_root / "box" / "archives"


def test_a_backup_started_on_the_release_page_shows_on_the_transfers_page_at_once(
    window,
    ctx,
    qtbot,
    box,
    rented,  # noqa: F811
):
    """The Transfers page follows the queue's events: a job the release gate queued is listed
    and moves (running, progress, verified) while the page is never shown or refreshed."""
    cfg = passing_setup(box, disabled=ONLY_CHECKPOINTS, manual=(), custom=())
    ctx.release.settings.save_config("box", cfg)
    (box.remote / "ckpt" / "step-big.pt").write_bytes(os.urandom(2 * 2**20))
    ctx.release.sync.bwlimit_kbps = 512  # about 4 s
    transfers = window.pages["transfers"]  # built with the window, not visited
    page = window.navigate("release")
    window.open_release("box")
    page.select("checkpoints")
    page.fix_btn.click()

    def listed() -> list[TransferJob]:
        return [j for j in transfers.model.jobs() if j.label.startswith("Sync checkpoints: box:")]

    qtbot.waitUntil(lambda: len(listed()) == 1, timeout=2000)
    qtbot.waitUntil(
        lambda: listed()[0].state is JobState.RUNNING and listed()[0].bytes_done > 0,
        timeout=WAIT,
    )
    idle(qtbot, page)
    assert page.checklist().item("checkpoints").state is ItemState.PASSED
    qtbot.waitUntil(lambda: listed()[0].state is JobState.DONE, timeout=2000)
    assert listed()[0].verified
    assert window.stack.currentWidget() is page  # the Transfers page was never navigated to
