"""The GPU matmul is judged on the GPU's own record: the probe names the device that computed
(found on a real H200: the record said "cpu", the device of the copy brought back)."""

from __future__ import annotations

from gpu_companion.core.selfcheck.rules import Findings, Status, judge


def _matmul(record: dict) -> object:  # type: ignore[type-arg]
    [step] = list(judge({"step": "matmul", "n": 256, "max_error": 0.0, **record}, Findings(1)))
    return step


def test_a_matmul_on_the_gpu_passes_and_names_it() -> None:
    step = _matmul({"device": "cuda:0 (NVIDIA H200)"})
    assert step.status is Status.PASS  # type: ignore[attr-defined]
    assert "on cuda:0 (NVIDIA H200) matches the CPU exactly" in step.evidence  # type: ignore[attr-defined]


def test_a_matmul_that_ran_on_the_cpu_proves_nothing() -> None:
    step = _matmul({"device": "cpu"})
    assert step.status is Status.FAIL  # type: ignore[attr-defined]
    assert "not on the GPU" in step.evidence  # type: ignore[attr-defined]
