"""Several GPUs: what each strategy divides, checked against the ZeRO paper's own figures.

[ZERO] Rajbhandari et al. 2020, "ZeRO: Memory Optimizations Toward Training Trillion Parameter
Models", arXiv:1910.02054, Figure 1: a 7.5B-parameter model with mixed-precision Adam (K = 12) on
64 GPUs needs per GPU 120 GB as baseline (2 + 2 + K) x psi, 31.4 GB with P_os (2 + 2) psi + K psi/N,
16.6 GB with P_os+g 2 psi + (2 + K) psi/N and 1.9 GB with P_os+g+p (2 + 2 + K) psi/N.
[HF-FT] Hugging Face, "Fine-tune Llama 2 7B": full fine-tuning of a 7B model needs at least two
A100 80 GB; the figure that drives it is 16 bytes per parameter of weights and states.
"""

from __future__ import annotations

import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.planning.catalogue import load_catalogue
from gpu_companion.core.planning.estimate import (
    EstimateRequest,
    Precision,
    Strategy,
    Task,
    checkpointing_tip,
    estimate,
    estimate_memory,
)
from gpu_companion.core.planning.memory import Engine
from gpu_companion.core.planning.model_shapes import get_model

STATES = ("weights", "gradients", "optimizer")


def _states(strategy: Strategy, gpus: int) -> int:
    req = EstimateRequest(
        get_model("llama-2-7b"), task=Task.FULL_MIXED, gpus=gpus, strategy=strategy
    )
    mem = estimate_memory(req)
    return sum(mem.line(key).bytes for key in STATES)


@pytest.mark.parametrize(
    ("strategy", "bytes_per_param", "paper_gb"),
    [
        (Strategy.DDP, 16, 120),
        (Strategy.ZERO1, 4 + 12 / 64, 31.4),
        (Strategy.ZERO2, 2 + 14 / 64, 16.6),
        (Strategy.ZERO3, 16 / 64, 1.9),
        (Strategy.FSDP, 16 / 64, 1.9),
    ],
)
def test_zero_stages_divide_states_as_the_paper_does(
    strategy: Strategy, bytes_per_param: float, paper_gb: float
) -> None:
    psi = get_model("llama-2-7b").params
    assert _states(strategy, 64) == pytest.approx(psi * bytes_per_param, abs=64)
    # The same ratio for the paper's 7.5B model gives its Figure 1 numbers.
    assert 7.5 * bytes_per_param == pytest.approx(paper_gb, abs=0.05)


def test_zero3_over_8_gpus_divides_weights_gradients_and_adam_states() -> None:
    # Llama 2 7B, 6,738,415,616 params: (2 + 2 + 12) x psi / 8 = 13,476,831,232 bytes per GPU,
    # plus two gathered layers of 202,383,360 params x 2 bytes each = 809,533,440.
    psi = 6_738_415_616
    req = EstimateRequest(
        get_model("llama-2-7b"), task=Task.FULL_MIXED, gpus=8, strategy=Strategy.ZERO3
    )
    mem = estimate_memory(req)
    assert mem.line("weights").bytes == psi * 2 // 8
    assert mem.line("gradients").bytes == psi * 2 // 8
    assert mem.line("optimizer").bytes == psi * 12 // 8
    assert mem.line("gathered").bytes == 2 * 202_383_360 * 2
    assert mem.line("optimizer").formula.endswith("÷ 8 GPUs (ZeRO-3) = 9.41 GiB")
    single = estimate_memory(EstimateRequest(get_model("llama-2-7b"), task=Task.FULL_MIXED))
    assert single.line("activations") == mem.line("activations")  # the batch is per GPU


def test_full_fine_tune_of_a_7b_needs_two_80_gb_cards() -> None:
    # [HF-FT]: at least two A100 80 GB. One card: over 100 GiB; two with ZeRO-3: fits.
    a100 = load_catalogue().get("a100-80gb-sxm")
    model = get_model("llama-2-7b")
    one = estimate_memory(EstimateRequest(model, task=Task.FULL_MIXED))
    assert not one.fits(a100) and one.total_gib > 100
    two = EstimateRequest(model, task=Task.FULL_MIXED, gpus=2, strategy=Strategy.ZERO3)
    assert estimate_memory(two).fits(a100)
    ddp = EstimateRequest(model, task=Task.FULL_MIXED, gpus=2)
    result = estimate(ddp, a100)
    assert not result.verdicts[0].ok and "ZeRO-3 or FSDP" in result.verdicts[0].text


