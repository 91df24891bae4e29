"""The VRAM a job needs, per GPU and line by line: weights in their stored format, KV cache or
training state, activations, CUDA context and allocator reserve, each with its formula filled in.

Dense and mixture-of-experts models, LoRA/QLoRA or full fine-tuning, one GPU or a ZeRO/FSDP/tensor
parallel split; `estimate` adds speed and verdicts on top.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import N_, _
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
VLLM_BATCHED_TOKENS = 8192  # vLLM's max_num_batched_tokens with chunked prefill (API server)
LLAMA_CPP_UBATCH = 512  # llama.cpp's n_ubatch: tokens per forward pass


class Engine(str, Enum):
    """The inference engine modelled: it decides how a prompt is prefilled and where the KV
    cache lives."""

    TRANSFORMERS = "transformers"  # generate(): the whole prompt in one forward pass
    VLLM = "vllm"  # a pre-allocated KV pool; prefill in chunks of max_num_batched_tokens
    LLAMA_CPP = "llama.cpp"  # GGUF; KV cache of n_ctx tokens in f16/q8_0/q4_0; n_ubatch chunks


ENGINE_NOTES = {
    Engine.TRANSFORMERS: N_(
        "transformers generate(): the whole prompt is prefilled in one forward "
        "pass, the KV cache grows with the tokens (DynamicCache), logits only for the last token"
    ),
    Engine.VLLM: N_(
        "vLLM: gpu_memory_utilization × VRAM less the weights, the activation peak of "
        "one chunk of max_num_batched_tokens and the CUDA context is pre-allocated as KV cache"
    ),
    Engine.LLAMA_CPP: N_(
        "llama.cpp (GGUF): a KV cache of n_ctx tokens in the --cache-type-k/v type, "
        "the prompt in n_ubatch chunks, f32 compute buffers"
    ),
}


class Attention(str, Enum):
    """The attention kernel: eager materialises the heads × tokens × tokens score matrix."""

    SDPA = "sdpa"
    FLASH = "flash"
    EAGER = "eager"


# Bytes per cached value for llama.cpp's --cache-type-k/v (ggml-common.h block structs).
KV_CACHE_TYPES: dict[str, tuple[Fraction, str]] = {
    "f16": (Fraction(2), "2 bytes (f16)"),
    "q8_0": (Fraction(34, 32), "34 bytes per 32 values (q8_0)"),
    "q4_0": (Fraction(18, 32), "18 bytes per 32 values (q4_0)"),
}


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
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    engine: Engine = Engine.TRANSFORMERS
    attention: Attention = Attention.SDPA
    kv_cache_type: str = "f16"
    batched_tokens: int | None = None  # vLLM max_num_batched_tokens, llama.cpp n_ubatch
    prompt_logits: bool = False  # transformers < 4.45: logits of every prompt token, in fp32

    @property
    def context(self) -> int:
        """Tokens per sequence (prompt plus generated): `context_tokens`, else prompt + output
        tokens when either is given, else the task's usual length."""
        if self.context_tokens is not None:
            return self.context_tokens
        if self.prompt_tokens is not None or self.output_tokens is not None:
            return (self.prompt_tokens or 0) + (self.output_tokens or 0)
        return SERVE_CONTEXT if self.task is Task.INFERENCE else TRAIN_CONTEXT

    @property
    def prompt(self) -> int:
        """Tokens prefilled at once per sequence: the prompt, else the context less the output
        (the whole context when only `context_tokens` is given: the worst case)."""
        if self.prompt_tokens is not None:
            return self.prompt_tokens
        return max(self.context - (self.output_tokens or 0), 1)

    @property
    def prefill_tokens(self) -> int:
        """Tokens in the largest forward pass: the whole batch of prompts for transformers, one
        chunk of max_num_batched_tokens for vLLM, one n_ubatch for llama.cpp."""
        whole = self.batch * self.prompt
        if self.engine is Engine.TRANSFORMERS:
            return whole
        chunk = self.batched_tokens or (
            VLLM_BATCHED_TOKENS if self.engine is Engine.VLLM else LLAMA_CPP_UBATCH
        )
        return min(whole, chunk)

    @property
    def checkpointing(self) -> bool:
        """Whether activations are checkpointed: the request's choice, else on for training."""
        if self.task is Task.INFERENCE:
            return False
        return True if self.gradient_checkpointing is None else self.gradient_checkpointing

    @property
    def split(self) -> Strategy:
        """How the GPUs share the job: the request's strategy; else DDP for training; for
        serving, tensor parallel on vLLM when the heads divide over the GPUs, otherwise a layer
        split (transformers' device_map="auto", llama.cpp's default, vLLM's pipeline parallel)."""
        if self.strategy is not None:
            return self.strategy
        if self.task is not Task.INFERENCE:
            return Strategy.DDP
        if self.engine is Engine.VLLM and parallel.tp_divides(
            self.gpus, self.model.heads, self.model.kv_heads
        ):
            return Strategy.TP
        return Strategy.LAYERS if self.gpus > 1 else Strategy.TP


