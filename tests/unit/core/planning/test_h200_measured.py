"""The estimate against memory measured on a real GPU by this project (the lent H200,
scripts/gpu_device_check.py: transformers 5.17, SDPA, random bf16 weights, generate 32 tokens
after prompts of 1 to 30,720 tokens): an independent check, not used to fit the model."""

from __future__ import annotations

import json

import pytest

from gpu_companion.cli import main
from tests.conftest import REPO

DATA = json.loads((REPO / "tests/data/planning/measured_h200_transformers.json").read_text())


@pytest.mark.parametrize("row", DATA["rows"], ids=lambda r: f"{r['model']}@{r['prompt']}")
def test_pytorch_allocated_within_15_percent_of_the_h200(row, capsys) -> None:  # type: ignore[no-untyped-def]
    code = main(["estimate", "--task", "inference", "--model", f"Qwen/{row['model']}",
                 "--precision", "bf16", "--prompt-tokens", str(row["prompt"]),
                 "--output-tokens", str(row["new_tokens"]), "--engine", "transformers",
                 "--attention", "sdpa", "--json"])  # fmt: skip
    assert code == 0
    memory = json.loads(capsys.readouterr().out)["memory"]
    estimated = memory["pytorch_allocated_bytes"] / 2**30
    assert estimated / row["peak_gib"] == pytest.approx(1.0, abs=0.15)
