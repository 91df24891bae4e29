"""The GPU catalogue: the four columns that decide a rental (VRAM, BF16/FP16 TFLOPS, bandwidth,
interconnect) plus INT8, power, a datasheet source and a default price range for each card.

The data lives in `gpu_companion.resources/gpus.json`; every figure is checked for unit and range
on load, because one sparse "TFLOPS*" copied from a datasheet would double a card's speed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.i18n import _

# Whole GB from the smallest card worth renting to the largest package sold: a 12, 94, 96 or 192 GB
# card is real, while 14.1 (for 141) or 1410 is a typo.
VRAM_RANGE_GB = (4, 512)
# Bandwidth per GB of memory: GDDR cards have 10-60 GB/s per GB, HBM cards 20-70; a figure outside
# 5-120 has lost or gained a digit (e.g. 480 GB/s on a 141 GB H200).
BANDWIDTH_PER_GB = (5.0, 120.0)
# Nominal PCIe x16 bandwidth per direction, GB/s, by generation.
PCIE_GB_S = {3: 16.0, 4: 32.0, 5: 64.0, 6: 128.0}
VENDORS = frozenset({"NVIDIA", "AMD"})
CENT = Decimal("0.01")
_ID_RE = re.compile(r"^[a-z0-9][a-z0-9-]{1,40}$")
# Architectures whose tensor cores have no BF16 path: bf16_tflops must be null for them.
_NO_BF16 = frozenset({"Volta", "Turing"})


class CatalogueError(UserError):
    """The catalogue file is damaged or a value is out of range; names the card and the field."""


@dataclass(frozen=True)
class Source:
    """Where a card's figures were read: the datasheet or whitepaper and its URL."""

    name: str
    url: str


@dataclass(frozen=True)
class PriceRange:
    """A typical hourly price range; the default is USD, user overrides may use any currency."""

    low: Decimal
    high: Decimal
    currency: str = "USD"


@dataclass(frozen=True)
class GpuSpec:
    """One card's datasheet figures (dense, no sparsity) and its default price range."""

    id: str
    name: str
    architecture: str
    vram_gb: int
    memory_type: str
    bf16_tflops: float | None
    fp16_tflops: float
    fp16_acc16_tflops: float | None
    fp32_tflops: float
    int8_tops: float | None
    bandwidth_gb_s: float
    nvlink_gb_s: float | None
    pcie_gen: int
    tdp_w: int
    sources: tuple[Source, ...]
    price: PriceRange
    notes: str = ""
    vendor: str = "NVIDIA"
    form_factor: str = ""  # "sxm"/"oam" (switched GPU links) or "pcie"; "" reads it from the id

    @property
    def switched(self) -> bool:
        """True for SXM/OAM modules, whose GPU links reach every GPU of the server."""
        return (self.form_factor or ("sxm" if "sxm" in self.id else "pcie")) in ("sxm", "oam")

    @property
    def link_name(self) -> str:
        """The vendor's name for the GPU-to-GPU link."""
        return "Infinity Fabric" if self.vendor == "AMD" else "NVLink"

    @property
    def interconnect(self) -> str:
        """The multi-GPU link in words: it decides whether two cards can share one model well."""
        pcie = f"PCIe Gen{self.pcie_gen} x16"
        if self.nvlink_gb_s is None:
            return _("{pcie}, no NVLink").format(pcie=pcie)
        if self.switched:
            return f"{self.link_name} {self.nvlink_gb_s:g} GB/s + {pcie}"
        return _("{pcie} + NVLink bridge {gb_s} GB/s (pairs of cards)").format(
            pcie=pcie, gb_s=f"{self.nvlink_gb_s:g}"
        )

    def link_bandwidth(self, gpus: int) -> tuple[float, str]:
        """GB/s per direction between `gpus` of these cards and the link's name: half the GPU
        link's total when it joins them all (switched, or a bridged pair), else PCIe."""
        if self.nvlink_gb_s is not None and (self.switched or gpus == 2):
            half = _("{link} (half of {gb_s} GB/s)").format(
                link=self.link_name, gb_s=f"{self.nvlink_gb_s:g}"
            )
            return self.nvlink_gb_s / 2, half
        return PCIE_GB_S[self.pcie_gen], f"PCIe Gen{self.pcie_gen} x16"

    @property
    def runs_nvidia_smi(self) -> bool:
        """False for cards the monitor and self-check cannot read (no nvidia-smi)."""
        return self.vendor == "NVIDIA"

    def matmul_tflops(self, dtype: str) -> tuple[float, str]:
        """Dense TFLOPS for a compute dtype ("bf16", "fp16", "fp32") and a label saying which.

        Cards without BF16 tensor cores fall back to FP16, the dtype people actually run on them.
        """
        if dtype == "fp32":
            return self.fp32_tflops, _("{n} FP32 TFLOPS (non-tensor)").format(
                n=f"{self.fp32_tflops:g}"
            )
        if dtype == "bf16" and self.bf16_tflops is not None:
            return self.bf16_tflops, _("{n} BF16 TFLOPS (dense)").format(n=f"{self.bf16_tflops:g}")
        label = _("{n} FP16 TFLOPS (dense, FP32 accumulate)").format(n=f"{self.fp16_tflops:g}")
        if dtype == "bf16":
            label += _("; the {card} has no BF16 tensor cores, so run FP16").format(card=self.name)
        return self.fp16_tflops, label


