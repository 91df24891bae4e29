"""A renamed host keeps what names it by alias: its transfer history and the checkpoint backup the
release checklist counts, its GPU graph minutes, and a lane that goes on under the new name. The
services are built as the app builds them (the `fleet` fixture: real sshd, the app's agent and
managed ssh config)."""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path

from gpu_companion.core.monitor.history import METRICS, MinuteRow, MinuteStore
from gpu_companion.core.transfers.job import JobState, TransferJob
from gpu_companion.core.transfers.presets import backup_dir, sync_checkpoints


def test_a_renamed_host_keeps_its_transfers_checkpoint_evidence_and_graphs(fleet, tmp_path: Path):
    s = fleet.services
    host = s.registry.host("box-a")
    remote = tmp_path / "remote" / "ckpt"
    remote.mkdir(parents=True)
    (remote / "step-100.pt").write_bytes(os.urandom(20_000))
    local = backup_dir(s.release.backup_root, host, str(remote))
    job = sync_checkpoints(s.transfers, host, str(remote), str(local))
    s.transfers.run_until_idle(60)
    assert s.transfers.get(job.id).verified, s.transfers.get(job.id).message
    minutes = MinuteStore(s.store)
    minute = MinuteRow("box-a", 0, 29_000_000, 12, tuple(50.0 for _ in METRICS), 90.0)
    minutes.save([minute])

    renamed = s.registry.save_host(replace(host, alias="box-a-renamed"))

    assert s.transfers.get(job.id).host_alias == "box-a-renamed"
    assert s.transfers.last_verified_download("box-a-renamed") is not None
    assert s.transfers.last_verified_download("box-a") is None
    ctx = s.release.context(renamed)
    try:
        evidence = ctx.sync.last_verified(renamed, str(remote), ctx.abspath)
    finally:
        ctx.close()
    assert evidence is not None and evidence.job_id == job.id  # no need to copy it all again
    [kept] = minutes.load("box-a-renamed", 0)
    assert (kept.minute, kept.samples, kept.util_max) == (minute.minute, 12, 90.0)
    assert not math.isnan(kept.means[0]) and minutes.load("box-a", 0) == []

    # the host is reached under its new name: the app's ssh config follows the rename
    s.ssh_sync.flush(30)
    again = s.transfers.add(TransferJob("box-a-renamed", "download", str(tmp_path / "again"),
                                        str(remote)))  # fmt: skip
    s.transfers.run_until_idle(60)
    done = s.transfers.get(again.id)
    assert done.state is JobState.DONE and done.verified, done.message


def test_a_job_finishing_after_a_rename_keeps_the_new_name(fleet, tmp_path: Path):
    """A lane holds the job it runs; when it saves the finished job, the rename stays."""
    s = fleet.services
    host = s.registry.host("box-b")
    job = s.transfers.add(TransferJob("box-b", "download", str(tmp_path / "x"), str(tmp_path)))
    s.registry.save_host(replace(host, alias="box-b-renamed"))
    s.transfers._save(replace(job, state=JobState.DONE, message="finished"))  # the lane's save
    saved = s.transfers.get(job.id)
    assert (saved.host_alias, saved.state, saved.message) == ("box-b-renamed", JobState.DONE,
                                                             "finished")  # fmt: skip


def test_a_host_is_not_renamed_while_a_transfer_to_it_runs(fleet, tmp_path: Path):
    """Its lane is keyed by the alias: renaming under it would start a second lane."""
    import pytest

    from gpu_companion.core.common.errors import ValidationError

    s = fleet.services
    host = s.registry.host("box-b")
    job = s.transfers.add(TransferJob("box-b", "download", str(tmp_path / "x"), str(tmp_path)))
    s.transfers._save(replace(job, state=JobState.RUNNING))  # what its lane writes when it starts
    with pytest.raises(ValidationError, match="A transfer to box-b is running"):
        s.registry.save_host(replace(host, alias="box-b-renamed"))
    assert s.registry.host("box-b") is not None
    # a job left "running" by a command that was killed (-9) holds nothing
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    with s.store.transaction() as db:  # pid 1 never started at tick 0: a gone process
        db.execute("UPDATE transfer_jobs SET owner = ? WHERE id = ?", [f"{boot}:1:0", job.id])
    s.registry.save_host(replace(host, alias="box-b-gone-owner"))
    assert s.transfers.get(job.id).host_alias == "box-b-gone-owner"
    host = s.registry.host("box-b-gone-owner")
    s.transfers._save(replace(job, state=JobState.PAUSED))
    s.registry.save_host(replace(host, alias="box-b-renamed"))  # paused: it moves with the host
    assert s.transfers.get(job.id).host_alias == "box-b-renamed"


def test_the_tray_and_the_alerts_name_a_renamed_host_by_its_new_name(fleet):
    from gpu_companion.ui.shell.tray_model import TrayModel

    s = fleet.services
    host = s.registry.host("box-a")
    s.ledger.start_rental(host.platform_id, "2.40", host_id=host.id)
    s.registry.save_host(replace(host, alias="box-a-renamed"))
    [entry] = TrayModel(s.ledger, s.budgets).snapshot().entries
    assert entry.host_alias == "box-a-renamed" and entry.text.startswith("box-a-renamed · ")
    assert s.ledger.running()[0].host_alias == "box-a-renamed"
