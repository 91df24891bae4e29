"""Inference memory against published measurements up to 30,720-token prompts, the KV cache at
128k against its analytic size, and vLLM's pool against vLLM's own log.

The measurements and their sources live in tests/data/sizing_measurements.json:
- Qwen2.5 speed benchmark (transformers 4.46, flash attention, A100 80GB, batch 1, 2,048 tokens
  generated), sum of torch.cuda.max_memory_allocated over the GPUs used. This is the table the
  issue quotes: the BF16 column is the calibration set, the GPTQ-Int8/GPTQ-Int4/AWQ columns are
  held out.
- Qwen2 speed benchmark (transformers 4.38, which keeps fp32 logits for every prompt token),
  entirely held out.
- vLLM issue 10517: Llama 3.1 8B on an RTX 3090 at max_model_len 20,000.

PyTorch's max_memory_allocated counts neither the CUDA context nor the allocator's cached reserve,
so the estimate is compared through `MemoryEstimate.allocated_bytes`, which leaves those two lines
out and adds every GPU of a layer split.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.planning.catalogue import load_catalogue
from gpu_companion.core.planning.estimate import Task, fewest_gpus
from gpu_companion.core.planning.memory import (
    GIB,
    Attention,
    Engine,
    EstimateRequest,
    estimate_memory,
)
from gpu_companion.core.planning.model_shapes import ModelArch, get_model
from gpu_companion.core.planning.parallel import Strategy
from gpu_companion.core.planning.serving import estimate_serving
from gpu_companion.core.planning.weight_formats import Precision

DATA = json.loads(
    (Path(__file__).parents[3] / "data" / "sizing_measurements.json").read_text("utf-8")
)
FORMATS = {
    "BF16": None,
    "GPTQ-Int8": Precision.GPTQ_INT8,
    "GPTQ-Int4": Precision.GPTQ_INT4,
    "AWQ": Precision.AWQ,
}
# Qwen2-57B-A14B's config.json: 64 experts of 2,560, 8 per token, a 20,480-wide shared expert.
QWEN2_MOE = ModelArch(
    "Qwen2 57B-A14B",
    28,
    3584,
    28,
    4,
    151936,
    18944,
    qkv_bias=True,
    experts=64,
    experts_per_token=8,
    moe_intermediate=2560,
    shared_intermediate=20480,
)
# Three Qwen2.5 AWQ cells at a 1-token prompt measure 0.20-0.44 GiB above the same model's
# GPTQ-Int4 cell and within 0.04-0.12 GiB of their own 6,144-token cell, whose KV cache and
# prefill peak alone are 0.27-0.75 GiB larger: memory that vanishes as the prompt grows, which no
# sizing rule can follow. They are reported, not asserted.
AWQ_ONE_TOKEN = {"Qwen2.5-0.5B-Instruct", "Qwen2.5-1.5B-Instruct", "Qwen2.5-3B-Instruct"}


def _model(name: str) -> ModelArch:
    if "57B" in name:
        return QWEN2_MOE
    size = name.split("-")[1]  # Qwen2-7B-Instruct and Qwen2.5-7B-Instruct share their shape
    return get_model(f"qwen2.5-{size.lower()}")


def _ratio(cell: dict[str, Any], prompt_logits: bool = False) -> float:
    req = EstimateRequest(
        _model(cell["model"]),
        precision=FORMATS[cell["quantization"]],
        prompt_tokens=cell["prompt_tokens"],
        output_tokens=2048,
        gpus=cell["gpus"],
        attention=Attention.FLASH,
        prompt_logits=prompt_logits,
    )
    return estimate_memory(req).allocated_bytes / GIB / cell["gib"]


QWEN25 = DATA["qwen2_5_transformers"]["cells"]
QWEN2 = DATA["qwen2_transformers"]["cells"]


def _id(cell: dict[str, Any]) -> str:
    return f"{cell['model']}-{cell['prompt_tokens']}-{cell['quantization']}-{cell['gpus']}gpu"


@pytest.mark.parametrize("cell", QWEN25, ids=[_id(c) for c in QWEN25])
def test_qwen2_5_cells_within_15_percent(cell: dict[str, Any]) -> None:
    ratio = _ratio(cell)
    if cell["quantization"] == "AWQ" and cell["prompt_tokens"] == 1:
        if cell["model"] in AWQ_ONE_TOKEN:
            assert 0.6 <= ratio < 0.85, "an excluded cell now agrees: take it off the list"
            return
    assert 0.85 <= ratio <= 1.15, f"{_id(cell)}: estimated / measured = {ratio:.3f}"


def test_qwen2_5_median_per_prompt_length_and_column() -> None:
    # Median and worst ratio per prompt length, calibration (BF16) and held-out columns apart.
    for length in (1, 6144, 14336, 30720):
        for held_out in (False, True):
            ratios = [
                _ratio(c)
                for c in QWEN25
                if c["prompt_tokens"] == length
                and (c["quantization"] != "BF16") == held_out
                and not (c["quantization"] == "AWQ" and length == 1 and c["model"] in AWQ_ONE_TOKEN)
            ]
            assert 0.95 <= statistics.median(ratios) <= 1.05, (length, held_out)
            assert 0.93 <= min(ratios) and max(ratios) <= 1.05, (length, held_out)


@pytest.mark.parametrize(
    "cell",
    [c for c in QWEN2 if c["prompt_tokens"] > 1],
    ids=[_id(c) for c in QWEN2 if c["prompt_tokens"] > 1],
)
def test_qwen2_cells_with_prompt_logits(cell: dict[str, Any]) -> None:
    # transformers 4.38 keeps bf16 and fp32 logits of every prompt token: 30,720 x 151,936 x 6
    # bytes = 26 GiB, most of what a 0.5B model needs at that length.
    ratio = _ratio(cell, prompt_logits=True)
    # 72B GPTQ-Int4 at 30,720 on 2 GPUs measures 19.3 GiB above AWQ of the same size and split.
    low = 0.8 if cell["quantization"] == "GPTQ-Int4" and "72B" in cell["model"] else 0.85
    assert low <= ratio <= 1.15, f"{_id(cell)}: estimated / measured = {ratio:.3f}"
    assert _ratio(cell) < ratio  # without them the estimate is lower


def test_the_issue_example_is_no_longer_low() -> None:
    # 1.5B GPTQ-Int4 at 30,720: the chunked estimate said 2.6 GiB against 3.85 measured.
    cell = next(
        c
        for c in QWEN25
        if c["model"] == "Qwen2.5-1.5B-Instruct"
        and c["prompt_tokens"] == 30720
        and c["quantization"] == "GPTQ-Int4"
    )
    assert cell["gib"] == 3.85
    assert 0.95 <= _ratio(cell) <= 1.05


@pytest.mark.parametrize(
    ("key", "expected_gib"),
    [
        # 2 x 32 layers x 8 KV heads x 128 x 131,072 tokens x 2 bytes = 16 GiB
        ("llama-3.1-8b", 16.0),
        # 2 x 28 x 4 x 128 x 131,072 x 2 = 7 GiB
        ("qwen2.5-7b", 7.0),
        # 2 x 80 x 8 x 128 x 131,072 x 2 = 40 GiB
        ("llama-3.1-70b", 40.0),
    ],
)
def test_kv_cache_at_128k_is_the_analytic_size(key: str, expected_gib: float) -> None:
    req = EstimateRequest(get_model(key), prompt_tokens=126_976, output_tokens=4096)
    mem = estimate_memory(req)
    assert req.context == 131_072
    assert mem.line("kv_cache").bytes == int(expected_gib * GIB)
    # llama.cpp's q8_0 cache keeps 34 bytes per 32 values, q4_0 18.
    for kind, share in (("q8_0", 34 / 64), ("q4_0", 18 / 64)):
        cpp = EstimateRequest(
            get_model(key), context_tokens=131_072, engine=Engine.LLAMA_CPP, kv_cache_type=kind
        )
        assert estimate_memory(cpp).line("kv_cache").bytes == int(expected_gib * GIB * share)


def test_vllm_pool_matches_vllm_s_own_log() -> None:
    v = DATA["vllm"]
    req = EstimateRequest(
        get_model(v["model"]),
        context_tokens=v["max_model_len"],
        engine=Engine.VLLM,
        batched_tokens=v["max_model_len"],  # V0 profiles one max_model_len prefill
    )
    s = estimate_serving(req, load_catalogue().get("rtx-3090"), 1, total_gib=v["total_gib"])
    assert s.longest_context == pytest.approx(v["kv_cache_tokens"], rel=0.05)
    assert s.max_concurrency == pytest.approx(v["max_concurrency"], rel=0.05)
    # the profiling peak vLLM logged: 17.06 - 14.99 = 2.07 GiB for 20,000 tokens
    assert estimate_memory(req).line("activations").bytes / GIB == pytest.approx(2.07, rel=0.05)
    assert "30,343 tokens" in s.pool_formula and "(1.52x)" in s.pool_formula


def test_72b_bf16_at_30k_on_three_gpus_is_a_layer_split() -> None:
    model = get_model("Qwen/Qwen2.5-72B-Instruct")
    req = EstimateRequest(model, prompt_tokens=30720, output_tokens=2048, gpus=3)
    mem = estimate_memory(req)
    assert req.split is Strategy.LAYERS
    # the busiest GPU: 27 of 80 layers plus the embedding or lm_head, its KV share, the whole
    # prefill peak; every GPU together holds all weights once.
    assert "27 of 80 layers" in mem.line("weights").formula
    assert (
        mem.line_total(mem.line("weights"))
        == estimate_memory(EstimateRequest(model, prompt_tokens=30720, output_tokens=2048))
        .line("weights")
        .bytes
    )
    assert mem.total_gib < 80  # fits three 80 GB cards
    with pytest.raises(ValidationError, match="layer split"):
        estimate_memory(EstimateRequest(model, gpus=3, strategy=Strategy.TP))
    # vLLM prefers tensor parallel where the heads divide, and splits layers where they do not
    assert EstimateRequest(model, gpus=4, engine=Engine.VLLM).split is Strategy.TP
    assert EstimateRequest(model, gpus=3, engine=Engine.VLLM).split is Strategy.LAYERS


def test_eager_attention_materialises_the_score_matrix() -> None:
    # 28 heads x 14,336^2 scores x (2 + 4) bytes for Qwen2.5 7B: 32 GiB that SDPA/flash avoid.
    base = EstimateRequest(get_model("qwen2.5-7b"), prompt_tokens=14336, output_tokens=2048)
    eager = EstimateRequest(
        get_model("qwen2.5-7b"), prompt_tokens=14336, output_tokens=2048, attention=Attention.EAGER
    )
    extra = estimate_memory(eager).line("activations").bytes
    extra -= estimate_memory(base).line("activations").bytes
    assert extra == 28 * 14336 * 14336 * 6


def test_output_tokens_change_the_memory_and_the_context_is_their_sum() -> None:
    model = get_model("qwen2.5-7b")
    short = estimate_memory(EstimateRequest(model, prompt_tokens=8192, output_tokens=256))
    long = estimate_memory(EstimateRequest(model, prompt_tokens=8192, output_tokens=8192))
    assert short.request.context == 8448 and long.request.context == 16384
    assert long.line("kv_cache").bytes > short.line("kv_cache").bytes
    with pytest.raises(ValidationError, match="prompt plus the output"):
        estimate_memory(
            EstimateRequest(model, context_tokens=4096, prompt_tokens=4096, output_tokens=100)
        )


def test_fewest_gpus_is_what_the_wizard_proposes() -> None:
    catalogue = load_catalogue()
    h100 = catalogue.get("h100-sxm")
    # Qwen2.5 72B in BF16 with a 30,720-token prompt: 3 x 80 GB cards, split by layers.
    req = EstimateRequest(get_model("qwen2.5-72b"), prompt_tokens=30720, output_tokens=2048)
    sized = fewest_gpus(req, h100)
    assert sized is not None and sized.request.gpus == 3
    assert sized.request.split is Strategy.LAYERS and sized.fits(h100)
    # a 7B model needs one; a full fine-tune of a 72B model trains with ZeRO-3
    small = fewest_gpus(EstimateRequest(get_model("qwen2.5-7b")), h100)
    assert small is not None and small.request.gpus == 1
    train = fewest_gpus(EstimateRequest(get_model("qwen2.5-72b"), task=Task.LORA), h100)
    assert train is not None and train.request.gpus > 1
    assert train.request.split is Strategy.ZERO3
    # DeepSeek-V3 in FP8 does not fit 8 RTX 4090s
    assert fewest_gpus(EstimateRequest(get_model("deepseek-v3")), catalogue.get("rtx-4090")) is None
