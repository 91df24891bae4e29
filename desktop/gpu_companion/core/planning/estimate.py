"""Speed and verdicts for a rental: decode, prefill and training tokens/s on a card (or N cards),
whether the job fits, what to change first, and the assumptions behind every number.

The memory breakdown lives in `memory`; this module re-exports its names, so callers import one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.planning import parallel
from gpu_companion.core.planning.catalogue import GpuSpec
from gpu_companion.core.planning.memory import (
    CUDA_CONTEXT_BYTES,
    GB,
    GIB,
    SERVE_CONTEXT,
    TRAIN_CONTEXT,
    EstimateRequest,
    LoraTargets,
    MemoryEstimate,
    MemoryLine,
    Task,
    estimate_memory,
    tensor_parallel,
)
from gpu_companion.core.planning.model_shapes import ModelArch
from gpu_companion.core.planning.parallel import Strategy
from gpu_companion.core.planning.weight_formats import (
    WEIGHT_FORMAT_NOTES,
    Precision,
    bits_per_weight,
)

__all__ = [
    "CUDA_CONTEXT_BYTES",
    "GB",
    "GIB",
    "SERVE_CONTEXT",
    "TRAIN_CONTEXT",
    "EstimateRequest",
    "LoraTargets",
    "MemoryEstimate",
    "MemoryLine",
    "Precision",
    "Strategy",
    "Task",
    "estimate_memory",
]

PREFILL_MFU = 0.5  # share of peak tensor TFLOPS a prefill (or a large decode batch) reaches
TRAIN_MFU = 0.4  # share of peak a fine-tune reaches

ASSUMPTIONS = (
    *WEIGHT_FORMAT_NOTES,
    N_(
        "KV cache and activations use 2 bytes per value (4 for fp32); sliding-window layers "
        "(gpt-oss) cache only their window; MLA (DeepSeek-V3) caches a 512-value latent plus a "
        "64-value RoPE key per layer and token."
    ),
    N_(
        "Training activations per layer and token: 4h + 2q + k + v + 4i values (SwiGLU, "
        "FlashAttention, no dropout; i = the active experts' width for MoE), adapted from "
        "Korthikanti et al. 2022 (arXiv:2205.05198); gradient checkpointing keeps one h-vector "
        "per layer and token plus one layer recomputed; logits cost tokens x vocab x (2 + 4) "
        "bytes because the loss upcasts them to fp32."
    ),
    N_(
        "Gradient checkpointing is on by default for training, as PEFT's "
        "prepare_model_for_kbit_training (QLoRA) and LLaMA-Factory (every method) turn it on; it "
        "costs one extra forward pass (+2N FLOPs per token)."
    ),
    N_(
        "Inference activations: the largest forward pass through one layer, tokens x (3 x "
        "intermediate + 3 x hidden) values (the MLP's gate, up and their product, plus residual, "
        "normed input and output), where tokens is the whole batch of prompts for transformers, "
        "one chunk of max_num_batched_tokens for vLLM and one n_ubatch for llama.cpp (f32); eager "
        "attention adds heads x prompt x prompt scores; plus fp32 logits of the last token. The "
        "KV cache is sized at prompt + output tokens."
    ),
    N_(
        "Adam: mixed precision keeps an fp32 master copy plus fp32 m and v (16 bytes per "
        "parameter with bf16 weights and gradients, Rajbhandari et al. 2020, arXiv:1910.02054); "
        "pure bf16 keeps bf16 m and v; LoRA adapters are fp32 by default (PEFT) with fp32 Adam "
        "states."
    ),
    N_(
        "Mixture of experts: memory holds every expert; a token runs through experts_per_token of "
        "them (active parameters). A decode step over B sequences reads E x (1 - (1 - k/E)^B) "
        "experts per layer (uniform routing); LoRA on all linear layers adapts every expert."
    ),
    N_(
        "Outside the tensors: 0.5 GiB CUDA context and workspaces per GPU (nvidia-smi shows it, "
        "torch.cuda.memory_allocated does not) and an allocator reserve of 5% of everything else."
    ),
    N_(
        "Decode speed is an upper bound: the weights read per step and the whole KV cache at the "
        "card's peak bandwidth, or 2 x active params x sequences FLOPs at 50% of peak if that is "
        "slower; real engines reach 60-80% of it."
    ),
    N_(
        "Prefill and training assume 50% and 40% of dense peak TFLOPS, and 2N and 6N FLOPs per "
        "token with N the active parameters (4N for LoRA, whose frozen weights need no weight "
        "gradients; +2N with checkpointing)."
    ),
    *parallel.PARALLEL_NOTES,
)


def experts_touched(m: ModelArch, sequences: int) -> float:
    """Experts per MoE layer a decode step reads for `sequences` tokens under uniform routing:
    E × (1 - (1 - k/E)^B); all of a dense model's MLP."""
    if not m.is_moe:
        return 1.0
    e, k = m.experts, m.experts_per_token
    return e * (1 - (1 - k / e) ** sequences)


