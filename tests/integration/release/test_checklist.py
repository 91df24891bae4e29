"""The checklist against a real host: each item failing alone blocks release, staleness, the
archive's name and sha256, and running work (GPU, tmux on two sockets, python)."""

from __future__ import annotations

import hashlib
import re
import time
from datetime import datetime, timedelta, timezone

import pytest

from gpu_companion.core.release import ItemState, ReleaseChecklist
from gpu_companion.core.release.leftovers import listed_path
from tests.harness.util import wait_for
from tests.integration.release.conftest import box_host, make_ctx, passing_setup

HOUR_AGO = datetime.now(timezone.utc) - timedelta(hours=1)


def states(checklist: ReleaseChecklist) -> dict[str, ItemState]:
    return {it.key: it.state for it in checklist.items}


def run_all(checklist, ctx):  # type: ignore[no-untyped-def]
    return list(checklist.run_all(ctx))


def bring_to_pass(box, cfg):  # type: ignore[no-untyped-def]
    ctx = make_ctx(box, cfg, HOUR_AGO)
    checklist = ReleaseChecklist.build(box_host(box), cfg)
    list(checklist.fix("checkpoints", ctx))
    if "archive" not in cfg.disabled:
        list(checklist.fix("archive", ctx))
    if cfg.manual:
        checklist.item("manual:0").tick("snap-0042")  # type: ignore[attr-defined]
    run_all(checklist, ctx)
    return checklist, ctx


def test_all_pass_then_each_item_failing_alone_blocks_release(box):
    cfg = passing_setup(box)
    checklist, ctx = bring_to_pass(box, cfg)
    r = box.remote
    marker = r.parent / "results-ok"
    manual = checklist.item("manual:0")
    new_gpu_job = [{"pid": 4242, "name": "python train.py", "used_mib": 20000}]
    cases = {  # key: (break it, undo it)
        "checkpoints": (
            lambda: (r / "ckpt" / "step-200.pt").write_bytes(b"x" * 5000),
            lambda: list(checklist.fix("checkpoints", ctx)),
        ),
        "leftovers": (
            lambda: (r / "edited_on_server.py").write_text("print('tweak')\n"),
            lambda: (r / "edited_on_server.py").unlink(),
        ),
        "processes": (
            lambda: box.standin.configure(processes=new_gpu_job),
            lambda: box.standin.configure(),
        ),
        "manual:0": (manual.untick, lambda: manual.tick("")),  # type: ignore[attr-defined]
        "custom:0": (marker.unlink, lambda: marker.write_text("ok\n")),
        "archive": (lambda: _truncate_local_archive(ctx), None),  # last: nothing to restore
    }
    try:
        assert set(states(checklist).values()) == {ItemState.PASSED}, [
            (it.key, it.evidence) for it in checklist.items
        ]
        assert checklist.ready()
        assert sorted(cases) == sorted(it.key for it in checklist.items)
        for key, (brk, undo) in cases.items():
            brk()
            run_all(checklist, ctx)
            failed = [k for k, s in states(checklist).items() if s is not ItemState.PASSED]
            assert failed == [key], (key, [(it.key, it.evidence) for it in checklist.items])
            assert not checklist.ready()
            if undo is not None:
                undo()
                list(checklist.run_item(key, ctx))
                assert checklist.ready(), (key, checklist.item(key).evidence)
    finally:
        ctx.close()


def _truncate_local_archive(ctx) -> None:  # type: ignore[no-untyped-def]
    [archive] = list((ctx.local_dir / "archives").glob("*.tar.*"))
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])


def test_a_new_file_in_a_synced_dir_makes_the_item_stale_until_it_passes_again(box):
    only = ("archive", "leftovers", "processes")
    cfg = passing_setup(box, disabled=only, manual=(), custom=())
    checklist, ctx = bring_to_pass(box, cfg)
    try:
        assert checklist.ready()
        assert list(checklist.check_staleness(ctx)) == []  # nothing changed: nothing stale
        time.sleep(0.02)
        (box.remote / "ckpt" / "step-300.pt").write_bytes(b"new weights")
        updates = list(checklist.check_staleness(ctx))
        assert [(u.key, u.state) for u in updates] == [("checkpoints", ItemState.STALE)]
        assert "step-300.pt" in updates[0].message
        assert not checklist.ready()
        # Release re-checks stale items first: the new file is not copied yet, so it fails ...
        list(checklist.recheck_stale(ctx))
        item = checklist.item("checkpoints")
        assert item.state is ItemState.FAILED
        assert item.evidence is not None and item.evidence.figures["files_pending"] == 1
        # ... and the fix (sync) makes it pass again.
        list(checklist.fix("checkpoints", ctx))
        assert item.state is ItemState.PASSED and checklist.ready()
        assert (ctx.local_dir / str(box.remote / "ckpt").lstrip("/") / "step-300.pt").exists()
    finally:
        ctx.close()


