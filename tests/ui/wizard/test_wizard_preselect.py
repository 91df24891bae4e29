"""What the wizard proposes from the estimate: the card it preselects (the cheapest job on a card
the monitor and self-check can read, never the AMD card first) and the run length the billing
page prices (the job's GPU-hours on that card, not a fixed 20 h x 4 weeks)."""

from __future__ import annotations

import math
from decimal import Decimal

from tests.ui.wizard.test_wizard import _next, _wizard


def _to_gpu_page(wizard, qtbot, task: str, model: str = "qwen2.5-7b", context: int = 2048):
    while wizard.currentId() > 0:
        wizard.back()
    page = wizard.task_page
    page.task.setCurrentIndex(page.task.findData(task))
    page.model.setCurrentIndex(page.model.findData(model))
    page.context.setValue(context)
    _next(wizard, qtbot)
    _next(wizard, qtbot)
    return wizard.gpu_page


def test_the_preselected_card_is_the_cheapest_nvidia_job_for_the_estimate(ctx, qtbot):
    wizard = _wizard(ctx, qtbot)
    gpu = _to_gpu_page(wizard, qtbot, "qlora-4bit")
    ranked = [job.card for job in gpu.model.rows()]
    assert ranked[0].id == "mi300x"  # the cheapest job is on a card few platforms rent out
    nvidia = [card for card in ranked if card.runs_nvidia_smi]
    assert wizard.state.card is not None and wizard.state.card.id == nvidia[0].id
    assert gpu.table.selectionModel().selectedRows()[0].row() == ranked.index(nvidia[0])
    assert "AMD" not in gpu.verdict.text()
    # a new estimate gets its own proposal; the one made for the old estimate is not kept
    gpu = _to_gpu_page(wizard, qtbot, "inference")
    first = next(job.card for job in gpu.model.rows() if job.card.runs_nvidia_smi)
    assert wizard.state.card.id == first.id
    # a card the user chose stays chosen across Back, even the AMD one (it still fits)
    gpu.select("mi300x")
    gpu = _to_gpu_page(wizard, qtbot, "qlora-4bit")
    assert wizard.state.card.id == "mi300x"


def _job(wizard):
    card = wizard.state.card
    return next(job for job in wizard.gpu_page.model.rows() if job.card.id == card.id)


def test_the_billing_plan_starts_from_the_estimated_run(ctx, qtbot):
    wizard = _wizard(ctx, qtbot)
    gpu = _to_gpu_page(wizard, qtbot, "qlora-4bit")
    gpu.select("h100-sxm")
    job = _job(wizard)
    _next(wizard, qtbot)
    billing = wizard.billing_page
    assert (billing.text("hours_per_week"), billing.text("weeks")) == (f"{job.hours}", "1")
    advice = wizard.state.advice
    assert advice is not None and advice.plan.total_hours == job.hours
    on_demand = advice.option("on-demand").total.amount
    assert on_demand == (job.hours * Decimal("2.65")).quantize(Decimal("0.01"))
    assert f"{job.hours}" in billing.plan_note.text()
    # the user's own plan survives Back and Next while the estimate stays the same
    billing.fields["hours_per_week"].setText("30")
    wizard.back()
    _next(wizard, qtbot)
    assert billing.text("hours_per_week") == "30"
    # a job on several cards: GPU-hours are hours x GPUs, spread over whole weeks of 168 h
    gpu = _to_gpu_page(wizard, qtbot, "inference", "qwen2.5-72b", 32768)
    gpu.select("h100-sxm")
    job = _job(wizard)
    assert gpu.gpus_for("h100-sxm") == 3 and job.hours > 168
    _next(wizard, qtbot)
    weeks = int(billing.text("weeks"))
    assert weeks == math.ceil(job.hours / 168)
    assert Decimal(billing.text("hours_per_week")) <= 168
    assert wizard.state.advice.plan.total_hours >= job.hours
    assert wizard.state.advice.plan.total_hours - job.hours < Decimal("0.01") * weeks
    assert "3 ×" in billing.plan_note.text()
