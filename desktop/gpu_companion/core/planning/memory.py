"""The VRAM a job needs, per GPU and line by line: weights in their stored format, KV cache or
training state, activations and overhead, each with its formula filled in.

Dense and mixture-of-experts models, LoRA/QLoRA or full fine-tuning, one GPU or a ZeRO/FSDP/tensor
parallel split; `estimate` adds speed and verdicts on top.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.planning import parallel
from gpu_companion.core.planning.catalogue import GpuSpec
from gpu_companion.core.planning.model_shapes import ModelArch
from gpu_companion.core.planning.parallel import Strategy
from gpu_companion.core.planning.weight_formats import (
    DEFAULT_GROUP,
    Precision,
    bits_per_weight,
)

GIB = 1 << 30
GB = 10**9
CUDA_CONTEXT_BYTES = 512 << 20  # CUDA context + cuBLAS workspaces of one PyTorch process
FRAGMENTATION = Fraction(5, 100)  # caching-allocator slack on top of what tensors need
SERVE_CONTEXT = 4096  # default context for inference
TRAIN_CONTEXT = 1024  # LLaMA-Factory's cutoff_len default, the setting of its VRAM table
PREFILL_CHUNK_TOKENS = 2048  # tokens per forward pass with chunked prefill (vLLM, llama.cpp -b)


class Task(str, Enum):
    """What the rented card will do; it decides which memory lines exist."""

    INFERENCE = "inference"
    LORA = "lora"
    QLORA_8BIT = "qlora-8bit"
    QLORA_4BIT = "qlora-4bit"
    QLORA_2BIT = "qlora-2bit"
    FULL_MIXED = "full-mixed"
    FULL_BF16 = "full-bf16"

    @property
    def uses_lora(self) -> bool:
        """True for the adapter methods, whose base weights stay frozen."""
        return self in (Task.LORA, Task.QLORA_8BIT, Task.QLORA_4BIT, Task.QLORA_2BIT)


class LoraTargets(str, Enum):
    """Which linear layers get adapters: the LoRA paper's q,v; all attention; or all linear."""

    QV = "qv"
    ATTENTION = "attention"
    ALL_LINEAR = "all-linear"


_16BIT = (Precision.BF16, Precision.FP16, Precision.FP32)
# The first precision of each task is its default.
_PRECISIONS = {
    Task.INFERENCE: tuple(Precision),
    Task.LORA: _16BIT,
    Task.QLORA_8BIT: (Precision.INT8,),
    Task.QLORA_4BIT: (Precision.INT4, Precision.NF4),
    Task.QLORA_2BIT: (Precision.INT2, Precision.INT3),
    Task.FULL_MIXED: (Precision.BF16, Precision.FP16),
    Task.FULL_BF16: (Precision.BF16,),
}
_ATTENTION = frozenset({"q", "k", "v", "o", "q_a", "q_b", "kv_a", "kv_b"})
_TARGETS = {
    LoraTargets.QV: frozenset({"q", "v", "q_b", "kv_b"}),
    LoraTargets.ATTENTION: _ATTENTION,
    LoraTargets.ALL_LINEAR: _ATTENTION | {"gate", "up", "down"},
}


@dataclass(frozen=True)
class EstimateRequest:
    """The wizard's inputs. `precision` None means the task's usual one; `batch` is sequences
    trained together (per GPU) or users served at once; `gradient_checkpointing` None means the
    tools' default (on for training); `context_tokens` None means 4,096 to serve, 1,024 to train.
    Serving a model that ships quantised (gpt-oss in MXFP4, DeepSeek-V3 in FP8) defaults to that."""

    model: ModelArch
    task: Task = Task.INFERENCE
    precision: Precision | None = None
    context_tokens: int | None = None
    batch: int = 1
    lora_rank: int = 16
    lora_targets: LoraTargets = LoraTargets.ALL_LINEAR
    gradient_checkpointing: bool | None = None
    adapter_precision: Precision = Precision.FP32
    group_size: int = DEFAULT_GROUP
    gpus: int = 1
    strategy: Strategy | None = None

    @property
    def context(self) -> int:
        """Tokens per sequence: the request's, else the task's usual length."""
        if self.context_tokens is not None:
            return self.context_tokens
        return SERVE_CONTEXT if self.task is Task.INFERENCE else TRAIN_CONTEXT

    @property
    def checkpointing(self) -> bool:
        """Whether activations are checkpointed: the request's choice, else on for training."""
        if self.task is Task.INFERENCE:
            return False
        return True if self.gradient_checkpointing is None else self.gradient_checkpointing

    @property
    def split(self) -> Strategy:
        """How the GPUs share the job: the request's strategy, else tensor parallel for serving
        and DDP for training."""
        if self.strategy is not None:
            return self.strategy
        return Strategy.TP if self.task is Task.INFERENCE else Strategy.DDP


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
    """The VRAM breakdown for one request, per GPU; `precision` is the one actually used."""

    request: EstimateRequest
    precision: Precision
    params: int
    trainable_params: int
    lines: tuple[MemoryLine, ...]
    active_params: int = 0  # 0: all of `params`

    @property
    def total_bytes(self) -> int:
        """Sum of all lines: what one GPU needs."""
        return sum(line.bytes for line in self.lines)

    @property
    def total_gib(self) -> float:
        """Sum of all lines in GiB."""
        return self.total_bytes / GIB

    @property
    def flop_params(self) -> int:
        """Parameters a token runs through: the active ones for MoE."""
        return self.active_params or self.params

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
    shipped = req.model.shipped_as if req.task is Task.INFERENCE else ""
    precision = req.precision or (Precision(shipped) if shipped else allowed[0])
    if precision not in allowed:
        names = ", ".join(p.value for p in allowed)
        raise ValidationError(
            "precision", f"{req.task.value} keeps base weights in {names}, not {precision.value}."
        )
    checks = (
        ("context_tokens", req.context, 1 << 20, "The context length"),
        ("batch", req.batch, 4096, "The batch or number of users"),
        ("lora_rank", req.lora_rank, 4096, "The LoRA rank"),
    )
    for field, value, high, what in checks:
        if not 1 <= value <= high:
            raise ValidationError(field, f"{what} must be between 1 and {high:,}, not {value}.")
    if req.adapter_precision not in _16BIT:
        raise ValidationError("adapter_precision", "LoRA adapters train in fp32, bf16 or fp16.")
    bits_per_weight(precision, req.group_size)  # validates the group size
    parallel.check(req.gpus, req.split, req.task is not Task.INFERENCE, req.model.kv_heads)
    return precision


