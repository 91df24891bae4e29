"""The GPU page proposes how many cards of each kind the job needs, sized as `estimate` does."""

from __future__ import annotations

from tests.ui.wizard.test_wizard import _next, _wizard


def test_a_72b_model_at_a_long_prompt_is_proposed_on_several_cards(ctx, qtbot):
    wizard = _wizard(ctx, qtbot)
    task = wizard.task_page
    task.model.setCurrentIndex(task.model.findData("qwen2.5-72b"))
    task.context.setValue(32768)
    task.answer_tokens.setValue(2048)
    _next(wizard, qtbot)
    assert "on one GPU" in wizard.estimate_page.total.text()
    _next(wizard, qtbot)
    gpu = wizard.gpu_page
    counts = {job.card.id: gpu.gpus_for(job.card.id) for job in gpu.model.rows()}
    assert counts["h100-sxm"] == 3 and counts["h200-sxm"] == 2
    assert "rtx-4090" not in counts  # 8 of them do not hold it
    row = [job.card.id for job in gpu.model.rows()].index("h100-sxm")
    assert gpu.model.index(row, 1).data() == "3"
    gpu.select("h100-sxm")
    assert "the job needs 3 of them (layers)" in gpu.verdict.text()
    assert "fits" in gpu.verdict.text()
