"""When gradient checkpointing would make a training job fit a card it does not fit now, the
wizard says so: the same estimate with checkpointing on, compared with the one without."""

from __future__ import annotations

from dataclasses import replace

from gpu_companion.core.planning.catalogue import GpuCatalogue, GpuSpec, load_catalogue
from gpu_companion.core.planning.estimate import MemoryEstimate, Task, estimate_memory


def with_checkpointing(mem: MemoryEstimate) -> MemoryEstimate | None:
    """The estimate with checkpointing on; None for inference, when it is on already, or when it
    saves nothing."""
    req = mem.request
    if req.task is Task.INFERENCE or req.gradient_checkpointing:
        return None
    alt = estimate_memory(replace(req, gradient_checkpointing=True))
    return alt if alt.total_bytes < mem.total_bytes else None


def checkpointing_hint(
    mem: MemoryEstimate, card: GpuSpec | None = None, catalogue: GpuCatalogue | None = None
) -> str:
    """'' unless checkpointing makes the job fit `card` (or, without a card, more cards)."""
    alt = with_checkpointing(mem)
    if alt is None:
        return ""
    sizes = f"{alt.total_gib:,.1f} GiB instead of {mem.total_gib:,.1f} GiB"
    if card is not None:
        if mem.fits(card) or not alt.fits(card):
            return ""
        return (
            f"With gradient checkpointing the job fits the {card.name}: it needs {sizes}, for "
            "about 30% more time per step. Turn it on on the first page."
        )
    cat = catalogue or load_catalogue()
    before = {c.id for c in cat.cards_that_fit(mem.total_gib)}
    gained = [c for c in cat.cards_that_fit(alt.total_gib) if c.id not in before]
    if not gained:
        return ""
    names = ", ".join(c.name for c in gained[:4]) + (", …" if len(gained) > 4 else "")
    return (
        f"With gradient checkpointing the job needs {sizes} and also fits {len(gained)} more "
        f"card(s): {names} (about 30% more time per step)."
    )
