"""The self-check's judgements on probe records: thresholds, hints and the wheel index choice."""

from __future__ import annotations

import pytest

from gpu_companion.core.planning.catalogue import load_catalogue
from gpu_companion.core.selfcheck.check import SelfCheckOptions, build_probe_command
from gpu_companion.core.selfcheck.rules import (
    Findings,
    Status,
    card_for_gpu_name,
    judge,
)
from gpu_companion.core.selfcheck.torch_wheels import wheel_hint

SMI_OK = {
    "step": "nvidia_smi",
    "table": {
        "rc": 0,
        "out": "| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |",
    },
    "query": {"rc": 0, "out": "0, GPU-1, NVIDIA H100 80GB HBM3, 2, 81559, 550.54.15\n"},
    "apps": {"rc": 0, "out": ""},
}


def _steps(*records, **findings):
    f = Findings(**findings)
    return {s.key: s for r in records for s in judge(r, f)}


@pytest.mark.parametrize(
    ("name", "card"),
    [
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("NVIDIA H100 PCIe", "h100-pcie"),
        ("NVIDIA H200", "h200-sxm"),
        ("NVIDIA A100-SXM4-80GB", "a100-80gb-sxm"),
        ("NVIDIA A100-PCIE-40GB", "a100-40gb-sxm"),
        ("NVIDIA L4", "l4"),
        ("NVIDIA L40S", "l40s"),
        ("NVIDIA A10", "a10"),
        ("Tesla T4", "t4"),
        ("Tesla V100-SXM2-32GB", "v100-sxm2-32gb"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090"),
        ("NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"),
        ("NVIDIA RTX A6000", "rtx-a6000"),
    ],
)
def test_nvidia_smi_names_map_to_catalogue_cards(name, card):
    assert card_for_gpu_name(name).id == card


def test_unknown_cards_are_not_guessed():
    assert card_for_gpu_name("NVIDIA A10G") is None
    assert card_for_gpu_name("Quadro P4000") is None


@pytest.mark.parametrize(
    ("driver", "index"),
    [
        ((12, 4), "cu124"),
        ((12, 2), "cu121"),
        ((13, 1), "cu130"),
        ((12, 8), "cu128"),
        ((11, 8), "cu118"),
    ],
)
def test_wheel_index_is_the_newest_the_driver_supports(driver, index):
    hint = wheel_hint(driver, "2.5.1+cpu")
    assert f"https://download.pytorch.org/whl/{index}" in hint
    assert "torch==2.5.1 " in hint


def test_a_driver_older_than_every_wheel_says_so():
    assert "newer NVIDIA driver" in wheel_hint((11, 4))


def _torch(cuda, available=False, **extra):
    return {
        "step": "torch",
        "imported": True,
        "version": f"2.5.1+cu{cuda}",
        "cuda": cuda,
        "available": available,
        "device_count": int(available),
        "devices": [],
        **extra,
    }


def test_cuda_mismatch_gets_the_wheel_hint():
    steps = _steps(SMI_OK, _torch("13.0", warnings=["The NVIDIA driver on your system is too old"]))
    match, avail = steps["cuda_match"], steps["cuda_available"]
    assert match.status is Status.FAIL and "only up to 12.4" in match.evidence
    assert "whl/cu124" in match.hint
    assert "too old" in avail.evidence and "newer driver" in avail.hint


def test_minor_version_ahead_is_a_warning():
    steps = _steps(SMI_OK, _torch("12.6", available=True, devices=["NVIDIA H100 80GB HBM3"]))
    assert steps["cuda_match"].status is Status.WARN
    assert steps["cuda_available"].status is Status.PASS


def test_no_gpu_visible_has_its_own_hint():
    smi = {
        "step": "nvidia_smi",
        "table": {"rc": 0, "out": ""},
        "query": {"rc": 6, "out": "No devices were found"},
        "apps": {},
    }
    steps = _steps(smi, _torch("12.4"))
    assert steps["nvidia_smi"].status is Status.FAIL and "no GPU" in steps["nvidia_smi"].evidence
    assert (
        "no GPU" in steps["cuda_available"].hint or "no GPU" in steps["cuda_available"].hint.lower()
    )


@pytest.mark.parametrize(
    ("tflops", "status", "words"),
    [
        (603.0, Status.PASS, "reached 61% of the H100 SXM's rated 989"),
        (250.0, Status.WARN, "25%"),
        (
            118.0,
            Status.FAIL,
            "12% of the H100 SXM's rated 989.5 BF16 TFLOPS (dense) — something is wrong",
        ),
    ],
)
def test_bf16_speed_against_the_catalogue(tflops, status, words):
    bf16 = {"step": "bf16", "n": 8192, "iters": 500, "seconds": 1.0, "tflops": tflops}
    step = _steps(SMI_OK, bf16)["bf16_speed"]
    assert step.status is status and words in step.evidence


def test_chosen_card_differs_from_the_host():
    steps = _steps(SMI_OK, card=load_catalogue().get("a100-80gb-sxm"))
    assert steps["gpus"].status is Status.FAIL
    assert "you chose the A100 80GB SXM" in steps["gpus"].evidence


def test_wrong_matmul_result_fails():
    step = _steps({"step": "matmul", "n": 256, "max_error": 3.0, "device": "cuda:0"})["matmul"]
    assert step.status is Status.FAIL and "faulty GPU memory" in step.hint


def test_small_disk_fails_slow_disk_warns():
    small = {
        "step": "disk",
        "path": "/data",
        "free_bytes": 5e9,
        "total_bytes": 50e9,
        "read_mb_s": 900.0,
        "write_mb_s": 500.0,
        "size_mb": 256,
    }
    assert _steps(small)["disk"].status is Status.FAIL
    slow = {**small, "free_bytes": 500e9, "read_mb_s": 40.0}
    assert _steps(slow)["disk"].status is Status.WARN


def test_old_python_and_missing_pip_warn():
    old = {
        "step": "python",
        "version": "3.8.10",
        "executable": "/usr/bin/python3",
        "pip_rc": 0,
        "pip": "pip 20",
    }
    assert _steps(old)["python"].status is Status.WARN
    nopip = {**old, "version": "3.10.12", "pip_rc": 1, "pip": "No module named pip"}
    assert "ensurepip" in _steps(nopip)["python"].hint


def test_probe_command_quotes_every_argument():
    cmd = build_probe_command(SelfCheckOptions(data_dir="/data/my set; rm -rf ~"))
    assert cmd.startswith("python3 - --data-dir '/data/my set; rm -rf ~' --disk-mb 256")


# --- every table header layout, R470 to R610 ----------------------------------------------------


@pytest.mark.parametrize(
    ("header", "cuda"),
    [
        ("| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |", "11.4"),
        ("| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |", "12.4"),
        ("| NVIDIA-SMI 610.57.04     KMD Version: 610.57.04     CUDA UMD Version: 13.3     |",
         "13.3"),  # fmt: skip
    ],
)
def test_the_driver_cuda_version_is_read_from_every_header_layout(header, cuda):
    smi = {**SMI_OK, "table": {"rc": 0, "out": header}}
    steps = _steps(smi, _torch(cuda, available=True, devices=["NVIDIA H100 80GB HBM3"]))
    assert f"CUDA {cuda}" in steps["nvidia_smi"].evidence
    assert steps["cuda_match"].status is Status.PASS  # judged, not skipped


def test_kmd_version_names_the_driver_when_the_probe_asked_for_it():
    smi = {
        "step": "nvidia_smi",
        "fields": ["index", "uuid", "name", "memory.used", "memory.total", "kmd_version"],
        "table": {"rc": 0, "out": "| KMD Version: 610.57.04     CUDA UMD Version: 13.3 |"},
        "query": {"rc": 0, "out": "0, GPU-1, NVIDIA H100 80GB HBM3, 2, 81559, 610.57.04\n"},
        "apps": {"rc": 0, "out": ""},
    }
    steps = _steps(smi, _torch("13.0", available=True, devices=["NVIDIA H100 80GB HBM3"]))
    assert steps["nvidia_smi"].evidence.startswith("Driver 610.57.04, CUDA 13.3;")
    assert steps["gpus"].status is Status.PASS
    assert steps["cuda_match"].status is Status.PASS
