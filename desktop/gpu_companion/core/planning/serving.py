"""Serving concurrency: how many users fit in the KV cache an engine like vLLM leaves after the
weights, how fast each of them gets tokens at that concurrency, and which card meets a required
total tokens/s.

vLLM claims `gpu_memory_utilization` (0.9 by default) of each GPU's memory, loads the weights,
profiles a forward pass for activations, and gives the rest to the KV cache; a user holding a
full context needs context × KV bytes per token of it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.planning.catalogue import GpuSpec
from gpu_companion.core.planning.estimate import (
    GB,
    GIB,
    PREFILL_MFU,
    Verdict,
    decode_read_bytes,
)
from gpu_companion.core.planning.memory import (
    CUDA_CONTEXT_BYTES,
    Engine,
    EstimateRequest,
    Task,
    estimate_memory,
    tensor_parallel,
)

GPU_MEMORY_UTILIZATION = 0.9  # vLLM's default share of each GPU's memory
SERVING_NOTES = (
    N_(
        "Serving: vLLM's gpu-memory-utilization (0.9) of each GPU's memory, less the weights, the "
        "activation peak of one chunk of max_num_batched_tokens (8,192) and the CUDA context, is "
        "the KV cache pool, reported as the longest context one sequence can hold and as the "
        "sequences that fit at the given length; every user is counted at the full context (a "
        "worst case: shorter chats leave room for more). Tokens/s per user at N users: one decode "
        "step reads the weights once (MoE: the experts the N tokens are routed to) and all N "
        "users' KV cache, or runs 2 x active params x N FLOPs at 50% of peak if that is slower."
    ),
)


@dataclass(frozen=True)
class ServingEstimate:
    """Users that fit and the speed each gets, on `gpus` cards of one kind."""

    gpu: GpuSpec
    gpus: int
    users: int
    pool_bytes: int
    kv_per_user_bytes: int
    users_fit: int
    step_seconds: float
    per_user_tokens_s: float
    total_tokens_s: float
    pool_formula: str
    step_formula: str
    verdicts: tuple[Verdict, ...]
    max_concurrency: float = 0.0  # vLLM's "Maximum concurrency for N tokens per request"
    longest_context: int = 0  # vLLM's "GPU KV cache size: N tokens": one sequence's ceiling

    @property
    def fits(self) -> bool:
        """True when the requested users fit the KV cache pool."""
        return self.users <= self.users_fit


def estimate_serving(
    req: EstimateRequest,
    gpu: GpuSpec,
    users: int,
    *,
    target_tokens_s: float | None = None,
    utilization: float = GPU_MEMORY_UTILIZATION,
    total_gib: float | None = None,
) -> ServingEstimate:
    """Users that fit at `req`'s context, speed per user and in total at `users`, and verdicts,
    as vLLM sizes its pool: `utilization` × the card's memory (`total_gib`: what torch reports
    as total, when known) less the weights, the activation peak of its profiling pass (one chunk
    of max_num_batched_tokens) and the CUDA context."""
    if req.task is not Task.INFERENCE:
        raise ValidationError("serve", _("Serving concurrency applies to inference only."))
    if not 1 <= users <= 100_000:
        raise ValidationError(
            "users", _("The number of users must be 1 to 100,000, not {users}.").format(users=users)
        )
    if not 0.1 <= utilization <= 1.0:
        raise ValidationError(
            "utilization",
            _("GPU memory utilization must be 0.1 to 1.0, not {value}.").format(
                value=f"{utilization:g}"
            ),
        )
    if target_tokens_s is not None and not target_tokens_s > 0:
        raise ValidationError("target_tokens_s", _("The tokens/s target must be above 0."))
    one = estimate_memory(replace(req, batch=1, engine=Engine.VLLM))
    weights, kv_user = one.line("weights").bytes, one.line("kv_cache").bytes
    activations = one.line("activations").bytes
    vram = total_gib if total_gib is not None else float(gpu.vram_gb)
    budget = int(utilization * vram * GIB)
    pool = budget - weights - activations - CUDA_CONTEXT_BYTES
    users_fit = max(pool, 0) // kv_user
    per_token = kv_user / req.context
    longest = int(max(pool, 0) // per_token)
    tp = tensor_parallel(one.request)
    per = " per GPU" if req.gpus > 1 else ""
    pool_formula = (
        f"{utilization:g} × {vram:g} GiB{per} - {weights / GIB:,.2f} GiB weights - "
        f"{activations / GIB:,.2f} GiB activation peak ({one.request.prefill_tokens:,} batched "
        f"tokens) - {CUDA_CONTEXT_BYTES / GIB:.2f} GiB CUDA context = {pool / GIB:,.2f} GiB KV "
        f"cache = {longest:,} tokens; ÷ {kv_user / GIB:,.3f} GiB per user at {req.context:,} "
        f"tokens = {users_fit:,} users ({max(pool, 0) / kv_user:,.2f}x)"
    )
    read, read_text = decode_read_bytes(one, users)
    memory_s = (read + users * kv_user) / (gpu.bandwidth_gb_s * GB)
    tflops, _label = gpu.matmul_tflops("fp32" if one.precision.value == "fp32" else "bf16")
    compute_s = 2 * one.flop_params * users / (tp * tflops * 1e12 * PREFILL_MFU)
    step = max(memory_s, compute_s)
    bound = "memory" if memory_s >= compute_s else "compute"
    step_formula = (
        f"step = max(({read_text} + {users:,} × {kv_user / GB:,.3f} GB KV) ÷ "
        f"{gpu.bandwidth_gb_s:,g} GB/s = {memory_s * 1000:,.1f} ms, 2 × {one.flop_params:,} × "
        f"{users:,} FLOPs ÷ ({tflops:g} TFLOPS × {PREFILL_MFU:.0%}{f' × {tp}' if tp > 1 else ''}) "
        f"= {compute_s * 1000:,.1f} ms) = {step * 1000:,.1f} ms ({bound}-bound)"
    )
    per_user, total = 1 / step, users / step
    cards = f"{tp} × {gpu.name}" if tp > 1 else _("the {card}").format(card=gpu.name)
    room = {"users": f"{users:,}", "context": f"{req.context:,}", "cards": cards,
            "fit": f"{users_fit:,}"}  # fmt: skip
    verdicts = [
        Verdict(
            users <= users_fit,
            (
                _(
                    "{users} users at {context} tokens each fit in {cards}'s KV cache (room for "
                    "{fit})."
                )
                if users <= users_fit
                else _(
                    "{users} users at {context} tokens each do not fit in {cards}'s KV cache "
                    "(room for {fit}); try a shorter context, quantised weights or more GPUs."
                )
            ).format(**room),
        ),  # fmt: skip
        Verdict(
            True,
            _(
                "At {users} users each gets {per_user} tokens/s, {total} tokens/s in total (upper "
                "bound)."
            ).format(users=f"{users:,}", per_user=f"{per_user:,.1f}", total=f"{total:,.0f}"),
        ),  # fmt: skip
    ]
    if target_tokens_s is not None:
        ok = total >= target_tokens_s and users <= users_fit
        verdicts.append(
            Verdict(
                ok,
                (
                    _("Meets your {target} tokens/s target ({total} tokens/s for {users} users).")
                    if ok
                    else _(
                        "Misses your {target} tokens/s target ({total} tokens/s for {users} users)."
                    )
                ).format(
                    target=f"{target_tokens_s:,g}", total=f"{total:,.0f}", users=f"{users:,}"
                ),  # fmt: skip
            )
        )
    return ServingEstimate(
        gpu,
        req.gpus,
        users,
        pool,
        kv_user,
        users_fit,
        step,
        per_user,
        total,
        pool_formula,
        step_formula,
        tuple(verdicts),
        max(pool, 0) / kv_user,
        longest,
    )


def cards_meeting(
    req: EstimateRequest,
    cards: Iterable[GpuSpec],
    users: int,
    target_tokens_s: float,
    *,
    utilization: float = GPU_MEMORY_UTILIZATION,
) -> list[ServingEstimate]:
    """Cards (× `req.gpus`) that hold `users` and reach `target_tokens_s` in total, cheapest
    first by their typical hourly price."""
    found = [
        serving
        for card in cards
        for serving in [
            estimate_serving(
                req, card, users, target_tokens_s=target_tokens_s, utilization=utilization
            )
        ]
        if serving.fits and serving.total_tokens_s >= target_tokens_s
    ]
    return sorted(found, key=lambda s: (s.gpu.price.low + s.gpu.price.high, s.gpu.id))
