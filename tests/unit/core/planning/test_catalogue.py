"""The shipped GPU catalogue: units, ranges and dense (not sparse) figures for every card.

Spot checks against the datasheets each card names in `sources` (URLs in resources/gpus.json):
NVIDIA prints sparse tensor figures with an asterisk ("1,979 TFLOPS*" for H100 SXM BF16), so the
dense figure is half; the GeForce whitepapers list FP16 with FP16 accumulate separately from FP32
accumulate, which is half rate on GeForce.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.planning.catalogue import (
    VRAM_RANGE_GB,
    CatalogueError,
    GpuSpec,
    PriceRange,
    cards_that_fit,
    explain_int8_tops,
    load_catalogue,
    parse_catalogue,
)

REQUIRED = {
    "h200-sxm",
    "h100-sxm",
    "h100-pcie",
    "a100-80gb-sxm",
    "a100-40gb-sxm",
    "l40s",
    "l4",
    "a10",
    "v100-sxm2-32gb",
    "t4",
    "rtx-6000-ada",
    "rtx-a6000",
    "rtx-4090",
    "rtx-3090",
    "rtx-5090",
    # the cards renters meet beyond the first fifteen
    "b200-sxm",
    "h100-nvl",
    "h20",
    "a40",
    "rtx-4000-ada",
    "mi300x",
}
CARDS = load_catalogue().cards


def _raw() -> dict[str, Any]:
    text = resources.files("gpu_companion.resources").joinpath("gpus.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def test_the_catalogue_ships_as_package_data_with_every_required_card() -> None:
    assert {card.id for card in CARDS} >= REQUIRED
    assert len(CARDS) >= 21
    assert load_catalogue() is load_catalogue()  # parsed once


@pytest.mark.parametrize("card", CARDS, ids=lambda card: card.id)
def test_every_card_has_units_in_range_and_a_source(card: GpuSpec) -> None:
    assert VRAM_RANGE_GB[0] <= card.vram_gb <= VRAM_RANGE_GB[1]
    assert 5 <= card.bandwidth_gb_s / card.vram_gb <= 120
    assert card.bf16_tflops is None or 8 <= card.bf16_tflops <= 2500
    assert 8 <= card.fp16_tflops <= 2500
    assert 1 <= card.fp32_tflops <= 200
    assert 200 <= card.bandwidth_gb_s <= 10_000
    assert 50 <= card.tdp_w <= 1500
    assert 3 <= card.pcie_gen <= 6
    assert card.nvlink_gb_s is None or 50 <= card.nvlink_gb_s <= 1800
    assert card.sources
    assert all(src.url.startswith("https://") and src.name for src in card.sources)
    assert Decimal(0) < card.price.low <= card.price.high <= Decimal(100)
    assert card.price.currency == "USD"
    # Dense check: INT8 tensor TOPS are twice the 16-bit rate since Turing; a ratio of 4 would
    # mean a sparse INT8 figure next to a dense FP16 one.
    if card.int8_tops is not None:
        assert card.int8_tops / (card.fp16_acc16_tflops or card.fp16_tflops) == pytest.approx(
            2, rel=0.05
        )


@pytest.mark.parametrize(
    ("card_id", "bf16", "int8", "bandwidth"),
    [
        ("h100-sxm", 1979 / 2, 3958 / 2, 3350),  # datasheet BF16 1,979*, INT8 3,958* (sparse)
        ("h200-sxm", 1979 / 2, 3958 / 2, 4800),
        ("h100-pcie", 1513 / 2, 3026 / 2, 2000),
        ("a100-80gb-sxm", 312, 624, 2039),  # datasheet "312 | 624*"
        ("l40s", 362.05, 733, 864),  # datasheet "362.05 | 733*"
        ("l4", 242 / 2, 485 / 2, 300),  # datasheet lists only sparse: 242*, 485*
        ("rtx-4090", 165.2, 660.6, 1008),  # Ada whitepaper: FP32-accumulate 165.2 | 330.4*
        ("rtx-3090", 71, 284, 936),  # GA102 whitepaper: FP32-accumulate 71 | 142*
        ("rtx-5090", 209.5, 838, 1792),  # RTX Blackwell whitepaper
        ("b200-sxm", 4500 / 2, 9000 / 2, 8000),  # HGX B200 per GPU: BF16 4.5 PF*, INT8 9 PO*
        ("h100-nvl", 1671 / 2, 3341 / 2, 3900),  # H100 datasheet, NVL column (sparse *)
        ("h20", 148, 296, 4000),  # reported dense figures; no public NVIDIA datasheet
        ("a40", 149.7, 299.3, 696),  # A40 datasheet "149.7 | 299.4*", INT8 "299.3 | 598.6*"
        ("rtx-4000-ada", 306.8 / 4, 306.8 / 2, 360),  # "306.8 TFLOPS" is FP8 sparse
        ("mi300x", 1307.4, 2614.9, 5300),  # AMD MI300X data sheet, dense
    ],
)
def test_datasheet_spot_checks(card_id: str, bf16: float, int8: float, bandwidth: float) -> None:
    card = load_catalogue().get(card_id)
    assert card.bf16_tflops == pytest.approx(bf16, rel=0.002)
    assert card.int8_tops == pytest.approx(int8, rel=0.002)
    assert card.bandwidth_gb_s == bandwidth


def test_geforce_cards_keep_the_fp16_accumulate_figure_apart() -> None:
    # RTX 4090: FP16 with FP16 accumulate 330.3 dense; with FP32 accumulate (PyTorch) 165.2.
    card = load_catalogue().get("RTX 4090")
    assert card.fp16_acc16_tflops == 330.3
    assert card.fp16_tflops == card.bf16_tflops == 165.2
    assert load_catalogue().get("h100-sxm").fp16_acc16_tflops is None


def test_volta_and_turing_have_no_bf16_and_fall_back_to_fp16() -> None:
    catalogue = load_catalogue()
    for card_id in ("v100-sxm2-32gb", "t4"):
        card = catalogue.get(card_id)
        assert card.bf16_tflops is None
        tflops, label = card.matmul_tflops("bf16")
        assert tflops == card.fp16_tflops and "no BF16 tensor cores" in label
    assert catalogue.get("t4").matmul_tflops("fp32") == (8.1, "8.1 FP32 TFLOPS (non-tensor)")


def test_cards_of_the_sizes_the_old_check_called_typos_load() -> None:
    # 20, 94, 96, 180 and 192 GB are real cards; the check is a range, not a list of sizes.
    sizes = {card.id: card.vram_gb for card in CARDS}
    assert sizes["rtx-4000-ada"] == 20 and sizes["h100-nvl"] == 94 and sizes["h20"] == 96
    assert sizes["b200-sxm"] == 180 and sizes["mi300x"] == 192
    twelve = copy.deepcopy(_raw()["cards"][0])
    twelve.update(id="rtx-3060", vram_gb=12, bandwidth_gb_s=360)
    data = _raw()
    data["cards"] = [twelve]
    assert parse_catalogue(data).get("rtx-3060").vram_gb == 12


def test_non_nvidia_cards_are_marked() -> None:
    card = load_catalogue().get("MI300X")
    assert card.vendor == "AMD" and not card.runs_nvidia_smi
    assert card.interconnect == "Infinity Fabric 896 GB/s + PCIe Gen5 x16"
    assert all(c.runs_nvidia_smi for c in CARDS if c.id != "mi300x")


def test_link_bandwidth_per_direction() -> None:
    catalogue = load_catalogue()
    # SXM: half the NVLink total to any number of GPUs; bridged pairs only for two cards.
    assert catalogue.get("h100-sxm").link_bandwidth(8) == (450, "NVLink (half of 900 GB/s)")
    assert catalogue.get("rtx-3090").link_bandwidth(2)[0] == 56.25
    assert catalogue.get("rtx-3090").link_bandwidth(4) == (32, "PCIe Gen4 x16")
    assert catalogue.get("rtx-4090").link_bandwidth(2) == (32, "PCIe Gen4 x16")
    assert catalogue.get("rtx-5090").link_bandwidth(8) == (64, "PCIe Gen5 x16")


def test_interconnect_in_words() -> None:
    catalogue = load_catalogue()
    assert catalogue.get("h100-sxm").interconnect == "NVLink 900 GB/s + PCIe Gen5 x16"
    assert catalogue.get("rtx-4090").interconnect == "PCIe Gen4 x16, no NVLink"
    assert "bridge 112.5 GB/s" in catalogue.get("rtx-3090").interconnect


def test_lookup_by_id_or_name_as_people_type_it() -> None:
    catalogue = load_catalogue()
    assert catalogue.get("NVIDIA GeForce RTX 4090").id == "rtx-4090"
    assert catalogue.get("h100 sxm").id == "h100-sxm"
    assert catalogue.get("A100-80GB-SXM").id == "a100-80gb-sxm"
    with pytest.raises(ValidationError, match="Known cards: h200-sxm"):
        catalogue.get("Voodoo 2")


def test_cards_that_fit() -> None:
    fit = cards_that_fit(70)
    assert [card.vram_gb for card in fit] == sorted(card.vram_gb for card in fit)
    assert {card.vram_gb for card in fit} == {80, 94, 96, 141, 180, 192}
    assert fit[-1].id == "mi300x"
    assert len(cards_that_fit(16)) == len(CARDS)
    assert cards_that_fit(500) == []


def test_rank_by_job_cost_uses_decimal_prices_and_user_overrides() -> None:
    catalogue = load_catalogue()
    # A 10-hour job on every card with at least 48 GB, else it does not fit.
    ranked = catalogue.rank_by_job_cost(lambda card: 10 if card.vram_gb >= 48 else None)
    assert {job.card.vram_gb for job in ranked} == {c.vram_gb for c in CARDS if c.vram_gb >= 48}
    cheapest = ranked[0]
    assert cheapest.hours == Decimal("10.00")
    assert cheapest.low == cheapest.card.price.low * 10
    # 2.5 h on an L4 at the user's own CNY 3.20-4.10/h: 8.00-10.25.
    override = {"l4": PriceRange(Decimal("3.20"), Decimal("4.10"), "CNY")}
    jobs = catalogue.rank_by_job_cost(lambda c: 2.5 if c.id == "l4" else None, override)
    assert [(job.low, job.high, job.currency) for job in jobs] == [
        (Decimal("8.00"), Decimal("10.25"), "CNY")
    ]


def test_int8_explanation_names_the_training_columns() -> None:
    text = explain_int8_tops(load_catalogue().get("l4"))
    assert "BF16" in text and "sparse" in text
    assert "242.5 dense INT8 TOPS but only 121 dense BF16 TFLOPS, 300 GB/s and 24 GB" in text
    assert "training" in explain_int8_tops().lower()


def _broken(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(_raw())
    change(data["cards"][0])
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda c: c.update(int8_tops=c["int8_tops"] * 2), "sparse"),
        (lambda c: c.update(bf16_tflops=1979, fp16_tflops=1979), "sparse"),
        (lambda c: c.update(bf16_tflops=5000), "bf16_tflops = 5000, outside 8-2500"),
        (lambda c: c.update(bandwidth_gb_s=4.8), "bandwidth_gb_s"),
        (lambda c: c.update(vram_gb=14.1), "vram_gb"),
        (lambda c: c.update(vram_gb=1410), "vram_gb = 1410: expected whole GB from 4 to 512"),
        (lambda c: c.update(vram_gb=2), "vram_gb"),
        (lambda c: c.update(vram_gb=True), "vram_gb"),
        (lambda c: c.update(bandwidth_gb_s=480), "off by a factor of ten"),
        (lambda c: c.update(vendor="Voodoo"), "vendor"),
        (lambda c: c.update(form_factor="mxm"), "form_factor"),
        (lambda c: c.update(sources=[]), "no datasheet source"),
        (lambda c: c.update(sources=[{"name": "x", "url": "http://x"}]), "source"),
        (lambda c: c.update(price_usd_per_hour={"low": "5", "high": "2"}), "price"),
        (lambda c: c.update(price_usd_per_hour={"low": "cheap"}), "price"),
        (lambda c: c.update(bf16_tflops=None), "bf16_tflops null"),
        (lambda c: c.update(id="H200 SXM"), "valid card id"),
        (lambda c: c.pop("tdp_w"), "tdp_w"),
    ],
)
def test_bad_values_are_refused_on_load(change: Any, message: str) -> None:
    with pytest.raises(CatalogueError, match=message):
        parse_catalogue(_broken(change))


def test_duplicates_and_bad_files_are_refused(tmp_path: Path) -> None:
    data = _raw()
    data["cards"].append(data["cards"][0])
    with pytest.raises(CatalogueError, match="duplicate"):
        parse_catalogue(data)
    with pytest.raises(CatalogueError, match="schema"):
        parse_catalogue({"cards": []})
    bad = tmp_path / "gpus.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(CatalogueError, match="could not be read"):
        load_catalogue(bad)
    good = tmp_path / "mine.json"
    good.write_text(json.dumps(_raw()), encoding="utf-8")
    assert load_catalogue(good).get("t4").vram_gb == 16