def _weights(m: ModelArch, p: Precision, group: int) -> MemoryLine:
    """Quantisation shrinks only the blocks' linear layers (MXFP4: only the experts)."""
    label = f"weights ({p.value})"
    if not p.quantised:
        size = m.params * int(bits_per_weight(p)[0]) // 8
        bytes_each = int(bits_per_weight(p)[0]) // 8
        return _line("weights", label, size, f"{m.params:,} params × {bytes_each} bytes")
    bits, how = bits_per_weight(p, group)
    packed = m.all_expert_params if p is Precision.MXFP4 and m.is_moe else m.linear_params
    what = "expert" if packed != m.linear_params else "linear"
    rest = m.params - packed
    size = math.ceil(packed * bits / 8) + rest * 2
    formula = (
        f"{packed:,} {what} params × {float(bits):g} bits ({how}) ÷ 8 + {rest:,} embedding, "
        "norm and router params × 2 bytes"
    )
    return _line("weights", label, size, formula)


def tensor_parallel(req: EstimateRequest) -> int:
    """Tensor-parallel ranks one matrix is split over (1 unless the strategy is tp)."""
    return req.gpus if req.split is Strategy.TP else 1


def _activations(req: EstimateRequest, e: int) -> MemoryLine:
    """Inference: one prefill chunk through one layer. Training: what autograd saves per layer
    (see ASSUMPTIONS), or only layer inputs plus one recomputed layer with checkpointing."""
    m, b, tp = req.model, req.batch, tensor_parallel(req)
    i = m.active_intermediate
    if req.task is Task.INFERENCE:
        t = min(b * req.context, PREFILL_CHUNK_TOKENS)
        size = t * (2 * m.hidden + 2 * i // tp) * e + b * m.vocab * 4
        split = f" ÷ {tp} GPUs" if tp > 1 else ""
        formula = (
            f"{t:,} tokens × (2 × {m.hidden:,} + 2 × {i:,}{split}) × {e} bytes + {b} × "
            f"{m.vocab:,} vocab × 4 bytes (logits)"
        )
        return _line("activations", "activations", size, formula)
    t = b * req.context
    q, k, v = m.attention_widths
    mlp = 4 if m.gated_mlp else 2
    per_layer = 4 * m.hidden + (2 * q + k + v + mlp * i) // tp
    split = f" ÷ {tp} GPUs" if tp > 1 else ""
    shape = f"(4 × {m.hidden:,} + (2 × {q:,} + {k:,} + {v:,} + {mlp} × {i:,}){split})"
    if req.checkpointing:
        size = m.layers * t * m.hidden * e + t * per_layer * e
        formula = (
            f"{m.layers} layers × {t:,} tokens × {m.hidden:,} × {e} bytes (checkpoints) + 1 layer "
            f"recomputed: {t:,} tokens × {shape} × {e} bytes"
        )
    else:
        size = m.layers * t * per_layer * e
        formula = f"{m.layers} layers × {t:,} tokens × {shape} × {e} bytes"
    size += t * m.vocab * (e + 4) // tp
    formula += f" + {t:,} tokens × {m.vocab:,} vocab × ({e} + 4) bytes{split} (logits)"
    return _line("activations", "activations", size, formula)


def _lora_params(req: EstimateRequest) -> tuple[int, str]:
    """Adapter parameters over the targeted matrices; every expert counts in an MoE layer."""
    m, r, targets = req.model, req.lora_rank, _TARGETS[req.lora_targets]
    attention = {k: s for k, s in m.attention_shapes().items() if k in targets}
    span = m.layers * sum(a + b for a, b in attention.values())
    names = list(attention)
    if "down" in targets:
        dense = sum(a + b for a, b in m.mlp_shapes(m.intermediate).values())
        span += (m.layers - m.moe_layers) * dense
        names += list(m.mlp_shapes(1))
        if m.is_moe:
            per_expert = sum(a + b for a, b in m.mlp_shapes(m.expert_width).values())
            shared = m.shared_intermediate
            extra = sum(a + b for a, b in m.mlp_shapes(shared).values()) if shared else 0
            span += m.moe_layers * (m.experts * per_expert + extra)
            names.append(f"{m.experts} experts")
    return r * span, f"r {r} × {span:,} (in + out of {', '.join(names)} over {m.layers} layers)"


def _training_state(req: EstimateRequest) -> tuple[int, list[MemoryLine]]:
    """Trainable parameters, gradients and Adam states: LoRA adapters or the whole model."""
    m = req.model
    if req.task.uses_lora:
        n, how = _lora_params(req)
        ab = int(bits_per_weight(req.adapter_precision)[0]) // 8
        label = f"trainable parameters (LoRA r={req.lora_rank}, {req.adapter_precision.value})"
        return n, [
            _line("trainable", label, n * ab, f"{how} = {n:,} params × {ab} bytes"),
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


def _kv_cache(req: EstimateRequest, e: int) -> MemoryLine:
    m = req.model
    heads = m.kv_heads
    if req.split is Strategy.TP and req.gpus > 1 and not m.is_mla:
        heads = max(1, m.kv_heads // req.gpus)
    if m.is_mla:
        values = m.kv_values_per_token
        size = m.layers * values * req.context * req.batch * e
        formula = (
            f"{m.layers} layers × ({m.kv_lora_rank} latent + {m.rope_dim} RoPE key) × "
            f"{req.context:,} tokens × {req.batch} seq × {e} bytes"
        )
        return _line("kv_cache", "KV cache (MLA latent)", size, formula)
    per_gpu = f" (of {m.kv_heads}, per GPU)" if heads != m.kv_heads else ""
    per_token = f"{heads} KV heads{per_gpu} × {m.dim} head dim"
    full, window = m.layers - m.sliding_layers, min(req.context, m.sliding_window)
    size = 2 * full * heads * m.dim * req.context * req.batch * e
    formula = (
        f"2 × {full} layers × {per_token} × {req.context:,} tokens × {req.batch} seq × {e} bytes"
    )
    if m.sliding_layers:
        size += 2 * m.sliding_layers * heads * m.dim * window * req.batch * e
        formula += (
            f" + 2 × {m.sliding_layers} sliding-window layers × {per_token} × {window:,} tokens "
            f"× {req.batch} seq × {e} bytes"
        )
    return _line("kv_cache", "KV cache", size, formula)


def _shard(req: EstimateRequest, lines: list[MemoryLine]) -> list[MemoryLine]:
    """Divide the lines the strategy splits; ZeRO-3/FSDP add the gathered-layer buffer."""
    n, split = req.gpus, req.split
    if n == 1:
        return lines
    name = parallel.strategy_name(split)
    out = []
    for line in lines:
        if line.bytes and parallel.splits(split, line.key) and line.key != "kv_cache":
            size = -(-line.bytes // n)
            formula = f"{line.formula.rsplit(' = ', 1)[0]} ÷ {n} GPUs ({name})"
            line = _line(line.key, line.label, size, formula)
        out.append(line)
    if split in (Strategy.ZERO3, Strategy.FSDP):
        m = req.model
        layer = m.largest_layer_params
        out.append(
            _line(
                "gathered",
                "gathered layers (ZeRO-3/FSDP)",
                2 * layer * 2,
                f"2 layers (current + prefetched) × {layer:,} params × 2 bytes",
            )
        )
    return out


def estimate_memory(req: EstimateRequest) -> MemoryEstimate:
    """The VRAM breakdown per GPU: weights, KV cache or training state, activations, overhead."""
    precision, m = _resolve(req), req.model
    e = 4 if precision is Precision.FP32 else 2
    lines = [_weights(m, precision, req.group_size)]
    if req.task is Task.INFERENCE:
        lines.append(_kv_cache(req, e))
    lines.append(_activations(req, e))
    trainable = 0
    if req.task is not Task.INFERENCE:
        trainable, state = _training_state(req)
        lines += state
    lines = _shard(req, lines)
    subtotal = sum(line.bytes for line in lines)
    size = CUDA_CONTEXT_BYTES + math.ceil(subtotal * FRAGMENTATION)
    formula = f"{_gib(CUDA_CONTEXT_BYTES)} CUDA context + 5% × {_gib(subtotal)}"
    lines.append(_line("overhead", "runtime overhead", size, formula))
    active = m.active_params if m.is_moe else 0
    return MemoryEstimate(req, precision, m.params, trainable, tuple(lines), active)
