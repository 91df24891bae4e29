"""The rsync command as data: what the engine will run, checked before anything runs."""

from __future__ import annotations

import os
import shlex
import time
from pathlib import Path

import pytest

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.transfers.job import TransferJob, TransferOptions
from gpu_companion.core.transfers.rsync.engine import (
    RsyncCommand,
    deletions,
    itemized_differences,
    salvage_temp_files,
    ssh_command_string,
)

SSH = ["ssh", "-F", "/home/a b/.ssh/gpu-companion/config"]


def test_upload_argv_has_the_safe_options_and_dashdash_before_paths(tmp_path: Path) -> None:
    src = tmp_path / "-data dir"
    src.mkdir()
    job = TransferJob(
        "box",
        "upload",
        str(src),
        "-weird 'name' ü",
        TransferOptions(excludes=(".git", "*.tmp"), bwlimit_kbps=500),
    )
    cmd = RsyncCommand.prepare(job, "box", SSH, rsync="/usr/bin/rsync")
    argv = cmd.argv
    assert argv[:4] == ["/usr/bin/rsync", "-a", "--protect-args", "--partial-dir=.rsync-partial"]
    assert argv[4:9] == [
        "--safe-links",
        "--no-devices",
        "--no-specials",
        "--no-owner",
        "--no-group",
    ]
    assert argv[argv.index("-e") + 1] == "ssh -F '/home/a b/.ssh/gpu-companion/config'"
    for opt in (
        "--info=progress2,name1",
        "--stats",
        "--bwlimit=500",
        "--exclude=.git",
        "--exclude=*.tmp",
        "--mkpath",
    ):
        assert opt in argv
    assert "--delete" not in argv
    assert not any(a.startswith("--chmod") for a in argv)  # the user's own modes go up as they are
    assert argv[-3:] == ["--", f"{src}/", "box:-weird 'name' ü/"]
    assert cmd.env["LC_ALL"] == "C" and "LANG" not in cmd.env


def test_download_argv_mirrors_the_remote_folder(tmp_path: Path) -> None:
    job = TransferJob("box", "download", str(tmp_path / "out"), "~/runs/exp 1")
    argv = RsyncCommand.prepare(job, "box", ["ssh"], mkpath=False).argv
    assert argv[-3:] == ["--", "box:runs/exp 1/", f"{tmp_path / 'out'}/"]
    assert "--mkpath" not in argv
    assert "--chmod=ug-s,go-w" in argv  # the host's setuid and group/other write are dropped
    # no link out of the folder, no device node, fifo or socket, no owner from the host
    safe = {"--safe-links", "--no-devices", "--no-specials", "--no-owner", "--no-group"}
    assert safe <= set(argv[: argv.index("--")])


def test_verify_and_preview_are_dry_runs(tmp_path: Path) -> None:
    job = TransferJob("box", "upload", str(tmp_path), "x")
    verify = RsyncCommand.prepare(job, "box", ["ssh"], purpose="verify").argv
    assert {"--checksum", "--dry-run", "--itemize-changes"} <= set(verify)
    assert not any(a.startswith("--info") or a.startswith("--bwlimit") for a in verify)
    preview = RsyncCommand.prepare(job, "box", ["ssh"], purpose="preview-delete").argv
    assert {"--dry-run", "--delete", "--itemize-changes"} <= set(preview)
    for argv in (verify, preview):  # the same tree rules as the transfer
        assert {"--safe-links", "--no-devices", "--no-specials"} <= set(argv)


def test_delete_without_preview_is_refused(tmp_path: Path) -> None:
    job = TransferJob("box", "upload", str(tmp_path), "x", TransferOptions(delete=True))
    with pytest.raises(UserError, match="preview"):
        RsyncCommand.prepare(job, "box", ["ssh"])
    ok = TransferJob(
        "box", "upload", str(tmp_path), "x", TransferOptions(delete=True, delete_previewed=True)
    )
    assert "--delete" in RsyncCommand.prepare(ok, "box", ["ssh"]).argv


def test_ssh_command_string_round_trips_through_shell_words() -> None:
    argv = ["ssh", "-F", "/p/it's here/config", "-o", "ServerAliveInterval=15"]
    assert shlex.split(ssh_command_string(argv)) == argv


def test_itemized_differences_ignore_attribute_only_lines() -> None:
    out = (
        ".d..t...... ./\n"
        ">fc.t...... sub dir/w.pt\n"
        "cd+++++++++ new/\n"
        "<f+++++++++ -dash\n"
        "*deleting   old.pt\n"
        "sending incremental file list\n"
    )
    assert itemized_differences(out) == ["sub dir/w.pt", "new/", "-dash", "old.pt"]
    assert deletions(out) == ["old.pt"]


def test_salvage_moves_recent_rsync_temp_files_only(tmp_path: Path) -> None:
    since = time.time()
    (tmp_path / "sub").mkdir()
    temp = tmp_path / "sub" / ".model.bin.Ab12Cd"
    temp.write_bytes(b"x" * 10)
    old = tmp_path / ".bashrc.backup"
    old.write_text("mine")
    os.utime(old, (since - 3600, since - 3600))
    moved = salvage_temp_files(tmp_path, since)
    assert moved == [tmp_path / "sub" / ".rsync-partial" / "model.bin"]
    assert moved[0].read_bytes() == b"x" * 10 and not temp.exists()
    assert old.exists()