@dataclass(frozen=True)
class JobCost:
    """What one job costs on one card: hours from the estimator times the hourly price range."""

    card: GpuSpec
    hours: Decimal
    low: Decimal
    high: Decimal
    currency: str


@dataclass(frozen=True)
class GpuCatalogue:
    """All known cards, looked up by id or by name as people type it ("RTX 4090", "h100 sxm")."""

    cards: tuple[GpuSpec, ...]
    prices_as_of: str = ""
    price_note: str = ""

    def get(self, key: str) -> GpuSpec:
        """The card with this id or name; a ValidationError listing the ids otherwise."""
        wanted = _normalise(key)
        for card in self.cards:
            if wanted in (_normalise(card.id), _normalise(card.name)):
                return card
        known = ", ".join(card.id for card in self.cards)
        raise ValidationError(
            "gpu", _("Unknown GPU {key}. Known cards: {known}.").format(key=repr(key), known=known)
        )

    def cards_that_fit(self, vram_gb: float) -> list[GpuSpec]:
        """Cards with at least `vram_gb` of memory, smallest and then cheapest first."""
        fit = [card for card in self.cards if card.vram_gb >= vram_gb]
        return sorted(fit, key=lambda card: (card.vram_gb, card.price.low, card.id))

    def rank_by_job_cost(
        self,
        job_hours: Callable[[GpuSpec], float | Decimal | None],
        prices: Mapping[str, PriceRange] | None = None,
    ) -> list[JobCost]:
        """Cards ordered by the midpoint of the job's cost range; `job_hours` returns None for a
        card the job does not fit on. `prices` holds the user's overrides by card id."""
        ranked: list[JobCost] = []
        for card in self.cards:
            hours = job_hours(card)
            if hours is None:
                continue
            price = (prices or {}).get(card.id, card.price)
            exact = Decimal(str(hours))
            ranked.append(
                JobCost(
                    card=card,
                    hours=exact.quantize(CENT, ROUND_HALF_UP),
                    low=(exact * price.low).quantize(CENT, ROUND_HALF_UP),
                    high=(exact * price.high).quantize(CENT, ROUND_HALF_UP),
                    currency=price.currency,
                )
            )
        return sorted(ranked, key=lambda job: (job.low + job.high, job.card.id))


def _normalise(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower().replace("nvidia", "").replace("geforce", ""))


def _number(card: str, data: Mapping[str, Any], key: str, low: float, high: float) -> float:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CatalogueError(f"GPU catalogue: card {card!r} has no number for {key!r}.")
    if not low <= value <= high:
        raise CatalogueError(
            f"GPU catalogue: card {card!r} has {key} = {value:g}, outside {low:g}-{high:g}."
        )
    return float(value)


def _optional(
    card: str, data: Mapping[str, Any], key: str, low: float, high: float
) -> float | None:
    return None if data.get(key) is None else _number(card, data, key, low, high)