def _layered(mem: MemoryEstimate, key: str) -> int:
    """A line's bytes one decode step goes through: one GPU's, or every GPU's in a layer split."""
    line = mem.line(key)
    return mem.line_total(line) if mem.request.split is Strategy.LAYERS else line.bytes


def decode_read_bytes(mem: MemoryEstimate, sequences: int) -> tuple[int, str]:
    """Weight bytes one GPU reads per decode step: all of them less the experts nobody uses (a
    layer split reads every GPU's share in turn, so the whole model)."""
    weights = _layered(mem, "weights")
    m = mem.request.model
    if not m.is_moe:
        return weights, f"{weights / GB:,.2f} GB weights"
    p = mem.precision
    bits = bits_per_weight(p, mem.request.group_size)[0] if p.quantised else Fraction(16, 1)
    if p is Precision.FP32:
        bits = Fraction(32)
    expert_bytes = m.expert_params * bits / 8 / tensor_parallel(mem.request)
    touched = experts_touched(m, sequences)
    skipped = int(m.moe_layers * (m.experts - touched) * expert_bytes)
    read = weights - skipped
    return read, (
        f"{read / GB:,.2f} GB weights read ({touched:,.1f} of {m.experts} experts per layer for "
        f"{sequences} seq)"
    )


@dataclass(frozen=True)
class Throughput:
    """Speed on one card (or `gpus` cards): decode and prefill for inference, tokens/s for
    training."""

    gpu: GpuSpec
    tflops_label: str
    decode_tokens_per_s: float | None  # per sequence, memory-bandwidth upper bound
    decode_formula: str
    prefill_tokens: int
    prefill_seconds: float | None
    prefill_formula: str
    train_tokens_per_s: float | None
    train_formula: str
    comm_formula: str = ""
    comm_bound: bool = False


def _train_speed(mem: MemoryEstimate, gpu: GpuSpec, tflops: float) -> tuple[float, str, str, bool]:
    req, n, gpus = mem.request, mem.flop_params, mem.request.gpus
    k = (4 if req.task.uses_lora else 6) + (2 if req.checkpointing else 0)
    rate = tflops * 1e12 * TRAIN_MFU / (k * n)
    formula = (
        f"{tflops:g} TFLOPS × {TRAIN_MFU:.0%} ÷ ({k} × {n:,} FLOPs per token) = "
        f"{rate:,.0f} tokens/s"
    )
    if gpus == 1:
        return rate, formula, "", False
    split = req.split
    dp = 1 if split is Strategy.TP else gpus
    tokens = req.batch * req.context * dp
    compute = tokens * k * n / (gpus * tflops * 1e12 * TRAIN_MFU)
    m = req.model
    full_weights = mem.line("weights").bytes * (gpus if parallel.splits(split, "weights") else 1)
    grads = mem.trainable_params * (2 if not req.task.uses_lora else 4)
    tp_bytes = 4 * m.layers * req.batch * req.context * m.hidden * 2
    sent, how = parallel.comm_bytes(split, gpus, full_weights, grads, tp_bytes)
    link, link_label = gpu.link_bandwidth(gpus)
    comm = sent / (link * GB)
    step = max(compute, comm)
    rate = tokens / step
    formula = (
        f"{tokens:,} tokens per step; compute {tokens:,} × {k} × {n:,} FLOPs ÷ ({gpus} × "
        f"{tflops:g} TFLOPS × {TRAIN_MFU:.0%}) = {compute:,.2f} s; step = {step:,.2f} s → "
        f"{rate:,.0f} tokens/s on {gpus} GPUs"
    )
    comm_formula = (
        f"{how} = {sent / GB:,.2f} GB per GPU per step over {link_label} ({link:,g} GB/s) = "
        f"{comm:,.2f} s"
    )
    return rate, formula, comm_formula, comm > compute


