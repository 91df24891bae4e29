"""Two running uploads must not starve quick work: lanes run off the shared QThreadPool."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QThreadPool

from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.transfers.job import JobState, TransferJob, TransferOptions
from gpu_companion.core.transfers.queue import TransferQueue
from tests.integration.transfer_helpers import make_engine

pytestmark = pytest.mark.sshd

ALIASES = ("gpu-test", "gpu-test-2")


@pytest.fixture
def two_core_pool():  # type: ignore[no-untyped-def]
    """The global pool as a 2-core laptop sizes it, whatever this machine has."""
    pool = QThreadPool.globalInstance()
    before = pool.maxThreadCount()
    pool.setMaxThreadCount(2)
    yield pool
    pool.setMaxThreadCount(before)


def test_two_slow_uploads_leave_the_shared_pool_free(
    ctx, nav, qtbot, ssh_target, tmp_path: Path, two_core_pool
) -> None:
    from gpu_companion.ui.common import worker
    from gpu_companion.ui.transfers.page import TransfersPage

    t = ssh_target
    block = t.config_path.read_text()
    t.config_path.write_text(block + block.replace("Host gpu-test\n", "Host gpu-test-2\n"))
    hosts = {a: replace(t.host, alias=a) for a in ALIASES}
    for alias in ALIASES:
        ctx.registry.save_host(Host(alias, "127.0.0.1", t.server.port, t.server.user))
    ctx.transfers = TransferQueue(ctx.store, make_engine(t), hosts.get, save_every_s=0.2)
    page = TransfersPage(ctx, nav)
    qtbot.addWidget(page)
    try:
        for alias in ALIASES:
            local = tmp_path / f"local-{alias}"
            local.mkdir()
            (local / "big.bin").write_bytes(os.urandom(1_500_000))  # ~15 s at 100 KiB/s
            page.add_job(
                TransferJob(
                    alias,
                    "upload",
                    str(local),
                    str(tmp_path / f"remote-{alias}"),
                    TransferOptions(bwlimit_kbps=100),
                )
            )
        assert set(page.queue.scheduler.lanes()) == set(ALIASES)  # one lane per host
        qtbot.waitUntil(
            lambda: all(
                j.state is JobState.RUNNING and j.bytes_done > 0 for j in page.model.jobs()
            ),
            timeout=20000,
        )
        answered: list[object] = []
        start = time.monotonic()
        worker.run_in_thread(lambda: "pong", on_result=answered.append)
        qtbot.waitUntil(lambda: answered == ["pong"], timeout=5000)
        waited = time.monotonic() - start
        assert waited < 2.0, f"a quick task waited {waited:.1f} s behind two uploads"
        assert all(j.state is JobState.RUNNING for j in page.model.jobs())  # still uploading
    finally:
        page.stop()
        worker.wait_all()
    assert all(j.state is JobState.PAUSED for j in ctx.transfers.jobs())
