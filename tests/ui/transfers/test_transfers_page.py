"""The Transfers page over the real harness sshd and rsync: queue table, actions, drop, picker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.transfers.job import JobState, TransferJob, TransferOptions
from gpu_companion.ui.transfers.model import (
    PERCENT_ROLE,
    PROGRESS_COLUMN,
    STATE_COLUMN,
    TransferTableModel,
)
from tests.integration.transfer_helpers import make_queue, tree_hashes

pytestmark = pytest.mark.sshd


@pytest.fixture
def page(ctx, nav, qtbot, ssh_target):  # type: ignore[no-untyped-def]
    from gpu_companion.ui.common import worker
    from gpu_companion.ui.transfers.page import TransfersPage

    t = ssh_target
    ctx.registry.save_host(Host("gpu-test", "127.0.0.1", t.server.port, t.server.user))
    ctx.transfers = make_queue(ctx.store, t)
    p = TransfersPage(ctx, nav)
    qtbot.addWidget(p)
    p.show()
    yield p
    p.stop()
    worker.wait_all()


def _row_of(page, job_id: int) -> int:  # type: ignore[no-untyped-def]
    return next(i for i, j in enumerate(page.model.jobs()) if j.id == job_id)


def test_model_passes_the_model_tester(qtmodeltester) -> None:
    model = TransferTableModel()
    model.set_jobs(
        [
            TransferJob("a", "upload", "/x", "y", id=1, bytes_done=5, bytes_total=10),
            TransferJob("b", "download", "/x", "y", id=2, state=JobState.DONE, verified=True),
        ]
    )
    qtmodeltester.check(model)
    assert model.index(0, PROGRESS_COLUMN).data(PERCENT_ROLE) == 50
    assert model.index(1, STATE_COLUMN).data() == "Verified"
    model.upsert(TransferJob("c", "upload", "/x", "y", id=3))
    assert model.rowCount() == 3


def test_dropping_files_on_a_host_uploads_them_verified(page, qtbot, tmp_path: Path) -> None:
    folder = tmp_path / "my data"
    folder.mkdir()
    (folder / "train ü.csv").write_bytes(os.urandom(5000))
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.pyc").write_text("skip me")
    remote_base = tmp_path / "remote"
    page.upload_dir.setText(str(remote_base))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(folder))])
    item_rect = page.host_list.visualItemRect(page.host_list.item(0))
    event = QDropEvent(
        QPointF(item_rect.center()),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    page.host_list.dropEvent(event)
    assert page.model.rowCount() == 1
    qtbot.waitUntil(lambda: page.model.job(0).state is JobState.DONE, timeout=30000)
    job = page.model.job(0)
    assert job.verified and page.model.index(0, STATE_COLUMN).data() == "Verified"
    assert tree_hashes(remote_base / "my data") == {
        "train ü.csv": tree_hashes(folder)["train ü.csv"]
    }


def test_restart_shows_the_job_paused_at_its_progress_then_resume_verifies(
    ctx, nav, qtbot, ssh_target, tmp_path: Path
) -> None:
    from gpu_companion.ui.common import worker
    from gpu_companion.ui.transfers.page import TransfersPage

    t = ssh_target
    ctx.registry.save_host(Host("gpu-test", "127.0.0.1", t.server.port, t.server.user))
    local = tmp_path / "local"
    local.mkdir()
    (local / "w.bin").write_bytes(os.urandom(200_000))
    before = make_queue(ctx.store, t)
    job = before.add(TransferJob("gpu-test", "upload", str(local), str(tmp_path / "remote")))
    with ctx.store.transaction() as db:  # the app died while this job was at 40 %
        db.table("transfer_jobs").update(
            job.id,
            {
                "state": "running",
                "bytes_done": 80_000,
                "bytes_total": 200_000,
                "owner": "an-earlier-boot:4242:1",
            },
        )
    ctx.transfers = make_queue(ctx.store, t)  # the app starts again
    page = TransfersPage(ctx, nav)
    qtbot.addWidget(page)
    try:
        row = _row_of(page, job.id)
        assert page.model.index(row, STATE_COLUMN).data() == "Paused"
        assert page.model.index(row, PROGRESS_COLUMN).data(PERCENT_ROLE) == 40
        page.table.selectRow(row)
        assert page.buttons["resume"].isEnabled() and not page.buttons["retry"].isEnabled()
        page.buttons["resume"].click()
        qtbot.waitUntil(lambda: page.model.job(row).state is JobState.DONE, timeout=30000)
        assert page.model.job(row).verified
    finally:
        page.stop()
        worker.wait_all()


def test_pause_cancel_retry_and_open_folder_buttons(page, qtbot, tmp_path: Path) -> None:
    local = tmp_path / "local"
    local.mkdir()
    (local / "big.bin").write_bytes(os.urandom(2_000_000))
    opened: list[QUrl] = []
    page.open_url = opened.append
    job = page.add_job(
        TransferJob(
            "gpu-test", "upload", str(local), str(tmp_path / "r"), TransferOptions(bwlimit_kbps=500)
        )
    )
    page.table.selectRow(_row_of(page, job.id))
    qtbot.waitUntil(lambda: page.model.job(0).bytes_done > 0, timeout=20000)
    assert page.buttons["pause"].isEnabled()
    page.buttons["pause"].click()
    qtbot.waitUntil(lambda: page.model.job(0).state is JobState.PAUSED, timeout=20000)
    page.cancel_selected(keep_partial=True)
    qtbot.waitUntil(lambda: page.model.job(0).state is JobState.CANCELLED, timeout=20000)
    assert page.buttons["retry"].isEnabled()
    page.buttons["open"].click()
    assert opened == [QUrl.fromLocalFile(str(local))]


def test_remote_picker_lists_folders_lazily(qtbot, ssh_target, tmp_path: Path) -> None:
    from gpu_companion.ui.common import worker
    from gpu_companion.ui.transfers.remote_picker import PATH_ROLE, RemotePathDialog

    base = tmp_path / "r"
    (base / "runs" / "exp 1").mkdir(parents=True)
    (base / "-data").mkdir()
    (base / "notes.txt").write_text("x")
    dialog = RemotePathDialog(ssh_target.host, ssh_target.client_factory, str(base))
    qtbot.addWidget(dialog)
    try:
        qtbot.waitUntil(lambda: dialog.model.rowCount() == 1, timeout=10000)
        root = dialog.model.item(0)
        assert [root.child(i).text() for i in range(root.rowCount())] == ["-data", "runs"]
        runs = root.child(1)
        assert runs.child(0).text() == "Loading…"  # not listed until opened
        dialog.tree.expand(runs.index())
        qtbot.waitUntil(lambda: runs.child(0).text() == "exp 1", timeout=10000)
        dialog.tree.setCurrentIndex(runs.child(0).index())
        assert dialog.path() == str(base / "runs" / "exp 1")
        assert runs.child(0).data(PATH_ROLE) == str(base / "runs" / "exp 1")
    finally:
        worker.wait_all()


def test_transfer_dialog_explains_bad_input(qtbot, tmp_path: Path) -> None:
    from gpu_companion.ui.transfers.dialogs import TransferDialog

    host = Host("gpu-test", "127.0.0.1")
    dialog = TransferDialog([host], "upload", lambda h: None)
    qtbot.addWidget(dialog)
    dialog.local.setText(str(tmp_path / "missing"))
    dialog._try_accept()
    assert not dialog.error.isHidden() and "does not exist" in dialog.error.text()
    dialog.local.setText(str(tmp_path))
    dialog.remote.setText("bad\npath")
    dialog._try_accept()
    assert "control character" in dialog.error.text()
    dialog.remote.setText("~/data")
    dialog._try_accept()
    assert dialog.job is not None and dialog.job.remote_path == "data"
    assert dialog.job.options.excludes == (".git", "__pycache__", "*.tmp")


def test_sync_checkpoints_preset_from_the_page(page, qtbot, tmp_path: Path) -> None:
    from gpu_companion.ui.transfers.dialogs import SyncCheckpointsDialog

    out = tmp_path / "outputs"
    out.mkdir()
    (out / "step-1.pt").write_bytes(os.urandom(10_000))
    dialog = SyncCheckpointsDialog(page._hosts(), lambda h: None, str(tmp_path / "bk"))
    qtbot.addWidget(dialog)
    dialog.remote.setText(str(out))
    job = page.queue_checkpoint_sync(dialog)
    assert job is not None and job.label.startswith("Sync checkpoints")
    qtbot.waitUntil(lambda: page.model.job(0).state is JobState.DONE, timeout=30000)
    assert page.model.job(0).verified
    # one layout for every backup: <folder>/<alias>/<path on the host>, as the release gate reads
    assert (tmp_path / "bk" / "gpu-test" / str(out).lstrip("/") / "step-1.pt").exists()