@dataclass(frozen=True)
class MemoryLine:
    """One line of the VRAM breakdown with its arithmetic as text."""

    key: str
    label: str
    bytes: int
    formula: str
    all_gpus: int = -1  # bytes over all GPUs together; -1: `bytes` × the GPU count

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

    def line_total(self, line: MemoryLine) -> int:
        """One line's bytes over all the GPUs together."""
        return line.bytes * self.request.gpus if line.all_gpus < 0 else line.all_gpus

    @property
    def all_gpus_bytes(self) -> int:
        """What all the GPUs together hold."""
        return sum(self.line_total(line) for line in self.lines)

    @property
    def allocated_bytes(self) -> int:
        """What PyTorch's allocator hands out over all GPUs (torch.cuda.max_memory_allocated
        summed): every line but the CUDA context and the allocator's reserve."""
        outside = ("cuda_context", "allocator_reserve")
        return sum(self.line_total(line) for line in self.lines if line.key not in outside)

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


def _line(key: str, label: str, size: int, formula: str, all_gpus: int = -1) -> MemoryLine:
    return MemoryLine(key, label, size, f"{formula} = {_gib(size)}", all_gpus)


def _resolve(req: EstimateRequest) -> Precision:
    allowed = _PRECISIONS[req.task]
    shipped = req.model.shipped_as if req.task is Task.INFERENCE else ""
    precision = req.precision or (Precision(shipped) if shipped else allowed[0])
    if precision not in allowed:
        names = ", ".join(p.value for p in allowed)
        raise ValidationError(
            "precision",
            _("{task} keeps base weights in {names}, not {precision}.").format(
                task=req.task.value, names=names, precision=precision.value
            ),
        )
    if req.context_tokens is not None and (
        req.prompt_tokens is not None
        and req.context_tokens != req.prompt + (req.output_tokens or 0)
    ):
        raise ValidationError(
            "context_tokens",
            _("The context ({context}) is the prompt plus the output ({prompt} + {output}); give "
              "one or the other.").format(
                context=f"{req.context_tokens:,}", prompt=f"{req.prompt:,}",
                output=f"{req.output_tokens or 0:,}"),
        )  # fmt: skip
    if req.kv_cache_type not in KV_CACHE_TYPES:
        raise ValidationError(
            "kv_cache_type",
            _("KV cache types: {types}, not {given}.").format(
                types=", ".join(KV_CACHE_TYPES), given=req.kv_cache_type
            ),
        )
    if req.kv_cache_type != "f16" and req.engine is not Engine.LLAMA_CPP:
        raise ValidationError(
            "kv_cache_type", _("A quantised KV cache type (q8_0, q4_0) is llama.cpp's option.")
        )
    checks = (
        ("context_tokens", req.context, 1 << 20, _("The context length")),
        ("prompt_tokens", req.prompt, 1 << 20, _("The prompt length")),
        ("output_tokens", req.output_tokens or 1, 1 << 20, _("The output length")),
        ("batched_tokens", req.batched_tokens or 1, 1 << 20, _("The batched tokens")),
        ("batch", req.batch, 4096, _("The batch or number of users")),
        ("lora_rank", req.lora_rank, 4096, _("The LoRA rank")),
    )
    for field, value, high, what in checks:
        if not 1 <= value <= high:
            raise ValidationError(
                field,
                _("{what} must be between 1 and {high}, not {value}.").format(
                    what=what, high=f"{high:,}", value=value
                ),
            )
    if req.adapter_precision not in _16BIT:
        raise ValidationError("adapter_precision", _("LoRA adapters train in fp32, bf16 or fp16."))
    bits_per_weight(precision, req.group_size)  # validates the group size
    parallel.check(
        req.gpus, req.split, req.task is not Task.INFERENCE, req.model.heads, req.model.kv_heads
    )
    return precision


