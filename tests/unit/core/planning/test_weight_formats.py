"""Bits per stored weight for each format, from the format's own definition.

- GGUF: the block structs in ggml's ggml-common.h (block_q8_0: fp16 scale + 32 int8 = 34 bytes per
  32 weights; block_q4_K: 2 fp16 + 12 bytes of scales + 128 bytes of codes = 144 bytes per 256;
  q6_K 210, q5_K 176, q3_K 110, q2_K 84 bytes per 256).
- MXFP4: OCP Microscaling Formats (MX) v1.0: 32 E2M1 values share one E8M0 scale.
- NF4: Dettmers et al. 2023 (QLoRA), section 3: double quantisation brings the constants from
  32/64 = 0.5 to 8/64 + 32/(64 x 256) = 0.127 bits per parameter.
- GPTQ/AWQ: 4-bit codes with an fp16 scale and zero per group of 128 (the stated assumption).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.planning.estimate import EstimateRequest, Precision, estimate_memory
from gpu_companion.core.planning.model_shapes import get_model
from gpu_companion.core.planning.weight_formats import bits_per_weight


@pytest.mark.parametrize(
    ("precision", "group", "bits"),
    [
        (Precision.INT4, 128, 4.25),
        (Precision.INT4, 32, 5.0),
        (Precision.INT3, 128, 3.25),
        (Precision.INT2, 64, 2.5),
        (Precision.NF4, 128, 4.127),
        (Precision.MXFP4, 128, 4.25),
        (Precision.FP8, 128, 8),
        (Precision.Q8_0, 128, 8.5),
        (Precision.Q6_K, 128, 6.5625),
        (Precision.Q5_K, 128, 5.5),
        (Precision.Q4_K, 128, 4.5),
        (Precision.Q3_K, 128, 3.4375),
        (Precision.Q2_K, 128, 2.625),
    ],
)
def test_bits_per_weight(precision: Precision, group: int, bits: float) -> None:
    assert float(bits_per_weight(precision, group)[0]) == pytest.approx(bits, abs=0.0005)


def test_group_size_changes_the_int4_weights_line() -> None:
    # Mistral 7B: 6,979,321,856 linear params x 5 bits / 8 at group 32 = 4,362,076,160
    # + 524,820,480 bytes of 16-bit embeddings and norms.
    model = get_model("mistral-7b")
    mem = estimate_memory(EstimateRequest(model, precision=Precision.INT4, group_size=32))
    assert mem.line("weights").bytes == 4_362_076_160 + 524_820_480
    assert "fp16 scale and zero per 32 weights" in mem.line("weights").formula
    with pytest.raises(ValidationError, match="group size"):
        estimate_memory(EstimateRequest(model, precision=Precision.INT4, group_size=3))


def test_gguf_q4_k_of_a_7b() -> None:
    # 6,979,321,856 x 4.5 / 8 = 3,925,868,544 + 524,820,480 = 4,450,689,024 bytes (4.45 GB).
    mem = estimate_memory(EstimateRequest(get_model("mistral-7b"), precision=Precision.Q4_K))
    assert mem.line("weights").bytes == 4_450_689_024
    assert bits_per_weight(Precision.Q4_K)[0] == Fraction(9, 2)


def test_gptq_and_awq_are_told_apart_and_int8_reads_once() -> None:
    from fractions import Fraction

    from gpu_companion.core.planning.estimate import EstimateRequest, estimate_memory
    from gpu_companion.core.planning.model_shapes import get_model, model_from_config

    # 4-bit codes + a 16-bit scale + a 4-bit packed zero per 128 weights = 4.15625 bits
    assert bits_per_weight(Precision.GPTQ_INT4)[0] == Fraction(4) + Fraction(20, 128)
    assert bits_per_weight(Precision.AWQ)[0] == Fraction(4) + Fraction(20, 128)
    assert bits_per_weight(Precision.GPTQ_INT8)[0] == Fraction(8) + Fraction(24, 128)
    assert bits_per_weight(Precision.GPTQ_INT4, 32)[0] == Fraction(4) + Fraction(20, 32)
    assert "GPTQ" in bits_per_weight(Precision.GPTQ_INT4)[1]
    assert "AWQ" in bits_per_weight(Precision.AWQ)[1]
    int8 = estimate_memory(EstimateRequest(get_model("qwen2.5-7b"), precision=Precision.INT8))
    formula = int8.line("weights").formula
    assert "8 bits (8 bits" not in formula and "bitsandbytes LLM.int8" in formula
    # embeddings and lm_head stay 16-bit: 152,064 x 3,584 x 2 bytes twice (untied)
    assert (
        "lm_head"
        in estimate_memory(EstimateRequest(get_model("qwen2.5-7b"), precision=Precision.AWQ))
        .line("weights")
        .formula
    )
    config = {
        "model_type": "qwen2",
        "hidden_size": 3584,
        "intermediate_size": 18944,
        "num_attention_heads": 28,
        "num_hidden_layers": 28,
        "num_key_value_heads": 4,
        "vocab_size": 152064,
    }
    for quant, expected in (
        ({"quant_method": "gptq", "bits": 4, "group_size": 128}, Precision.GPTQ_INT4),
        ({"quant_method": "gptq", "bits": 8}, Precision.GPTQ_INT8),
        ({"quant_method": "awq", "bits": 4}, Precision.AWQ),
    ):
        arch = model_from_config({**config, "quantization_config": quant})
        assert estimate_memory(EstimateRequest(arch)).precision is expected