def _text(card: str, data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CatalogueError(f"GPU catalogue: card {card!r} has no text for {key!r}.")
    return value


def _price(card: str, data: Any) -> PriceRange:
    try:
        low, high = Decimal(str(data["low"])), Decimal(str(data["high"]))
    except (KeyError, TypeError, InvalidOperation):
        raise CatalogueError(f"GPU catalogue: card {card!r} needs a price low and high.") from None
    if not Decimal(0) < low <= high <= Decimal(100):
        raise CatalogueError(
            f"GPU catalogue: card {card!r} price {low}-{high} USD/h must satisfy 0 < low <= high "
            "<= 100."
        )
    return PriceRange(low, high)


def _sources(card: str, data: Any) -> tuple[Source, ...]:
    if not isinstance(data, list) or not data:
        raise CatalogueError(f"GPU catalogue: card {card!r} names no datasheet source.")
    found = []
    for item in data:
        name, url = (item.get("name"), item.get("url")) if isinstance(item, dict) else (None, None)
        if not isinstance(name, str) or not isinstance(url, str) or not url.startswith("https://"):
            raise CatalogueError(
                f"GPU catalogue: card {card!r} has a source without a name or URL."
            )
        found.append(Source(name, url))
    return tuple(found)


def _check_dense(card: GpuSpec) -> None:
    """INT8 is twice the 16-bit rate on every tensor core since Turing; a ratio near 4 or 1 means
    a sparse figure slipped in next to a dense one."""
    if card.int8_tops is None:
        return
    ratio = card.int8_tops / (card.fp16_acc16_tflops or card.fp16_tflops)
    if not 1.9 <= ratio <= 2.1:
        raise CatalogueError(
            f"GPU catalogue: card {card.id!r} has INT8 {card.int8_tops:g} TOPS against 16-bit "
            f"{card.fp16_acc16_tflops or card.fp16_tflops:g} TFLOPS (ratio {ratio:.2f}, expected "
            "2): is one of them a sparse figure?"
        )


def parse_card(data: Mapping[str, Any]) -> GpuSpec:
    """One validated card from its JSON object; CatalogueError names what is wrong."""
    ident = data.get("id")
    if not isinstance(ident, str) or not _ID_RE.match(ident):
        raise CatalogueError(f"GPU catalogue: {ident!r} is not a valid card id.")
    vram = data.get("vram_gb")
    low, high = VRAM_RANGE_GB
    if isinstance(vram, bool) or not isinstance(vram, int) or not low <= vram <= high:
        raise CatalogueError(
            f"GPU catalogue: card {ident!r} has vram_gb = {vram!r}: expected whole GB from {low} "
            f"to {high} (is a decimal point missing or misplaced?)."
        )
    architecture = _text(ident, data, "architecture")
    vendor = data.get("vendor", "NVIDIA")
    if vendor not in VENDORS:
        raise CatalogueError(
            f"GPU catalogue: card {ident!r} has vendor {vendor!r}, not one of {sorted(VENDORS)}."
        )
    form = data.get("form_factor", "")
    if form not in ("", "sxm", "oam", "pcie"):
        raise CatalogueError(
            f"GPU catalogue: card {ident!r} has form_factor {form!r}, not sxm, oam or pcie."
        )
    card = GpuSpec(
        id=ident,
        name=_text(ident, data, "name"),
        architecture=architecture,
        vram_gb=vram,
        memory_type=_text(ident, data, "memory_type"),
        bf16_tflops=_optional(ident, data, "bf16_tflops", 8, 2500),
        fp16_tflops=_number(ident, data, "fp16_tflops", 8, 2500),
        fp16_acc16_tflops=_optional(ident, data, "fp16_acc16_tflops", 8, 5000),
        fp32_tflops=_number(ident, data, "fp32_tflops", 1, 200),
        int8_tops=_optional(ident, data, "int8_tops", 16, 10000),
        bandwidth_gb_s=_number(ident, data, "bandwidth_gb_s", 200, 10000),
        nvlink_gb_s=_optional(ident, data, "nvlink_gb_s", 50, 1800),
        pcie_gen=int(_number(ident, data, "pcie_gen", 3, 6)),
        tdp_w=int(_number(ident, data, "tdp_w", 50, 1500)),
        sources=_sources(ident, data.get("sources")),
        price=_price(ident, data.get("price_usd_per_hour")),
        notes=str(data.get("notes", "")),
        vendor=vendor,
        form_factor=form,
    )
    per_gb = card.bandwidth_gb_s / card.vram_gb
    if not BANDWIDTH_PER_GB[0] <= per_gb <= BANDWIDTH_PER_GB[1]:
        raise CatalogueError(
            f"GPU catalogue: card {ident!r} has {card.bandwidth_gb_s:g} GB/s for {vram} GB "
            f"({per_gb:.1f} GB/s per GB, plausible {BANDWIDTH_PER_GB[0]:g}-"
            f"{BANDWIDTH_PER_GB[1]:g}): is one of them off by a factor of ten?"
        )
    if (card.bf16_tflops is None) != (architecture in _NO_BF16):
        raise CatalogueError(
            f"GPU catalogue: card {ident!r} ({architecture}) must have bf16_tflops null exactly "
            "when the architecture has no BF16 tensor cores (Volta, Turing)."
        )
    if card.bf16_tflops is not None and card.bf16_tflops > card.fp16_tflops * 1.01:
        raise CatalogueError(f"GPU catalogue: card {ident!r} has BF16 above FP16 TFLOPS.")
    _check_dense(card)
    return card


def parse_catalogue(data: Any) -> GpuCatalogue:
    """A validated catalogue from the decoded JSON document."""
    if (
        not isinstance(data, dict)
        or data.get("schema") != 1
        or not isinstance(data.get("cards"), list)
    ):
        raise CatalogueError("GPU catalogue: expected {'schema': 1, 'cards': [...]}.")
    cards = tuple(parse_card(item) for item in data["cards"] if isinstance(item, dict))
    if len(cards) != len(data["cards"]):
        raise CatalogueError("GPU catalogue: every card must be a JSON object.")
    ids = [card.id for card in cards]
    duplicates = sorted({ident for ident in ids if ids.count(ident) > 1})
    if duplicates:
        raise CatalogueError(f"GPU catalogue: duplicate card ids {duplicates}.")
    return GpuCatalogue(cards, str(data.get("prices_as_of", "")), str(data.get("price_note", "")))


def load_catalogue(path: Path | None = None) -> GpuCatalogue:
    """The shipped catalogue (cached), or one read from `path`."""
    if path is None:
        return _shipped_catalogue()
    try:
        return parse_catalogue(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError) as exc:
        raise CatalogueError(f"GPU catalogue {path} could not be read: {exc}") from exc


@lru_cache(maxsize=1)
def _shipped_catalogue() -> GpuCatalogue:
    text = resources.files("gpu_companion.resources").joinpath("gpus.json").read_text("utf-8")
    return parse_catalogue(json.loads(text))


def cards_that_fit(vram_gb: float, catalogue: GpuCatalogue | None = None) -> list[GpuSpec]:
    """Cards of the shipped (or given) catalogue with at least `vram_gb` of memory."""
    return (catalogue or load_catalogue()).cards_that_fit(vram_gb)


def explain_int8_tops(card: GpuSpec | None = None) -> str:
    """Why a big INT8 TOPS number does not make a training card, with the card's own figures."""
    text = _(
        "INT8 TOPS count 8-bit integer multiply-adds, which serve quantised inference. "
        "Training runs BF16/FP16 matrix maths with FP32 accumulation and keeps FP32 optimiser "
        "state, so judge a training card on dense BF16 TFLOPS, VRAM and memory bandwidth (and "
        "NVLink if you need several cards). Headline 'AI TOPS' are often sparse (2:4) or FP4 "
        "figures that ordinary training never reaches."
    )
    if card is None or card.int8_tops is None:
        return text
    bf16 = card.bf16_tflops or card.fp16_tflops
    return _(
        "{text} The {card} lists {int8} dense INT8 TOPS but only {bf16} dense {dtype} TFLOPS, "
        "{bandwidth} GB/s and {vram} GB."
    ).format(
        text=text, card=card.name, int8=f"{card.int8_tops:g}", bf16=f"{bf16:g}",
        dtype="BF16" if card.bf16_tflops else "FP16", bandwidth=f"{card.bandwidth_gb_s:g}",
        vram=card.vram_gb,
    )  # fmt: skip
