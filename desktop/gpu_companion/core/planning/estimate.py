"""VRAM and speed estimates for a first rental: will the job fit the card, and how fast can it go.

Every memory line carries its formula with the numbers filled in, so a renter can redo the sums;
the constants below and ASSUMPTIONS say what the formulas leave out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.planning.catalogue import GpuSpec
from gpu_companion.core.planning.model_shapes import ModelArch

GIB = 1 << 30
GB = 10**9
CUDA_CONTEXT_BYTES = 512 << 20  # CUDA context + cuBLAS workspaces of one PyTorch process
FRAGMENTATION = Fraction(5, 100)  # caching-allocator slack on top of what tensors need
PREFILL_CHUNK_TOKENS = 2048  # tokens per forward pass with chunked prefill (vLLM, llama.cpp -b)
PREFILL_MFU = 0.5  # share of peak tensor TFLOPS a prefill reaches
TRAIN_MFU = 0.4  # share of peak a single-GPU fine-tune reaches

ASSUMPTIONS = (
    "Weights: int8 = 8 bits and int4 = 4.25 bits per weight (4-bit codes plus an fp16 scale and "
    "an fp16 zero point per 128 weights); embeddings, lm_head and norms stay 16-bit.",
    "KV cache and activations use 2 bytes per value (4 for fp32).",
    "Training activations per layer and token: 4h + 2q + 2kv + 4i values (SwiGLU, "
    "FlashAttention, no dropout), adapted from Korthikanti et al. 2022 (arXiv:2205.05198); "
    "gradient checkpointing keeps one h-vector per layer and token plus one layer recomputed; "
    "logits cost tokens x vocab x (2 + 4) bytes because the loss upcasts them to fp32.",
    "Inference activations: a 2,048-token prefill chunk through one layer plus fp32 logits of one "
    "token per sequence.",
    "Adam: mixed precision keeps an fp32 master copy plus fp32 m and v (16 bytes per parameter "
    "with bf16 weights and gradients, Rajbhandari et al. 2020, arXiv:1910.02054); pure bf16 keeps "
    "bf16 m and v; LoRA adapters are fp32 by default (PEFT) with fp32 Adam states.",
    "Overhead: 0.5 GiB CUDA context and workspaces plus 5% of everything else for fragmentation.",
    "Decode speed is an upper bound: all weights and the whole KV cache are read once per step at "
    "the card's peak bandwidth; real engines reach 60-80% of it.",
    "Prefill and training assume 50% and 40% of dense peak TFLOPS, and 2N and 6N FLOPs per token "
    "(4N for LoRA, whose frozen weights need no weight gradients; +2N with checkpointing).",
)


class Task(str, Enum):
    """What the rented card will do; it decides which memory lines exist."""

    INFERENCE = "inference"
    LORA = "lora"
    QLORA_8BIT = "qlora-8bit"
    QLORA_4BIT = "qlora-4bit"
    FULL_MIXED = "full-mixed"
    FULL_BF16 = "full-bf16"

    @property
    def uses_lora(self) -> bool:
        """True for the adapter methods, whose base weights stay frozen."""
        return self in (Task.LORA, Task.QLORA_8BIT, Task.QLORA_4BIT)


class Precision(str, Enum):
    """How the base weights are stored; bf16 first because it is the usual default."""

    BF16 = "bf16"
    FP16 = "fp16"
    FP32 = "fp32"
    INT8 = "int8"
    INT4 = "int4"


class LoraTargets(str, Enum):
    """Which linear layers get adapters: the LoRA paper's q,v; all attention; or all linear."""

    QV = "qv"
    ATTENTION = "attention"
    ALL_LINEAR = "all-linear"