def test_tensor_parallel_serving_splits_weights_and_kv_heads() -> None:
    # Llama 3.1 70B on 4 GPUs: weights / 4; 8 KV heads -> 2 per GPU.
    model = get_model("llama-3.1-70b")
    one = estimate_memory(EstimateRequest(model))
    four = estimate_memory(EstimateRequest(model, gpus=4, engine=Engine.VLLM))
    assert four.request.split is Strategy.TP
    assert four.line("weights").bytes == -(-one.line("weights").bytes // 4)
    assert four.line("kv_cache").bytes == one.line("kv_cache").bytes // 4
    assert "2 KV heads (of 8, per GPU)" in four.line("kv_cache").formula
    # MLA's latent is not split by heads: every rank keeps the whole cache.
    ds = get_model("deepseek-v3")
    tp8 = EstimateRequest(ds, gpus=8, strategy=Strategy.TP)
    assert estimate_memory(tp8).line("kv_cache") == estimate_memory(EstimateRequest(ds)).line(
        "kv_cache"
    )


def test_pcie_only_cards_are_communication_bound() -> None:
    # Qwen2.5 7B full fine-tune, ZeRO-3, 8 GPUs, 1,024 tokens per GPU: each GPU sends
    # 7/8 x (2 x 15.23 GB + 15.23 GB) = 39.98 GB per step. Over PCIe Gen4 (32 GB/s) that is
    # 1.25 s against 0.71 s of compute on RTX 4090s; over H100 NVLink (450 GB/s) 0.09 s.
    req = EstimateRequest(
        get_model("qwen2.5-7b"),
        task=Task.FULL_MIXED,
        gpus=8,
        strategy=Strategy.ZERO3,
        gradient_checkpointing=False,
    )
    catalogue = load_catalogue()
    pcie = estimate(req, catalogue.get("rtx-4090"))
    assert pcie.throughput is not None and pcie.throughput.comm_bound
    slow = pcie.verdicts[-1]
    assert not slow.ok and "Communication-bound" in slow.text and "PCIe Gen4 x16" in slow.text
    assert "= 39.98 GB per GPU per step over PCIe Gen4 x16 (32 GB/s) = 1.25 s" in slow.text
    nvlink = estimate(req, catalogue.get("h100-sxm"))
    assert nvlink.throughput is not None and not nvlink.throughput.comm_bound
    assert nvlink.verdicts[-1].ok and "The link keeps up" in nvlink.verdicts[-1].text


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"gpus": 2, "strategy": Strategy.ZERO3}, "to serve one model over 2 GPUs use tensor"),
        ({"gpus": 3, "strategy": Strategy.TP}, "KV heads to divide evenly"),
        ({"gpus": 2, "strategy": Strategy.LAYERS, "task": Task.LORA}, "sized for inference"),
        ({"gpus": 0}, "number of GPUs must be 1 to 1,024"),
    ],
)
def test_impossible_splits_are_refused(kwargs: dict[str, object], message: str) -> None:
    req = EstimateRequest(get_model("llama-3.1-8b"), **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match=message):
        estimate_memory(req)


def test_tensor_parallel_serving_over_pcie_is_flagged() -> None:
    req = EstimateRequest(
        get_model("llama-3.1-70b"), precision=Precision.INT4, gpus=2, engine=Engine.VLLM
    )
    catalogue = load_catalogue()
    pcie = estimate(req, catalogue.get("rtx-4090")).verdicts[-1]
    assert not pcie.ok and pcie.text.startswith("Tensor parallel over PCIe Gen4 x16")
    assert "160 for this model" in pcie.text
    bridged = estimate(req, catalogue.get("rtx-3090")).verdicts[-1]  # a bridged pair: NVLink
    assert bridged.ok and "NVLink" in bridged.text


def test_checkpointing_tip_names_the_cards_it_gains() -> None:
    # Llama 3.1 8B LoRA, 4,096 tokens: 41.5 GiB without, 21.7 GiB with checkpointing; the
    # 24-40 GB cards join the 48 GB and larger ones.
    catalogue = load_catalogue()
    off = estimate_memory(
        EstimateRequest(
            get_model("llama-3.1-8b"),
            task=Task.LORA,
            context_tokens=4096,
            gradient_checkpointing=False,
        )
    )
    tip = checkpointing_tip(off, catalogue.cards)
    assert tip is not None
    gained = [c for c in catalogue.cards if 21.7 < c.vram_gb < 41.5]
    assert f"it also fits {len(gained)} more cards, from the RTX 3090 (24 GB)" in tip.text
    assert tip.text.endswith(
        f"{sum(1 for c in catalogue.cards if c.vram_gb >= 48)} cards hold it now."
    )
    on = estimate_memory(EstimateRequest(get_model("llama-3.1-8b"), task=Task.LORA))
    assert checkpointing_tip(on, catalogue.cards) is None
    assert checkpointing_tip(off, [catalogue.get("h100-sxm")]) is None  # fits either way