def test_archive_is_named_and_verified_on_both_sides_and_truncation_fails(box):
    cfg = passing_setup(box)
    ctx = make_ctx(box, cfg, HOUR_AGO)
    checklist = ReleaseChecklist.build(box_host(box), cfg)
    try:
        list(checklist.fix("archive", ctx))
        item = checklist.item("archive")
        assert item.state is ItemState.PASSED, item.evidence
        [local] = list((ctx.local_dir / "archives").iterdir())
        assert re.fullmatch(r"llama-lora-\d{8}-bf16\.tar\.zst", local.name)
        assert local.name[11:19] == datetime.now().astimezone().strftime("%Y%m%d")
        remote_sha = box.sh(f"sha256sum ~/.cache/gpu-companion/archives/{local.name}").split()[0]
        local_sha = hashlib.sha256(local.read_bytes()).hexdigest()
        assert remote_sha == local_sha
        ev = item.evidence
        assert ev is not None
        assert ev.figures["remote_sha256"] == ev.figures["local_sha256"] == local_sha
        listing = box.sh(f"tar --zstd -tf ~/.cache/gpu-companion/archives/{local.name}")
        assert "weights.safetensors" in listing and "logs/train.log" in listing
        # a truncated download fails the check
        local.write_bytes(local.read_bytes()[:-100])
        list(checklist.run_item("archive", ctx))
        assert item.state is ItemState.FAILED
        assert item.evidence is not None and "truncated" in item.evidence.summary
        # an artefact changed after packing fails it too
        list(checklist.fix("archive", ctx))
        assert item.state is ItemState.PASSED
        time.sleep(0.02)
        (box.remote / "out" / "logs" / "train.log").write_text("step 200\n")
        list(checklist.run_item("archive", ctx))
        assert item.state is ItemState.FAILED and "changed after packing" in item.evidence.summary
    finally:
        ctx.close()


def test_archive_falls_back_to_gzip_where_zstd_is_unusable(box):
    broken = box.standin.bin_dir / "zstd"
    broken.write_text("#!/bin/sh\necho 'zstd: not usable here' >&2\nexit 127\n")
    broken.chmod(0o755)
    cfg = passing_setup(box)
    ctx = make_ctx(box, cfg, HOUR_AGO)
    checklist = ReleaseChecklist.build(box_host(box), cfg)
    try:
        list(checklist.fix("archive", ctx))
        item = checklist.item("archive")
        assert item.state is ItemState.PASSED, item.evidence
        [local] = list((ctx.local_dir / "archives").iterdir())
        assert re.fullmatch(r"llama-lora-\d{8}-bf16\.tar\.gz", local.name)
        assert local.read_bytes()[:2] == b"\x1f\x8b"
    finally:
        ctx.close()


def test_running_work_fails_the_check_and_is_listed_until_it_ends(box):
    cfg = passing_setup(box)
    ctx = make_ctx(box, cfg, HOUR_AGO)
    checklist = ReleaseChecklist.build(box_host(box), cfg)
    item = checklist.item("processes")
    try:
        list(checklist.run_item("processes", ctx))
        assert item.state is ItemState.PASSED, item.evidence
        box.standin.configure(
            processes=[{"pid": 4242, "name": "python train.py", "used_mib": 20000}]
        )
        box.sh(f"tmux -S {box.tmux_socket} new-session -d -s train 'sleep 300'")
        wait_for(  # under load the pane may not have exec'd `sleep` yet
            lambda: (
                "sleep"
                in box.sh(f"tmux -S {box.tmux_socket} list-panes -a -F '#{{pane_current_command}}'")
            ),
            10,
            "the tmux pane to run sleep",
        )
        list(checklist.run_item("processes", ctx))
        assert item.state is ItemState.FAILED
        details = "\n".join(item.evidence.details)
        assert "GPU process 4242 python train.py, 20000 MiB" in details
        assert f"tmux session 'train' (socket {box.tmux_socket}): sleep" in details
        assert item.evidence.figures == {"gpu_processes": 1, "processes": 1, "sessions": 1}
        assert "tmux" in details.split("process ")[-1]  # the tmux server process itself
        box.standin.configure()
        box.sh(f"tmux -S {box.tmux_socket} kill-server")
        list(checklist.run_item("processes", ctx))
        assert item.state is ItemState.PASSED, item.evidence
    finally:
        ctx.close()