_BITS = {
    Precision.FP32: Fraction(32),
    Precision.BF16: Fraction(16),
    Precision.FP16: Fraction(16),
    Precision.INT8: Fraction(8),
    Precision.INT4: Fraction(17, 4),
}
# The first precision of each task is its default.
_PRECISIONS = {
    Task.INFERENCE: tuple(Precision),
    Task.LORA: (Precision.BF16, Precision.FP16, Precision.FP32),
    Task.QLORA_8BIT: (Precision.INT8,),
    Task.QLORA_4BIT: (Precision.INT4,),
    Task.FULL_MIXED: (Precision.BF16, Precision.FP16),
    Task.FULL_BF16: (Precision.BF16,),
}
_TARGETS = {
    LoraTargets.QV: ("q", "v"),
    LoraTargets.ATTENTION: ("q", "k", "v", "o"),
    LoraTargets.ALL_LINEAR: ("q", "k", "v", "o", "gate", "up", "down"),
}


@dataclass(frozen=True)
class EstimateRequest:
    """The wizard's inputs. `precision` None means the task's usual one; `batch` is sequences
    trained together or users served at once."""

    model: ModelArch
    task: Task = Task.INFERENCE
    precision: Precision | None = None
    context_tokens: int = 4096
    batch: int = 1
    lora_rank: int = 16
    lora_targets: LoraTargets = LoraTargets.ALL_LINEAR
    gradient_checkpointing: bool = False
    adapter_precision: Precision = Precision.FP32


@dataclass(frozen=True)
class MemoryLine:
    """One line of the VRAM breakdown with its arithmetic as text."""

    key: str
    label: str
    bytes: int
    formula: str

    @property
    def gib(self) -> float:
        """Size in GiB, the unit nvidia-smi's MiB add up to."""
        return self.bytes / GIB


@dataclass(frozen=True)
class MemoryEstimate:
    """The VRAM breakdown for one request; `precision` is the one actually used."""

    request: EstimateRequest
    precision: Precision
    params: int
    trainable_params: int
    lines: tuple[MemoryLine, ...]

    @property
    def total_bytes(self) -> int:
        """Sum of all lines."""
        return sum(line.bytes for line in self.lines)

    @property
    def total_gib(self) -> float:
        """Sum of all lines in GiB."""
        return self.total_bytes / GIB

    def line(self, key: str) -> MemoryLine:
        """The line with this key ("weights", "kv_cache", ...); KeyError if the task has none."""
        for line in self.lines:
            if line.key == key:
                return line
        raise KeyError(key)

    def fits(self, gpu: GpuSpec) -> bool:
        """True when the total fits the card's memory, taking its 'GB' as GiB like nvidia-smi."""
        return self.total_bytes <= gpu.vram_gb * GIB


def _gib(size: int) -> str:
    return f"{size / GIB:,.2f} GiB"


def _line(key: str, label: str, size: int, formula: str) -> MemoryLine:
    return MemoryLine(key, label, size, f"{formula} = {_gib(size)}")


def _resolve(req: EstimateRequest) -> Precision:
    allowed = _PRECISIONS[req.task]
    precision = req.precision or allowed[0]
    if precision not in allowed:
        names = ", ".join(p.value for p in allowed)
        raise ValidationError(
            "precision", f"{req.task.value} keeps base weights in {names}, not {precision.value}."
        )
    checks = (
        ("context_tokens", req.context_tokens, 1 << 20, "The context length"),
        ("batch", req.batch, 4096, "The batch or number of users"),
        ("lora_rank", req.lora_rank, 4096, "The LoRA rank"),
    )
    for field, value, high, what in checks:
        if not 1 <= value <= high:
            raise ValidationError(field, f"{what} must be between 1 and {high:,}, not {value}.")
    if req.adapter_precision not in _PRECISIONS[Task.LORA]:
        raise ValidationError("adapter_precision", "LoRA adapters train in fp32, bf16 or fp16.")
    return precision


def _weights(m: ModelArch, p: Precision) -> MemoryLine:
    """Quantisation shrinks only the blocks' linear layers; the rest stays 16-bit."""
    bits = _BITS[p]
    if p in (Precision.INT8, Precision.INT4):
        rest = m.embedding_params + m.other_params
        size = math.ceil(m.linear_params * bits / 8) + rest * 2
        formula = (
            f"{m.linear_params:,} linear params × {float(bits):g} bits ÷ 8 + {rest:,} embedding "
            "and norm params × 2 bytes"
        )
        return _line("weights", f"weights ({p.value})", size, formula)
    size = m.params * int(bits) // 8
    return _line(
        "weights", f"weights ({p.value})", size, f"{m.params:,} params × {bits // 8} bytes"
    )


