"""Several GPUs for one job: which memory lines each strategy divides (ZeRO-1/2/3, FSDP, tensor
parallel) and how many bytes each GPU sends per step, so a PCIe-only card shows its real cost.

Stage by stage as in Rajbhandari et al. 2020 (ZeRO, arXiv:1910.02054, section 5): stage 1 splits
optimizer states, stage 2 also gradients, stage 3 also the parameters; FSDP full sharding is
stage 3. Tensor parallelism (Megatron-LM, arXiv:1909.08053) splits every matrix of every layer.
"""

from __future__ import annotations

from enum import Enum

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import N_, _


class Strategy(str, Enum):
    """How a job is spread over `gpus` cards; DDP keeps a full copy on each."""

    DDP = "ddp"
    ZERO1 = "zero1"
    ZERO2 = "zero2"
    ZERO3 = "zero3"
    FSDP = "fsdp"
    TP = "tp"
    LAYERS = "layers"

    @property
    def shards_weights(self) -> bool:
        """True when no GPU holds the whole model (ZeRO-3, FSDP, tensor parallel)."""
        return self in (Strategy.ZERO3, Strategy.FSDP, Strategy.TP, Strategy.LAYERS)


# Memory lines each strategy divides by the number of GPUs.
_SPLIT: dict[Strategy, frozenset[str]] = {
    Strategy.DDP: frozenset(),
    Strategy.ZERO1: frozenset({"optimizer"}),
    Strategy.ZERO2: frozenset({"optimizer", "gradients"}),
    Strategy.ZERO3: frozenset({"optimizer", "gradients", "weights", "trainable"}),
    Strategy.FSDP: frozenset({"optimizer", "gradients", "weights", "trainable"}),
    Strategy.TP: frozenset({"optimizer", "gradients", "weights", "trainable", "kv_cache"}),
    Strategy.LAYERS: frozenset({"weights", "kv_cache"}),
}
_NAMES = {
    Strategy.DDP: N_("DDP, a full copy per GPU"),
    Strategy.ZERO1: N_("ZeRO-1"),
    Strategy.ZERO2: N_("ZeRO-2"),
    Strategy.ZERO3: N_("ZeRO-3"),
    Strategy.FSDP: N_("FSDP full shard"),
    Strategy.TP: N_("tensor parallel"),
    Strategy.LAYERS: N_("layer split"),
}
PARALLEL_NOTES = (
    N_(
        "Several GPUs: memory is per GPU. ZeRO-1 divides the optimizer states by N, ZeRO-2 also "
        "the gradients, ZeRO-3 and FSDP also the weights (Rajbhandari et al. 2020, "
        "arXiv:1910.02054) and hold two gathered layers in 16-bit; tensor parallel divides "
        "weights, training states, KV heads and the attention/MLP activations (Megatron-LM, "
        "arXiv:1909.08053); MLA's latent KV cache is copied on every rank, as vLLM does. The "
        "batch is per GPU. Tensor parallel needs the attention heads and the KV heads to divide "
        "over the GPUs (or the GPUs over the KV heads); a layer split (transformers' "
        "device_map=\"auto\", llama.cpp's default, vLLM's pipeline parallel) runs on any GPU "
        "count: each GPU holds ceil(layers / N) layers with their KV cache, and each runs the "
        "whole prompt through its layers, so each has the full activation peak."
    ),
    N_(
        "Communication per step and GPU with ring collectives: DDP/ZeRO-1/2 send 2 × (N-1)/N × "
        "the gradients, ZeRO-3/FSDP (N-1)/N × (2 × the 16-bit weights + the gradients), tensor "
        "parallel 4 all-reduces of the activations per layer (2 forward, 2 backward); the step "
        "takes the longer of compute and communication (they overlap). Links per direction: half "
        "the NVLink total, PCIe Gen3/4/5 x16 = 16/32/64 GB/s."
    ),
)


def strategy_name(strategy: Strategy) -> str:
    """The strategy as the tools name it."""
    return _(_NAMES[strategy])


def splits(strategy: Strategy, key: str) -> bool:
    """True when `strategy` divides the memory line `key` between the GPUs."""
    return key in _SPLIT[strategy]


def tp_divides(gpus: int, heads: int, kv_heads: int) -> bool:
    """True when tensor parallel can split the attention over `gpus`: the query heads divide
    evenly and the KV heads divide (or are replicated over a multiple of them)."""
    return heads % gpus == 0 and (kv_heads % gpus == 0 or gpus % kv_heads == 0)


def check(gpus: int, strategy: Strategy, training: bool, heads: int, kv_heads: int) -> None:
    """Refuse combinations the tools do not run, with what to use instead."""
    if not 1 <= gpus <= 1024:
        raise ValidationError(
            "gpus", _("The number of GPUs must be 1 to 1,024, not {gpus}.").format(gpus=gpus)
        )
    if gpus > 1 and not training and strategy not in (Strategy.TP, Strategy.LAYERS):
        raise ValidationError(
            "strategy",
            _("{strategy} splits training state; to serve one model over {gpus} GPUs use tensor "
              "parallel (tp) or a layer split (layers), or run one copy per GPU.").format(
                strategy=strategy_name(strategy), gpus=gpus),
        )  # fmt: skip
    if training and strategy is Strategy.LAYERS:
        raise ValidationError(
            "strategy",
            _("A layer split is sized for inference; to train use ddp, zero1-3 or fsdp."),
        )
    if gpus > 1 and strategy is Strategy.TP and not tp_divides(gpus, heads, kv_heads):
        raise ValidationError(
            "gpus",
            _("Tensor parallel needs the {heads} attention heads and the {kv_heads} KV heads to "
              "divide evenly over the GPUs (or the GPUs over the KV heads); {gpus} GPUs do not. "
              "A layer split (--strategy layers) runs on any number of GPUs.").format(
                heads=heads, kv_heads=kv_heads, gpus=gpus),
        )  # fmt: skip


def comm_bytes(
    strategy: Strategy, gpus: int, weight_bytes: int, grad_bytes: int, tp_bytes: int
) -> tuple[int, str]:
    """Bytes each GPU sends per training step and the formula; 0 on one GPU."""
    if gpus == 1:
        return 0, "one GPU: nothing to send"
    share = f"({gpus} - 1) ÷ {gpus}"
    if strategy is Strategy.TP:
        size = 2 * tp_bytes * (gpus - 1) // gpus
        return size, f"4 all-reduces per layer: 2 × {share} × {tp_bytes / 1e9:,.2f} GB activations"
    if strategy.shards_weights:
        size = (2 * weight_bytes + grad_bytes) * (gpus - 1) // gpus
        return size, (
            f"{share} × (2 × {weight_bytes / 1e9:,.2f} GB weights gathered + "
            f"{grad_bytes / 1e9:,.2f} GB gradients reduced)"
        )
    size = 2 * grad_bytes * (gpus - 1) // gpus
    return size, f"2 × {share} × {grad_bytes / 1e9:,.2f} GB gradients (reduce-scatter + gather)"