def test_sessions_on_the_default_tmux_socket_and_python_processes_are_found(box):
    cfg = passing_setup(box)
    ctx = make_ctx(box, cfg, HOUR_AGO)
    checklist = ReleaseChecklist.build(box_host(box), cfg)
    item = checklist.item("processes")
    try:
        box.sh("tmux new-session -d -s dflt 'sleep 300'")  # $TMUX_TMPDIR/tmux-UID/default
        pid = box.sh("nohup python3 -c 'import time; time.sleep(300)' >/dev/null 2>&1 & echo $!")
        list(checklist.run_item("processes", ctx))
        details = "\n".join(item.evidence.details)
        assert "tmux session 'dflt'" in details and "/tmux-default/" in details
        assert "python3 -c import time; time.sleep(300)" in details
        # a new process after a pass makes the passed item stale
        box.sh(f"tmux kill-server; kill {pid.strip()}")
        list(checklist.run_item("processes", ctx))
        assert item.state is ItemState.PASSED, item.evidence
        box.sh("tmux new-session -d -s late 'sleep 300'")
        assert [u.key for u in checklist.check_staleness(ctx)] == ["processes"]
        assert item.state is ItemState.STALE
    finally:
        ctx.close()


def test_left_behind_files_are_listed_and_pass_once_dismissed(box):
    cfg = passing_setup(box)
    (box.remote / "scratch").mkdir()
    big = box.remote / "scratch" / "old-dataset.bin"
    big.write_bytes(b"\0" * (2 * 2**20))
    old = time.time() - 7200
    import os

    os.utime(big, (old, old))  # old but big: listed for its size
    (box.remote / "notes.md").write_text("edited on the server")  # small but new: listed
    cache = box.remote / ".cache"  # not a known cache here (only ~/.cache is): still listed
    cache.mkdir()
    ctx = make_ctx(box, cfg, HOUR_AGO)
    checklist = ReleaseChecklist.build(box_host(box), cfg)
    item = checklist.item("leftovers")
    try:
        list(checklist.run_item("leftovers", ctx))
        assert item.state is ItemState.FAILED
        listed = sorted(listed_path(d) for d in item.evidence.details)
        assert listed == [str(box.remote / "notes.md"), str(big)]
        assert item.evidence.figures["open"] == 2
        for path in listed:
            cfg = cfg.dismiss(path, "scratch, re-creatable")
        ctx.config = cfg
        list(checklist.run_item("leftovers", ctx))
        assert item.state is ItemState.PASSED, item.evidence
        assert item.evidence.figures["dismissed"] == 2
    finally:
        ctx.close()


def test_a_lost_connection_fails_the_item_with_a_message(box):
    cfg = passing_setup(box)
    ctx = make_ctx(box, cfg, HOUR_AGO)
    checklist = ReleaseChecklist.build(box_host(box), cfg)
    box.server.stop()
    list(checklist.run_item("processes", ctx))
    item = checklist.item("processes")
    assert item.state is ItemState.FAILED
    assert item.evidence is not None and item.evidence.summary
    ctx.close()


@pytest.mark.parametrize("missing", ["ckpt"])
def test_a_missing_synced_dir_fails_with_rsyncs_reason(box, missing):
    cfg = passing_setup(box, synced_dirs=(str(box.remote / "nope"),))
    ctx = make_ctx(box, cfg, HOUR_AGO)
    checklist = ReleaseChecklist.build(box_host(box), cfg)
    list(checklist.run_item("checkpoints", ctx))
    item = checklist.item("checkpoints")
    assert item.state is ItemState.FAILED
    assert item.evidence.summary == f"{box.remote / 'nope'}: no such directory on box"
    list(checklist.fix("checkpoints", ctx))  # the queue job fails with rsync's own reason
    assert item.state is ItemState.FAILED
    assert item.evidence.summary.startswith(f"Copying {box.remote / 'nope'} failed: ")
    assert "(rsync exit code 23)" in item.evidence.summary
    assert box.queue.history()[0].state.value == "failed"  # the Transfers page lists it
    ctx.close()