def _activations(req: EstimateRequest, e: int) -> MemoryLine:
    """Inference: one prefill chunk through one layer. Training: what autograd saves per layer
    (see ASSUMPTIONS), or only layer inputs plus one recomputed layer with checkpointing."""
    m, b = req.model, req.batch
    if req.task is Task.INFERENCE:
        t = min(b * req.context_tokens, PREFILL_CHUNK_TOKENS)
        size = t * (2 * m.hidden + 2 * m.intermediate) * e + b * m.vocab * 4
        formula = (
            f"{t:,} tokens × (2 × {m.hidden:,} + 2 × {m.intermediate:,}) × {e} bytes + {b} × "
            f"{m.vocab:,} vocab × 4 bytes (logits)"
        )
        return _line("activations", "activations", size, formula)
    t, q, kv, i = b * req.context_tokens, m.heads * m.dim, m.kv_heads * m.dim, m.intermediate
    mlp = 4 if m.gated_mlp else 2
    per_layer = 4 * m.hidden + 2 * q + 2 * kv + mlp * i
    shape = f"(4 × {m.hidden:,} + 2 × {q:,} + 2 × {kv:,} + {mlp} × {i:,})"
    if req.gradient_checkpointing:
        size = m.layers * t * m.hidden * e + t * per_layer * e
        formula = (
            f"{m.layers} layers × {t:,} tokens × {m.hidden:,} × {e} bytes (checkpoints) + 1 layer "
            f"recomputed: {t:,} tokens × {shape} × {e} bytes"
        )
    else:
        size = m.layers * t * per_layer * e
        formula = f"{m.layers} layers × {t:,} tokens × {shape} × {e} bytes"
    size += t * m.vocab * (e + 4)
    formula += f" + {t:,} tokens × {m.vocab:,} vocab × ({e} + 4) bytes (logits)"
    return _line("activations", "activations", size, formula)


def _training_state(req: EstimateRequest) -> tuple[int, list[MemoryLine]]:
    """Trainable parameters, gradients and Adam states: LoRA adapters or the whole model."""
    m = req.model
    if req.task.uses_lora:
        shapes = {k: v for k, v in m.shapes().items() if k in _TARGETS[req.lora_targets]}
        span = sum(a + b for a, b in shapes.values())
        n, ab = m.layers * req.lora_rank * span, int(_BITS[req.adapter_precision]) // 8
        label = f"trainable parameters (LoRA r={req.lora_rank}, {req.adapter_precision.value})"
        formula = (
            f"{m.layers} layers × r {req.lora_rank} × {span:,} (in + out of {', '.join(shapes)}) "
            f"= {n:,} params × {ab} bytes"
        )
        return n, [
            _line("trainable", label, n * ab, formula),
            _line("gradients", "gradients", n * ab, f"{n:,} params × {ab} bytes"),
            _line(
                "optimizer", "optimizer states (Adam)", n * 8, f"{n:,} params × (4 + 4) bytes m, v"
            ),
        ]
    n = m.params
    if req.task is Task.FULL_MIXED:
        state, what = 12, "(4 + 4 + 4) bytes fp32 master, m, v"
    else:
        state, what = 4, "(2 + 2) bytes bf16 m, v"
    return n, [
        MemoryLine("trainable", "trainable parameters", 0, f"all {n:,} params: the weights line"),
        _line("gradients", "gradients", n * 2, f"{n:,} params × 2 bytes"),
        _line("optimizer", "optimizer states (Adam)", n * state, f"{n:,} params × {what}"),
    ]


