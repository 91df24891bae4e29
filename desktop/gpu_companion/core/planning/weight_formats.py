"""How many bits each stored weight costs in the formats people download: 16/32-bit, FP8, int-k
with GPTQ/AWQ groups, bitsandbytes NF4, MXFP4 and GGUF block types.

Block formats carry scales (and zero points) next to the codes; the bits below count them, which is
why a "4-bit" model is 4.25-4.5 bits per weight on disk and in VRAM.
"""

from __future__ import annotations

from enum import Enum
from fractions import Fraction

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import N_, _

DEFAULT_GROUP = 128  # GPTQ and AWQ default group size


class Precision(str, Enum):
    """How the base weights are stored; bf16 first because it is the usual default."""

    BF16 = "bf16"
    FP16 = "fp16"
    FP32 = "fp32"
    FP8 = "fp8"
    INT8 = "int8"
    GPTQ_INT8 = "gptq-int8"
    GPTQ_INT4 = "gptq-int4"
    AWQ = "awq"
    INT4 = "int4"
    INT3 = "int3"
    INT2 = "int2"
    NF4 = "nf4"
    MXFP4 = "mxfp4"
    Q8_0 = "gguf-q8_0"
    Q6_K = "gguf-q6_k"
    Q5_K = "gguf-q5_k"
    Q4_K = "gguf-q4_k"
    Q3_K = "gguf-q3_k"
    Q2_K = "gguf-q2_k"

    @property
    def quantised(self) -> bool:
        """True for formats that shrink only linear layers (embeddings and norms stay 16-bit)."""
        return self not in (Precision.BF16, Precision.FP16, Precision.FP32)

    @property
    def grouped(self) -> bool:
        """True for the GPTQ/AWQ integer formats whose size depends on the group size."""
        return self in _GROUPED


# Fixed block formats: (bits per weight, how they add up). GGUF sizes are the block structs of
# ggml-common.h: bytes per block of 32 (Q8_0) or 256 weights (K-quants) × 8 ÷ weights.
_FIXED: dict[Precision, tuple[Fraction, str]] = {
    Precision.FP32: (Fraction(32), "32 bits"),
    Precision.BF16: (Fraction(16), "16 bits"),
    Precision.FP16: (Fraction(16), "16 bits"),
    Precision.FP8: (Fraction(8), "8-bit E4M3 codes (per-channel scales negligible)"),
    Precision.INT8: (
        Fraction(8),
        "8-bit codes, one fp32 scale per row, negligible (bitsandbytes LLM.int8)",
    ),
    Precision.NF4: (
        Fraction(4) + Fraction(8, 64) + Fraction(32, 64 * 256),
        "4-bit NF4 codes + an 8-bit absmax per 64 weights + an fp32 scale per 256 absmax "
        "(bitsandbytes double quantisation)",
    ),
    Precision.MXFP4: (
        Fraction(4) + Fraction(8, 32),
        "4-bit E2M1 codes + an 8-bit shared exponent per 32 weights (OCP MX spec)",
    ),
    Precision.Q8_0: (Fraction(34 * 8, 32), "GGUF Q8_0: 34 bytes per 32 weights"),
    Precision.Q6_K: (Fraction(210 * 8, 256), "GGUF Q6_K: 210 bytes per 256 weights"),
    Precision.Q5_K: (Fraction(176 * 8, 256), "GGUF Q5_K: 176 bytes per 256 weights"),
    Precision.Q4_K: (Fraction(144 * 8, 256), "GGUF Q4_K: 144 bytes per 256 weights"),
    Precision.Q3_K: (Fraction(110 * 8, 256), "GGUF Q3_K: 110 bytes per 256 weights"),
    Precision.Q2_K: (Fraction(84 * 8, 256), "GGUF Q2_K: 84 bytes per 256 weights"),
}
_INT_BITS = {Precision.INT4: 4, Precision.INT3: 3, Precision.INT2: 2}
# GPTQ (AutoGPTQ/optimum) and AWQ (AutoAWQ) checkpoints: k-bit codes packed in int32, an fp16
# scale per group and output column, and a zero point per group packed like the codes (k bits).
# GPTQ also keeps an int32 g_idx per input row (under 0.01 bit per weight, left out).
_PACKED_BITS = {Precision.GPTQ_INT8: 8, Precision.GPTQ_INT4: 4, Precision.AWQ: 4}
_GROUPED = frozenset({*_INT_BITS, *_PACKED_BITS})


def bits_per_weight(precision: Precision, group_size: int = DEFAULT_GROUP) -> tuple[Fraction, str]:
    """Stored bits per weight and how they add up; int-k adds an fp16 scale and an fp16 zero point
    per group, so int4 at group 128 is 4.25 bits."""
    if precision in _GROUPED:
        if not 8 <= group_size <= 1 << 16:
            raise ValidationError(
                "group_size",
                _("The quantisation group size must be 8 to 65,536, not {size}.").format(
                    size=group_size
                ),
            )
        if precision in _PACKED_BITS:
            k = _PACKED_BITS[precision]
            tool = "AWQ" if precision is Precision.AWQ else "GPTQ"
            return k + Fraction(16 + k, group_size), (
                f"{tool}: {k}-bit codes + an fp16 scale and a {k}-bit zero point per "
                f"{group_size} weights"
            )
        k = _INT_BITS[precision]
        bits = k + Fraction(32, group_size)
        return bits, f"{k}-bit codes + fp16 scale and zero per {group_size} weights"
    return _FIXED[precision]


WEIGHT_FORMAT_NOTES = (
    N_(
        "Weights: int8 = 8 bits (bitsandbytes LLM.int8); gptq-int8/gptq-int4/awq = 8/4 bits plus "
        "an fp16 scale and a packed zero point per group of 128 (8.19/4.16 bits; GPTQ adds an "
        "int32 g_idx per input row); int4/int3/int2 = 4/3/2 bits plus an fp16 scale and an fp16 "
        "zero point per group of 128 weights (--group-size changes it), so int4 is 4.25 bits; NF4 "
        "4.127 bits (bitsandbytes, double quantisation); MXFP4 4.25 bits; FP8 8 bits; GGUF types "
        "by their block size (Q8_0 8.5, Q6_K 6.5625, Q5_K 5.5, Q4_K 4.5, Q3_K 3.4375, Q2_K 2.625 "
        "bits; the _S/_M mixes keep some tensors one type higher). Embeddings, lm_head, norms and "
        "MoE routers stay 16-bit; MXFP4 shrinks only the MoE experts, as gpt-oss ships them."
    ),
)
