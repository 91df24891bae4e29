"""Checklist settings, and the parsers of rsync, find and the process probe outputs."""

from __future__ import annotations

from datetime import date

import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.release import ChecklistConfig, CustomCommand
from gpu_companion.core.release.leftovers import scan_argv
from gpu_companion.core.release.processes import parse_probe
from gpu_companion.core.release.record import ChecklistSettings
from gpu_companion.core.transfers.rsync.engine import itemized_differences


def test_archive_name_and_its_fallback():
    cfg = ChecklistConfig(project="llama-lora", precision="bf16")
    assert cfg.archive_name(date(2026, 3, 7), zstd=True) == "llama-lora-20260307-bf16.tar.zst"
    assert cfg.archive_name(date(2026, 3, 7), zstd=False) == "llama-lora-20260307-bf16.tar.gz"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"project": "my project"}, "project"),
        ({"precision": "../fp8"}, "precision"),
        ({"size_threshold_mib": 0}, "size_threshold_mib"),
        ({"synced_dirs": ("ok", "bad\npath")}, "paths"),
        ({"custom": (CustomCommand("", "true"),)}, "custom"),
        ({"disabled": ("nonsense",)}, "disabled"),
    ],
)
def test_bad_settings_are_refused_with_the_field(change, field):
    with pytest.raises(ValidationError) as err:
        ChecklistConfig(**change).validated()
    assert err.value.field == field


def test_settings_round_trip_through_the_store(store):
    from dataclasses import replace

    from gpu_companion.core.hosts.registry import Host, HostRegistry

    registry = HostRegistry(store)
    host = registry.save_host(Host("gpu1", "10.0.0.1", 22, "root"))
    settings = ChecklistSettings(store)
    assert settings.config("gpu1") == ChecklistConfig()
    cfg = ChecklistConfig(
        synced_dirs=("~/ckpt",), custom=(CustomCommand("pushed", "git status --porcelain"),)
    ).dismiss("/root/x.bin", "scratch")
    settings.save_config("gpu1", cfg)
    assert settings.config("gpu1") == cfg
    with pytest.raises(ValidationError, match="Say why"):
        cfg.dismiss("/root/y", " ")
    with pytest.raises(ValidationError):
        settings.save_config("gpu1", ChecklistConfig(project="a b"))
    assert settings.config("gpu1") == cfg  # the bad save lost nothing
    registry.save_host(replace(host, alias="gpu1-renamed"))
    assert settings.config("gpu1-renamed") == cfg  # joined by host id: a rename keeps it
    assert settings.config("gpu1") == ChecklistConfig()


def test_itemized_rsync_output_lists_only_content_to_copy():
    out = (
        ">f+++++++++ step-300.pt\n"
        ".f..t...... step-100.pt\n"  # same content, other mtime: nothing to send
        "cd+++++++++ sub/\n"
        ">f.st...... sub/log.txt\n"
        "cL+++++++++ latest -> step-300.pt\n"
    )
    # one parser for the whole app (the transfer engine's): a new directory counts as content
    assert itemized_differences(out) == [
        "step-300.pt", "sub/", "sub/log.txt", "latest -> step-300.pt"]  # fmt: skip
    assert itemized_differences("") == []


def test_scan_argv_prunes_covered_dirs_and_quotes_nothing_itself():
    argv = scan_argv(["/root"], ["/root/.cache", "/root/ckpt"], 100, 1700000000.5)
    assert argv[:3] == ["find", "/root", "-xdev"]
    assert argv[3:12] == [
        "(",
        "-path",
        "/root/.cache",
        "-o",
        "-path",
        "/root/ckpt",
        ")",
        "-prune",
        "-o",
    ]
    assert "-newermt" in argv and "@1700000000.500000" in argv and "+102400k" in argv


PROBE = """## gpu
2026/03/07 10:00:00.000, GPU-0, NVIDIA H100, 00000000:18:00.0, 4242, python train.py, 20000
## gpu-exit 0
## self
900
## ps
      1       0 /sbin/init
    120       1 /usr/bin/python3 /usr/bin/networkd-dispatcher --run-startup-triggers
    300       1 torchrun --nproc_per_node 8 train.py
    301     300 /opt/conda/bin/python3.11 -u train.py --local-rank 0
    900     899 sh -c script
    901     900 ps -eo pid=,ppid=,args=
## comm
      1 Ss   init
    120 Ssl  networkd-dispat
    300 Sl   torchrun
    301 Rl   python3.11
    900 S    sh
    901 R    ps
## tmux
/tmp/tmux-0/default|#|555|#|sleep|#|my run|#|x
## screen
There is a screen on:
\t777.train\t(Detached)
1 Socket in /run/screen/S-root.
"""


def test_the_probe_output_lists_gpu_work_processes_and_sessions():
    f = parse_probe(PROBE, ignored=("networkd-dispatcher",))
    assert f.gpu == ["GPU process 4242 python train.py, 20000 MiB"]
    assert f.processes == [
        "process 300 torchrun --nproc_per_node 8 train.py",
        "process 301 /opt/conda/bin/python3.11 -u train.py --local-rank 0",
    ]
    assert f.sessions == [
        "tmux session 'my run|#|x' (socket /tmp/tmux-0/default): sleep, pid 555",
        "screen session 'train', pid 777",
    ]


def test_a_gpu_that_cannot_be_queried_fails_and_a_missing_nvidia_smi_does_not():
    lost = (
        "## gpu\nUnable to determine the device handle for GPU 0000:03:00.0: GPU is lost.\n"
        "## gpu-exit 15\n## ps\n## comm\n## tmux\n## screen\n"
    )
    f = parse_probe(lost, ())
    assert f.all and f.gpu_problem
    missing = "## gpu\nsh: 1: nvidia-smi: not found\n## gpu-exit 127\n## ps\n## tmux\n"
    f = parse_probe(missing, ())
    assert f.all == [] and "not installed" in f.gpu_problem


def test_a_zombie_is_not_work_read_from_the_real_ps(tmp_path):
    """A python that exited but whose parent never reaped it (`python3 <defunct>`): real ps
    output, the probe's own ps commands."""
    import subprocess
    import time

    parent = subprocess.Popen(["sh", "-c", "python3 -c pass & exec sleep 30"])
    try:
        deadline = time.monotonic() + 10
        while True:
            stat = subprocess.run(["ps", "-o", "pid=,stat=", "--ppid", str(parent.pid)],
                                  capture_output=True, text=True).stdout.split()  # fmt: skip
            if len(stat) == 2 and stat[1].startswith("Z") or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert len(stat) == 2 and stat[1].startswith("Z"), stat
        ps = subprocess.run(["ps", "-eo", "pid=,ppid=,args="], capture_output=True, text=True)
        comm = subprocess.run(["ps", "-eo", "pid=,stat=,comm="], capture_output=True, text=True)
        out = f"## gpu-exit 127\n## self\n1\n## ps\n{ps.stdout}## comm\n{comm.stdout}"
        found = parse_probe(out, ignored=())
        assert not any(f"process {stat[0]} " in p for p in found.processes), found.processes
    finally:
        parent.kill()
        parent.wait()