def estimate_memory(req: EstimateRequest) -> MemoryEstimate:
    """The VRAM breakdown: weights, KV cache or training state, activations and overhead."""
    precision, m = _resolve(req), req.model
    e = 4 if precision is Precision.FP32 else 2
    lines = [_weights(m, precision)]
    if req.task is Task.INFERENCE:
        size = 2 * m.layers * m.kv_heads * m.dim * req.context_tokens * req.batch * e
        formula = (
            f"2 × {m.layers} layers × {m.kv_heads} KV heads × {m.dim} head dim × "
            f"{req.context_tokens:,} tokens × {req.batch} seq × {e} bytes"
        )
        lines.append(_line("kv_cache", "KV cache", size, formula))
    lines.append(_activations(req, e))
    trainable = 0
    if req.task is not Task.INFERENCE:
        trainable, state = _training_state(req)
        lines += state
    subtotal = sum(line.bytes for line in lines)
    size = CUDA_CONTEXT_BYTES + math.ceil(subtotal * FRAGMENTATION)
    formula = f"{_gib(CUDA_CONTEXT_BYTES)} CUDA context + 5% × {_gib(subtotal)}"
    lines.append(_line("overhead", "runtime overhead", size, formula))
    return MemoryEstimate(req, precision, m.params, trainable, tuple(lines))


@dataclass(frozen=True)
class Throughput:
    """Speed on one card: decode and prefill for inference, tokens/s for training."""

    gpu: GpuSpec
    tflops_label: str
    decode_tokens_per_s: float | None  # per sequence, memory-bandwidth upper bound
    decode_formula: str
    prefill_tokens: int
    prefill_seconds: float | None
    prefill_formula: str
    train_tokens_per_s: float | None
    train_formula: str


def estimate_throughput(
    mem: MemoryEstimate, gpu: GpuSpec, prompt_tokens: int | None = None
) -> Throughput:
    """Decode bound from bandwidth and prefill time from TFLOPS (inference), or training tokens/s.

    Quantised weights are dequantised to bf16 for the matrix maths, so int8/int4 use BF16 TFLOPS.
    """
    req, n = mem.request, mem.params
    dtype = {Precision.FP32: "fp32", Precision.FP16: "fp16"}.get(mem.precision, "bf16")
    tflops, label = gpu.matmul_tflops(dtype)
    if req.task is not Task.INFERENCE:
        k = (4 if req.task.uses_lora else 6) + (2 if req.gradient_checkpointing else 0)
        rate = tflops * 1e12 * TRAIN_MFU / (k * n)
        formula = (
            f"{tflops:g} TFLOPS × {TRAIN_MFU:.0%} ÷ ({k} × {n:,} FLOPs per token) = "
            f"{rate:,.0f} tokens/s"
        )
        return Throughput(gpu, label, None, "", 0, None, "", rate, formula)
    weights, kv = mem.line("weights").bytes, mem.line("kv_cache").bytes
    rate = gpu.bandwidth_gb_s * GB / (weights + kv)
    decode = (
        f"{gpu.bandwidth_gb_s:,g} GB/s ÷ ({weights / GB:,.2f} GB weights + {kv / GB:,.2f} GB KV "
        f"cache read per step) = {rate:,.1f} tokens/s per sequence"
    )
    if req.batch > 1:
        decode += f", {rate * req.batch:,.0f} tokens/s for {req.batch} sequences"
    prompt = req.context_tokens if prompt_tokens is None else prompt_tokens
    seconds = 2 * n * prompt * req.batch / (tflops * 1e12 * PREFILL_MFU)
    prefill = (
        f"2 × {n:,} params × {prompt:,} tokens × {req.batch} seq ÷ ({tflops:g} TFLOPS × "
        f"{PREFILL_MFU:.0%}) = {seconds:,.2f} s"
    )
    return Throughput(gpu, label, rate, decode, prompt, seconds, prefill, None, "")


@dataclass(frozen=True)
class Verdict:
    """A plain sentence for the user and whether it is good news."""

    ok: bool
    text: str


def _seconds(value: float) -> str:
    return f"{value:,.0f} s" if value >= 10 else f"{value:.1f} s"


