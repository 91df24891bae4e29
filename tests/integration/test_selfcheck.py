"""The self-check over the harness sshd: the real CPU build of torch, the nvidia-smi stand-in, and
hosts without python3, torch, a driver or a working GPU."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.selfcheck.check import (
    SelfCheckOptions,
    _exec,
    format_steps,
    run_selfcheck,
)
from gpu_companion.core.selfcheck.rules import Status

pytestmark = pytest.mark.sshd

FAST = {"disk_test_mb": 2, "min_free_gb": 0.001}


def _host(server, gpus: int = 1) -> Host:
    return Host(
        alias="box", hostname="127.0.0.1", port=server.port, user=server.user, gpu_count=gpus
    )


def _run(server, factory, data_dir: Path, **options):
    opts = SelfCheckOptions(data_dir=str(data_dir), **{**FAST, **options})
    steps = list(run_selfcheck(_host(server), factory(server), opts))
    print(format_steps(steps))
    return {s.key: s for s in steps}, steps


@pytest.fixture
def no_torch_python(tmp_path: Path) -> Path:
    """A python3 without site-packages (-S): a host whose image has Python but no PyTorch."""
    d = tmp_path / "no-torch-bin"
    d.mkdir()
    (d / "python3").write_text('#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n')
    (d / "python3").chmod(0o755)
    return d


def _server_with(sshd, prefix: Path):
    """Put `prefix` first on the sessions' PATH; an empty HOME keeps the login user's ~/.bashrc
    from putting its own python3 (pyenv) in front again."""
    home = prefix.parent / "remote-home"
    home.mkdir(exist_ok=True)
    sshd.path_prefix.insert(0, prefix)
    sshd.env["HOME"] = str(home)
    sshd.restart()
    return sshd


def test_cpu_torch_host_fails_with_the_no_cuda_hint(
    torch_sshd, standin, ssh_client_factory, tmp_path
):
    standin.configure(mem_used=3, cuda="12.4")
    by_key, steps = _run(torch_sshd, ssh_client_factory, tmp_path)
    assert [s.key for s in steps] == [
        "connect",
        "python",
        "nvidia_smi",
        "gpus",
        "torch",
        "cuda_match",
        "cuda_available",
        "matmul",
        "bf16_speed",
        "disk",
    ]
    assert by_key["connect"].status is Status.PASS
    assert by_key["python"].status is Status.PASS and "pip" in by_key["python"].evidence
    assert by_key["nvidia_smi"].status is Status.PASS
    assert "CUDA 12.4" in by_key["nvidia_smi"].evidence
    assert by_key["gpus"].status is Status.PASS
    assert "NVIDIA H100 80GB HBM3" in by_key["gpus"].evidence
    assert by_key["torch"].evidence == "torch 2.13.0+cpu"
    match = by_key["cuda_match"]
    assert match.status is Status.FAIL and "CPU-only build" in match.evidence
    available = by_key["cuda_available"]
    assert available.status is Status.FAIL and available.evidence.startswith("False")
    assert "CPU-only" in available.hint
    assert "https://download.pytorch.org/whl/cu124" in available.hint
    assert "torch==2.13.0 " in available.hint
    assert by_key["matmul"].status is Status.SKIP and by_key["bf16_speed"].status is Status.SKIP
    disk = by_key["disk"]
    assert disk.status in (Status.PASS, Status.WARN)
    assert str(tmp_path) in disk.evidence and "MB/s" in disk.evidence
    assert not list(tmp_path.glob(".gpu-companion-selfcheck-*"))  # the test file is gone


def test_someone_elses_process_and_a_missing_gpu_are_reported(
    sshd, standin, no_torch_python, ssh_client_factory, tmp_path
):
    standin.configure(
        gpu_count=1,
        mem_used=20000,
        processes=[{"gpu": 0, "pid": 777, "name": "miner", "used_mib": 20000}],
    )
    opts = SelfCheckOptions(data_dir=str(tmp_path), expected_gpus=2, **FAST)
    server = _server_with(sshd, no_torch_python)
    steps = {s.key: s for s in run_selfcheck(_host(server), ssh_client_factory(server), opts)}
    gpus = steps["gpus"]
    assert gpus.status is Status.FAIL
    assert "1 GPU(s) instead of the 2 you rented" in gpus.evidence
    assert "pid 777 miner 20000 MiB" in gpus.evidence and "20,000 MiB" in gpus.evidence
    assert "another machine" in gpus.hint


def test_lost_gpu_gets_its_own_hint(sshd, standin, no_torch_python, ssh_client_factory, tmp_path):
    standin.configure(mode="gpu_lost")
    by_key, _ = _run(_server_with(sshd, no_torch_python), ssh_client_factory, tmp_path)
    smi = by_key["nvidia_smi"]
    assert smi.status is Status.FAIL and "is lost" in smi.evidence
    assert "reboot the instance" in smi.hint
    assert by_key["gpus"].status is Status.SKIP
    torch = by_key["torch"]
    assert torch.status is Status.FAIL and "No module named 'torch'" in torch.evidence
    assert by_key["cuda_available"].status is Status.SKIP


def test_one_gpu_needing_a_reset_is_named_and_the_seven_good_ones_are_kept(
    sshd, standin, no_torch_python, ssh_client_factory, tmp_path
):
    standin.configure(gpu_count=8, mem_used=3, reset_gpus=[3])
    opts = SelfCheckOptions(data_dir=str(tmp_path), expected_gpus=8, **FAST)
    server = _server_with(sshd, no_torch_python)
    steps = {s.key: s for s in run_selfcheck(_host(server, 8), ssh_client_factory(server), opts)}
    smi = steps["nvidia_smi"]
    assert smi.status is Status.FAIL
    assert smi.evidence.startswith("GPU 3 needs a reset.") and "the other 7 GPU(s)" in smi.evidence
    assert "Do not train on GPU 3" in smi.hint
    gpus = steps["gpus"]  # the good GPUs' results are kept, and 7 + 1 is what was rented
    assert gpus.status is Status.PASS, gpus.evidence
    assert gpus.evidence.startswith("7 × NVIDIA H100 80GB HBM3")
    assert gpus.evidence.count("MiB free") == 7


def test_no_driver_and_no_torch_each_get_their_hint(
    sshd, standin, no_torch_python, ssh_client_factory, tmp_path
):
    standin.configure(mode="no_driver")
    by_key, _ = _run(_server_with(sshd, no_torch_python), ssh_client_factory, tmp_path)
    smi = by_key["nvidia_smi"]
    assert smi.status is Status.FAIL and "cannot talk to the NVIDIA driver" in smi.evidence
    assert "driver is not loaded" in smi.hint
    torch = by_key["torch"]
    assert "PyTorch is not installed" in torch.hint
    assert "nvidia-smi" in torch.hint  # no driver CUDA version known: where to find it


def test_missing_torch_hint_names_the_wheel_for_the_driver(
    sshd, standin, no_torch_python, ssh_client_factory, tmp_path
):
    standin.configure(mem_used=0, cuda="12.2")
    by_key, _ = _run(_server_with(sshd, no_torch_python), ssh_client_factory, tmp_path)
    assert by_key["gpus"].status is Status.PASS
    assert "--index-url https://download.pytorch.org/whl/cu121" in by_key["torch"].hint


def test_host_without_python3(sshd, standin, ssh_client_factory, tmp_path):
    bad = tmp_path / "no-python"
    bad.mkdir()
    (bad / "python3").write_text("#!/bin/sh\necho 'python3: command not found' >&2\nexit 127\n")
    (bad / "python3").chmod(0o755)
    # the stand-in nvidia-smi is itself a Python script: it keeps the test's own interpreter
    (bad / "nvidia-smi").write_text(
        f'#!/bin/sh\nexec {sys.executable} {standin.bin_dir / "nvidia-smi"} "$@"\n'
    )
    (bad / "nvidia-smi").chmod(0o755)
    standin.configure(mem_used=0)
    by_key, steps = _run(_server_with(sshd, bad), ssh_client_factory, tmp_path)
    python = by_key["python"]
    assert python.status is Status.FAIL and "not on the host's PATH" in python.evidence
    assert "apt-get install" in python.hint
    # nvidia-smi is still asked directly, the Python-based steps are skipped with the reason
    assert by_key["gpus"].status is Status.PASS
    assert by_key["torch"].status is Status.SKIP and "python3" in by_key["torch"].evidence


def test_a_command_that_ends_before_reading_the_probe_is_not_an_error(sshd, ssh_client_factory):
    """No python3 on the host: the shell answers 127 before the probe is written. Writing into the
    closed channel is not what the user needs to hear; the exit status is."""
    client = ssh_client_factory(sshd)(_host(sshd))
    try:
        _in, out, err = _exec(client, "echo gone >&2; exit 127", "x" * 8_000_000, 10)
        assert out.channel.recv_exit_status() == 127
        assert err.read().decode().strip() == "gone"
    finally:
        client.close()


def test_connection_failure_is_one_step_not_a_traceback(sshd, ssh_client_factory, tmp_path):
    sshd.regenerate_host_key()  # the known_hosts entry the factory writes is read before this
    factory = ssh_client_factory(sshd)
    sshd.regenerate_host_key()
    steps = list(run_selfcheck(_host(sshd), factory, SelfCheckOptions(**FAST)))
    assert len(steps) == 1 and steps[0].key == "connect" and steps[0].status is Status.FAIL


def test_the_remote_command_quotes_its_arguments(
    sshd, standin, no_torch_python, ssh_client_factory, tmp_path
):
    odd = tmp_path / "data dir; touch pwned"
    odd.mkdir()
    standin.configure(mem_used=0)
    by_key, _ = _run(_server_with(sshd, no_torch_python), ssh_client_factory, odd)
    assert str(odd) in by_key["disk"].evidence
    assert not (Path.home() / "pwned").exists() and not Path("pwned").exists()


def test_a_610_driver_is_read_through_kmd_version_and_cuda_umd_version(
    torch_sshd, standin, ssh_client_factory, tmp_path
):
    """R610 prints "KMD Version" / "CUDA UMD Version" and deprecates driver_version: the CUDA
    check is judged on 13.3 (the wheel hint names cu130), not skipped."""
    known = ["timestamp", "driver_version", "kmd_version", "index", "uuid", "name", "pci.bus_id",
             "utilization.gpu", "memory.used", "memory.total", "memory.free", "count"]  # fmt: skip
    standin.configure(mem_used=3, layout="610", driver="610.57.04", cuda="13.3",
                      known_fields=known)  # fmt: skip
    by_key, _ = _run(torch_sshd, ssh_client_factory, tmp_path)
    assert by_key["nvidia_smi"].status is Status.PASS
    assert by_key["nvidia_smi"].evidence.startswith("Driver 610.57.04, CUDA 13.3;")
    assert by_key["gpus"].status is Status.PASS
    match = by_key["cuda_match"]
    assert match.status is Status.FAIL and "CPU-only build" in match.evidence  # torch is CPU here
    assert "https://download.pytorch.org/whl/cu130" in by_key["cuda_available"].hint
    queries = [line for line in standin.log_path.read_text().splitlines() if "--query-gpu" in line]
    assert queries and all("kmd_version" in q and "driver_version" not in q for q in queries)