def estimate_throughput(
    mem: MemoryEstimate, gpu: GpuSpec, prompt_tokens: int | None = None
) -> Throughput:
    """Decode bound from bandwidth and prefill time from TFLOPS (inference), or training tokens/s.

    Quantised weights are dequantised to bf16 for the matrix maths, so int8/int4 use BF16 TFLOPS.
    """
    req, n = mem.request, mem.flop_params
    dtype = {Precision.FP32: "fp32", Precision.FP16: "fp16"}.get(mem.precision, "bf16")
    tflops, label = gpu.matmul_tflops(dtype)
    if req.task is not Task.INFERENCE:
        rate, formula, comm, bound = _train_speed(mem, gpu, tflops)
        return Throughput(gpu, label, None, "", 0, None, "", rate, formula, comm, bound)
    tp = tensor_parallel(req)
    read, read_text = decode_read_bytes(mem, req.batch)
    kv = _layered(mem, "kv_cache")
    rate = gpu.bandwidth_gb_s * GB / (read + kv)
    per_gpu = " per GPU" if tp > 1 else ""
    decode = (
        f"{gpu.bandwidth_gb_s:,g} GB/s ÷ ({read_text} + {kv / GB:,.2f} GB KV cache read per "
        f"step{per_gpu}) = {rate:,.1f} tokens/s per sequence"
    )
    compute = 2 * n * req.batch / (tp * tflops * 1e12 * PREFILL_MFU)
    if compute > 1 / rate:
        rate = 1 / compute
        decode += (
            f"; compute-bound: 2 × {n:,} × {req.batch} seq FLOPs ÷ ({tflops:g} TFLOPS × "
            f"{PREFILL_MFU:.0%}{f' × {tp} GPUs' if tp > 1 else ''}) → {rate:,.1f} tokens/s"
        )
    if req.batch > 1:
        decode += f", {rate * req.batch:,.0f} tokens/s for {req.batch} sequences"
    prompt = req.context if prompt_tokens is None else prompt_tokens
    seconds = 2 * n * prompt * req.batch / (tflops * 1e12 * PREFILL_MFU * tp)
    gpus = f" × {tp} GPUs" if tp > 1 else ""
    prefill = (
        f"2 × {n:,} params × {prompt:,} tokens × {req.batch} seq ÷ ({tflops:g} TFLOPS × "
        f"{PREFILL_MFU:.0%}{gpus}) = {seconds:,.2f} s"
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
    if mem.request.gpus > 1:
        head = _("Needs {need} GiB per GPU ({n} GPUs); the {card} has {have} GB").format(
            need=f"{need:,.1f}", n=mem.request.gpus, card=gpu.name, have=have
        )
    else:
        head = _("Needs {need} GiB; the {card} has {have} GB").format(
            need=f"{need:,.1f}", card=gpu.name, have=have
        )
    if mem.fits(gpu):
        return Verdict(True, _("{head}: fits with {spare} GiB to spare.").format(
            head=head, spare=f"{have - need:,.1f}"))  # fmt: skip
    req, tips = mem.request, []
    if req.task is Task.INFERENCE:
        tips += [] if mem.precision.quantised else [_("int4 weights")]
        tips.append(_("a shorter context or fewer users"))
    else:
        tips += [] if req.checkpointing else [_("gradient checkpointing")]
        if not req.task.uses_lora:
            tips.append(_("LoRA or QLoRA"))
        elif req.task not in (Task.QLORA_4BIT, Task.QLORA_2BIT):
            tips.append(_("QLoRA 4-bit"))
        if req.gpus > 1 and not req.split.shards_weights:
            tips.append(_("ZeRO-3 or FSDP"))
        tips.append(_("a smaller batch or context"))
    return Verdict(
        False,
        _(
            "{head}: does not fit ({short} GiB short). Try {tips}, or a card with more memory."
        ).format(head=head, short=f"{need - have:,.1f}", tips=", ".join(tips)),
    )


def checkpointing_suggestion(mem: MemoryEstimate, gpu: GpuSpec | None = None) -> Verdict | None:
    """When checkpointing is off and turning it on makes the job fit `gpu` (or, without a card,
    shrinks it by a tenth or more), the sentence that says so; None otherwise."""
    req = mem.request
    if req.task is Task.INFERENCE or req.checkpointing:
        return None
    with_ckpt = estimate_memory(replace(req, gradient_checkpointing=True))
    saved = mem.total_gib - with_ckpt.total_gib
    values = {"total": f"{with_ckpt.total_gib:,.1f}", "saved": f"{saved:,.1f}"}
    if gpu is not None:
        if mem.fits(gpu) or not with_ckpt.fits(gpu):
            return None
        return Verdict(True, _(
            "Gradient checkpointing would cut this to {total} GiB ({saved} GiB less, one extra "
            "forward pass: about 30% slower): then it fits the {card} ({vram} GB)."
        ).format(card=gpu.name, vram=gpu.vram_gb, **values))  # fmt: skip
    if saved < mem.total_gib / 10:
        return None
    return Verdict(True, _(
        "Gradient checkpointing would cut this to {total} GiB ({saved} GiB less, one extra "
        "forward pass: about 30% slower)."
    ).format(**values))  # fmt: skip


def checkpointing_tip(mem: MemoryEstimate, cards: Sequence[GpuSpec]) -> Verdict | None:
    """The wizard's tip: when checkpointing is off and turning it on lets the job fit cards it
    does not fit now, say how much it saves and name the smallest of them; None otherwise."""
    req = mem.request
    if req.task is Task.INFERENCE or req.checkpointing:
        return None
    with_ckpt = estimate_memory(replace(req, gradient_checkpointing=True))
    gained = [c for c in cards if with_ckpt.fits(c) and not mem.fits(c)]
    if not gained:
        return None
    gained.sort(key=lambda c: (c.vram_gb, c.price.low, c.id))
    names = ", ".join(f"{c.name} ({c.vram_gb} GB)" for c in gained[:3])
    more = (
        _("the {names}").format(names=names)
        if len(gained) == 1
        else _("{n} more cards, from the {names}").format(n=len(gained), names=names)
    )
    before = sum(1 for c in cards if mem.fits(c))
    now = (
        _("no card in the catalogue holds it without")
        if not before
        else _("{n} cards hold it now").format(n=before)
    )
    return Verdict(
        True,
        _("Turn on gradient checkpointing: {before} → {after} GiB (one extra forward pass, about "
          "30% slower) and it also fits {more}; {now}.").format(
            before=f"{mem.total_gib:,.1f}", after=f"{with_ckpt.total_gib:,.1f}", more=more,
            now=now),
    )  # fmt: skip


def vendor_note(gpu: GpuSpec) -> Verdict | None:
    """For a card nvidia-smi cannot read: what of the app does not apply to it."""
    if gpu.runs_nvidia_smi:
        return None
    return Verdict(
        True,
        _(
            "The {card} is an {vendor} card: nvidia-smi and CUDA do not apply; the monitor and "
            "the self-check need an NVIDIA GPU, and PyTorch needs its ROCm build."
        ).format(card=gpu.name, vendor=gpu.vendor),
    )


def interconnect_verdict(tp: Throughput) -> Verdict | None:
    """On several GPUs: whether the link keeps up with the compute (PCIe-only cards often not)."""
    if not tp.comm_formula:
        return None
    card = tp.gpu
    if tp.comm_bound:
        return Verdict(
            False,
            _(
                "Communication-bound: {formula}, longer than the compute. The {card} links over "
                "{link}; cards with NVLink, fewer GPUs or a larger batch per step spend less time "
                "waiting."
            ).format(formula=tp.comm_formula, card=card.name, link=card.interconnect),
        )
    return Verdict(True, _("The link keeps up: {formula}.").format(formula=tp.comm_formula))


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
    values = {"tokens": f"{output_tokens:,}", "rate": rate.rstrip("."), "time": _seconds(decode),
              "prefill": _seconds(prefill_seconds), "prompt": f"{prompt_tokens:,}",
              "target": f"{target_seconds:g}"}  # fmt: skip
    ok = decode + prefill_seconds <= target_seconds
    if prefill_seconds > 0:
        text = (
            _("A {tokens}-token answer at {rate} tokens/s takes {time}, plus {prefill} to read "
              "the {prompt}-token prompt — within your {target} s target.")
            if ok
            else _("A {tokens}-token answer at {rate} tokens/s takes {time}, plus {prefill} to "
                   "read the {prompt}-token prompt — over your {target} s target.")
        )  # fmt: skip
    else:
        text = (
            _("A {tokens}-token answer at {rate} tokens/s takes {time} — within your {target} s "
              "target.")
            if ok
            else _("A {tokens}-token answer at {rate} tokens/s takes {time} — over your {target} "
                   "s target.")
        )  # fmt: skip
    return Verdict(ok, text.format(**values))


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
            raise ValidationError("target_seconds", _("A time target applies to inference only."))
        if gpu is None or output_tokens is None:
            raise ValidationError(
                "target_seconds",
                _("A time target needs a GPU and an answer length (output tokens)."),
            )
        if not target_seconds > 0:
            raise ValidationError("target_seconds", _("The time target must be above 0 seconds."))
    if output_tokens is not None and not 1 <= output_tokens < req.context:
        raise ValidationError(
            "output_tokens",
            _(
                "The answer length must be between 1 and the context length minus one ({most}), "
                "not {given}."
            ).format(most=f"{req.context - 1:,}", given=f"{output_tokens:,}"),
        )
    if gpu is None:
        tip = checkpointing_suggestion(mem)
        return Estimate(mem, None, (tip,) if tip else ())
    prompt = None if output_tokens is None else req.context - output_tokens
    tp = estimate_throughput(mem, gpu, prompt)
    verdicts = [fit_verdict(mem, gpu)]
    for extra in (checkpointing_suggestion(mem, gpu), interconnect_verdict(tp)):
        if extra is not None:
            verdicts.append(extra)
    ranks = tensor_parallel(req)
    if req.task is Task.INFERENCE and ranks > 1:
        _gb_s, link = gpu.link_bandwidth(ranks)
        pcie = link.startswith("PCIe")
        verdicts.append(
            Verdict(
                not pcie,
                (
                    _(
                        "Tensor parallel over {link}: every token waits for 2 all-reduces per "
                        "layer ({n} for this model); over PCIe that often costs more than the "
                        "split saves, so expect well under the decode bound (cards with NVLink "
                        "avoid it)."
                    )
                    if pcie
                    else _(
                        "Tensor parallel over {link}: every token waits for 2 all-reduces per "
                        "layer ({n} for this model)."
                    )
                ).format(link=link, n=2 * req.model.layers),
            )
        )
    note = vendor_note(gpu)
    if note is not None:
        verdicts.append(note)
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


MAX_GPUS = 8  # the most cards of one kind the wizard proposes (one node)


def fewest_gpus(req: EstimateRequest, gpu: GpuSpec, most: int = MAX_GPUS) -> MemoryEstimate | None:
    """The estimate on the fewest cards of this kind that hold the job (1 to `most`), split as
    the tools would: a layer split to serve (tensor parallel on vLLM where the heads divide),
    ZeRO-3 to train; None when even `most` cards do not hold it."""
    for n in range(1, most + 1):
        if n == 1:
            trial = replace(req, gpus=1, strategy=None)
        elif req.task is Task.INFERENCE:
            trial = replace(req, gpus=n, strategy=None)
        else:
            trial = replace(req, gpus=n, strategy=Strategy.ZERO3)
        try:
            mem = estimate_memory(trial)
        except ValidationError:
            continue
        if mem.fits(gpu):
            return mem
    return None


def job_hours(mem: MemoryEstimate, gpu: GpuSpec, tokens: int) -> float | None:
    """Hours to train on or generate `tokens` on this card (None if the job does not fit), for
    `GpuCatalogue.rank_by_job_cost`. Generation uses the decode bound for the whole batch."""
    if not mem.fits(gpu):
        return None
    tp = estimate_throughput(mem, gpu)
    rate = tp.train_tokens_per_s or (tp.decode_tokens_per_s or 0.0) * mem.request.batch
    return tokens / rate / 3600
