"""The self-check's probe as it ran on a real NVIDIA H200 (driver 580.159.04, CUDA 13.0,
torch 2.11.0+cu130), recorded by scripts/gpu_device_check.py: the app's rules pass every step
on it, the CUDA version is read from the real table, and the matmul is the GPU's."""

from __future__ import annotations

import json
from pathlib import Path

from gpu_companion.core.selfcheck.rules import Findings, Status, judge

HERE = Path(__file__).parent / "h200"


def test_every_step_passes_on_the_real_h200_records() -> None:
    findings = Findings(1)
    steps = []
    for line in (HERE / "selfcheck-probe-h200.jsonl").read_text().splitlines():
        steps += list(judge(json.loads(line), findings))
    by_key = {s.key: s for s in steps}
    assert all(s.status is Status.PASS for s in steps), [(s.key, s.evidence) for s in steps]
    assert "CUDA 13.0" in by_key["nvidia_smi"].evidence
    assert "cuda:0 (NVIDIA H200)" in by_key["matmul"].evidence
    assert "H200" in by_key["bf16_speed"].evidence