def _weights(m: ModelArch, p: Precision, group: int) -> MemoryLine:
    """Quantisation shrinks only the blocks' linear layers (MXFP4: only the experts)."""
    label = _("weights ({precision})").format(precision=p.value)
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
        f"{packed:,} {what} params × {float(bits):.4g} bits ({how}) ÷ 8 + {rest:,} embedding, "
        "lm_head, norm and router params × 2 bytes"
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
        return _prefill_peak(req, e)
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
    return _line("activations", _("activations"), size, formula)


def _prefill_peak(req: EstimateRequest, e: int) -> MemoryLine:
    """The largest forward pass of inference through one layer: the MLP's gate, up and their
    product (3 × intermediate per token) plus three hidden-size buffers (residual, normed input,
    output); eager attention (and llama.cpp without flash attention) also holds the score matrix;
    fp32 logits of the last token of each sequence."""
    m, b, tp = req.model, req.batch, tensor_parallel(req)
    t, i = req.prefill_tokens, m.active_intermediate
    split = f" ÷ {tp} GPUs" if tp > 1 else ""
    ea = 4 if req.engine is Engine.LLAMA_CPP else e  # ggml computes in f32
    size = t * (3 * i // tp + 3 * m.hidden) * ea
    how = {
        Engine.TRANSFORMERS: f"{b} × {req.prompt:,}-token prompt in one pass",
        Engine.VLLM: f"one chunk of {t:,} batched tokens",
        Engine.LLAMA_CPP: f"one n_ubatch of {t:,} tokens",
    }[req.engine]
    formula = f"{t:,} tokens ({how}) × (3 × {i:,}{split} + 3 × {m.hidden:,}) × {ea} bytes"
    scores = req.attention is Attention.EAGER or (
        req.engine is Engine.LLAMA_CPP and req.attention is not Attention.FLASH
    )
    if scores:
        heads = max(m.heads // tp, 1)
        if req.engine is Engine.LLAMA_CPP:
            rows, cols, each, what = t, req.context, 4, "f32 KQ"
        else:
            rows, cols, each, what = req.prefill_tokens, req.prompt, e + 4, f"{e} + 4 bytes"
        size += heads * rows * cols * each
        formula += f" + {heads} heads × {rows:,} × {cols:,} scores × {each} bytes ({what})"
    if req.prompt_logits and req.engine is Engine.TRANSFORMERS:
        logits = t * m.vocab * (e + 4)
        formula += f" + {t:,} tokens × {m.vocab:,} vocab × ({e} + 4) bytes (prompt logits, fp32)"
    else:
        logits = b * m.vocab * 4
        formula += f" + {b} × {m.vocab:,} vocab × 4 bytes (last-token logits)"
    total = -1
    if req.split is Strategy.LAYERS and req.gpus > 1:
        total = req.gpus * size + logits  # every GPU runs its layers; the last one the logits
        formula += f"; each of {req.gpus} GPUs, logits on the last"
    return _line("activations", _("prefill activation peak"), size + logits, formula, total)


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
        label = _("trainable parameters (LoRA r={rank}, {precision})").format(
            rank=req.lora_rank, precision=req.adapter_precision.value
        )
        return n, [
            _line("trainable", label, n * ab, f"{how} = {n:,} params × {ab} bytes"),
            _line("gradients", _("gradients"), n * ab, f"{n:,} params × {ab} bytes"),
            _line(
                "optimizer", _("optimizer states (Adam)"), n * 8,
                f"{n:,} params × (4 + 4) bytes m, v",
            ),
        ]  # fmt: skip
    n = m.params
    if req.task is Task.FULL_MIXED:
        state, what = 12, "(4 + 4 + 4) bytes fp32 master, m, v"
    else:
        state, what = 4, "(2 + 2) bytes bf16 m, v"
    return n, [
        MemoryLine(
            "trainable", _("trainable parameters"), 0, f"all {n:,} params: the weights line"
        ),
        _line("gradients", _("gradients"), n * 2, f"{n:,} params × 2 bytes"),
        _line("optimizer", _("optimizer states (Adam)"), n * state, f"{n:,} params × {what}"),
    ]


def _kv_cache(req: EstimateRequest, e: int) -> MemoryLine:
    m = req.model
    heads = m.kv_heads
    if req.split is Strategy.TP and req.gpus > 1 and not m.is_mla:
        heads = max(1, m.kv_heads // req.gpus)
    each: Fraction = Fraction(e)
    each_text = f"{e} bytes"
    if req.engine is Engine.LLAMA_CPP:
        each, each_text = KV_CACHE_TYPES[req.kv_cache_type]
    if m.is_mla:
        values = m.kv_values_per_token
        size = math.ceil(m.layers * values * req.context * req.batch * each)
        formula = (
            f"{m.layers} layers × ({m.kv_lora_rank} latent + {m.rope_dim} RoPE key) × "
            f"{req.context:,} tokens × {req.batch} seq × {each_text}"
        )
        return _line("kv_cache", _("KV cache (MLA latent)"), size, formula)
    per_gpu = f" (of {m.kv_heads}, per GPU)" if heads != m.kv_heads else ""
    per_token = f"{heads} KV heads{per_gpu} × {m.dim} head dim"
    full, window = m.layers - m.sliding_layers, min(req.context, m.sliding_window)
    values = 2 * full * heads * m.dim * req.context * req.batch
    formula = (
        f"2 × {full} layers × {per_token} × {req.context:,} tokens × {req.batch} seq × {each_text}"
    )
    if m.sliding_layers:
        values += 2 * m.sliding_layers * heads * m.dim * window * req.batch
        formula += (
            f" + 2 × {m.sliding_layers} sliding-window layers × {per_token} × {window:,} tokens "
            f"× {req.batch} seq × {each_text}"
        )
    label = (
        _("KV cache ({type})").format(type=req.kv_cache_type)
        if req.engine is Engine.LLAMA_CPP
        else _("KV cache")
    )
    return _line("kv_cache", label, math.ceil(values * each), formula)


def _layer_split(req: EstimateRequest, lines: list[MemoryLine], e: int) -> list[MemoryLine]:
    """Layer split: each GPU holds whole layers (the busiest ceil(L/N) of them) with their KV
    cache; embeddings sit on the first GPU and lm_head on the last; every GPU runs the whole
    prompt through its layers, so each has the full activation peak."""
    m, n = req.model, req.gpus
    share = -(-m.layers // n)
    out = []
    for line in lines:
        if line.key == "weights":
            head = m.vocab * m.hidden * e
            tied = head if m.tied_embeddings else 0
            blocks = max(line.bytes - head * (1 if m.tied_embeddings else 2), 0)
            size = math.ceil(blocks * share / m.layers) + head + tied
            formula = (
                f"{share} of {m.layers} layers × {blocks / GIB:,.2f} GiB blocks + "
                f"{'the tied embedding' if tied else 'embedding or lm_head'} "
                f"{m.vocab:,} × {m.hidden:,} × {e} bytes (busiest of {n} GPUs, layer split)"
            )
            line = _line(line.key, line.label, size, formula, line.bytes)
        elif line.key == "kv_cache":
            size = math.ceil(line.bytes * share / m.layers)
            formula = f"{share} of {m.layers} layers × {_gib(line.bytes)} (layer split)"
            line = _line(line.key, line.label, size, formula, line.bytes)
        out.append(line)
    return out


def _shard(req: EstimateRequest, lines: list[MemoryLine], e: int) -> list[MemoryLine]:
    """Divide the lines the strategy splits; ZeRO-3/FSDP add the gathered-layer buffer. `e`:
    bytes per value, 4 when the weights are fp32."""
    n, split = req.gpus, req.split
    if n == 1:
        return lines
    if split is Strategy.LAYERS:
        return _layer_split(req, lines, e)
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
                _("gathered layers (ZeRO-3/FSDP)"),
                2 * layer * 2,
                f"2 layers (current + prefetched) × {layer:,} params × 2 bytes",
            )
        )
    return out


def estimate_memory(req: EstimateRequest) -> MemoryEstimate:
    """The VRAM breakdown per GPU: weights, KV cache or training state, activations, the CUDA
    context and the allocator's reserve."""
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
    lines = _shard(req, lines, e)
    subtotal = sum(line.bytes for line in lines)
    lines.append(
        _line(
            "cuda_context",
            _("CUDA context (outside PyTorch's allocator)"),
            CUDA_CONTEXT_BYTES,
            "1 process × CUDA context and cuBLAS workspaces",
        )
    )
    reserve = math.ceil(subtotal * FRAGMENTATION)
    formula = f"5% × {_gib(subtotal)} (cached, fragmented blocks)"
    lines.append(_line("allocator_reserve", _("allocator reserve"), reserve, formula))
    active = m.active_params if m.is_moe else 0
    return MemoryEstimate(req, precision, m.params, trainable, tuple(lines), active)