def fit_verdict(mem: MemoryEstimate, gpu: GpuSpec) -> Verdict:
    """Does the job fit the card, and if not, what to change first."""
    need, have = mem.total_gib, gpu.vram_gb
    head = f"Needs {need:,.1f} GiB; the {gpu.name} has {have} GB"
    if mem.fits(gpu):
        return Verdict(True, f"{head}: fits with {have - need:,.1f} GiB to spare.")
    req, tips = mem.request, []
    if req.task is Task.INFERENCE:
        tips += [] if mem.precision is Precision.INT4 else ["int4 weights"]
        tips.append("a shorter context or fewer users")
    else:
        tips += [] if req.gradient_checkpointing else ["gradient checkpointing"]
        if not req.task.uses_lora:
            tips.append("LoRA or QLoRA")
        elif req.task is not Task.QLORA_4BIT:
            tips.append("QLoRA 4-bit")
        tips.append("a smaller batch or context")
    return Verdict(
        False,
        f"{head}: does not fit ({need - have:,.1f} GiB short). Try {', '.join(tips)}, or a card "
        "with more memory.",
    )


def latency_verdict(
    output_tokens: int,
    tokens_per_s: float,
    target_seconds: float,
    prefill_seconds: float = 0.0,
    prompt_tokens: int = 0,
) -> Verdict:
    """Time for one answer against the user's target, e.g. 3,000 tokens at 50 tokens/s = 60 s."""
    decode = output_tokens / tokens_per_s
    rate = f"{tokens_per_s:,.0f}" if tokens_per_s >= 100 else f"{tokens_per_s:.1f}".rstrip("0")
    text = f"A {output_tokens:,}-token answer at {rate.rstrip('.')} tokens/s takes "
    text += _seconds(decode)
    if prefill_seconds > 0:
        text += f", plus {_seconds(prefill_seconds)} to read the {prompt_tokens:,}-token prompt"
    ok = decode + prefill_seconds <= target_seconds
    return Verdict(ok, f"{text} — {'within' if ok else 'over'} your {target_seconds:g} s target.")


@dataclass(frozen=True)
class Estimate:
    """Everything the wizard shows for one request and (optionally) one card."""

    memory: MemoryEstimate
    throughput: Throughput | None
    verdicts: tuple[Verdict, ...]


def estimate(
    req: EstimateRequest,
    gpu: GpuSpec | None = None,
    *,
    output_tokens: int | None = None,
    target_seconds: float | None = None,
) -> Estimate:
    """Memory, speed and verdicts; a time target needs an inference task, a card and an answer
    length (the prompt is the context minus the answer)."""
    mem = estimate_memory(req)
    if target_seconds is not None:
        if req.task is not Task.INFERENCE:
            raise ValidationError("target_seconds", "A time target applies to inference only.")
        if gpu is None or output_tokens is None:
            raise ValidationError(
                "target_seconds", "A time target needs a GPU and an answer length (output tokens)."
            )
        if not target_seconds > 0:
            raise ValidationError("target_seconds", "The time target must be above 0 seconds.")
    if output_tokens is not None and not 1 <= output_tokens < req.context_tokens:
        raise ValidationError(
            "output_tokens",
            f"The answer length must be between 1 and the context length minus one "
            f"({req.context_tokens - 1:,}), not {output_tokens:,}.",
        )
    if gpu is None:
        return Estimate(mem, None, ())
    prompt = None if output_tokens is None else req.context_tokens - output_tokens
    tp = estimate_throughput(mem, gpu, prompt)
    verdicts = [fit_verdict(mem, gpu)]
    if target_seconds is not None and output_tokens is not None and tp.decode_tokens_per_s:
        verdicts.append(
            latency_verdict(
                output_tokens,
                tp.decode_tokens_per_s,
                target_seconds,
                tp.prefill_seconds or 0.0,
                tp.prefill_tokens,
            )
        )
    return Estimate(mem, tp, tuple(verdicts))


def job_hours(mem: MemoryEstimate, gpu: GpuSpec, tokens: int) -> float | None:
    """Hours to train on or generate `tokens` on this card (None if the job does not fit), for
    `GpuCatalogue.rank_by_job_cost`. Generation uses the decode bound for the whole batch."""
    if not mem.fits(gpu):
        return None
    tp = estimate_throughput(mem, gpu)
    rate = tp.train_tokens_per_s or (tp.decode_tokens_per_s or 0.0) * mem.request.batch
    return tokens / rate / 3600
