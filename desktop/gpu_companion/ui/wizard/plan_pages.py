"""The planning half of the wizard: the task, its VRAM estimate, the card ranked by job cost, and
the billing mode with its break-even points. All arithmetic is core's; these pages show it."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from decimal import ROUND_HALF_UP, ROUND_UP, Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
    QWizardPage,
)

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.money import CURRENCIES
from gpu_companion.core.planning.billing import (
    BillingAdvice,
    PurchaseOption,
    RentalPrices,
    UsagePlan,
    advise,
)
from gpu_companion.core.planning.catalogue import (
    GpuSpec,
    JobCost,
    PriceRange,
    explain_int8_tops,
    load_catalogue,
)
from gpu_companion.core.planning.estimate import (
    SERVE_CONTEXT,
    TRAIN_CONTEXT,
    EstimateRequest,
    MemoryEstimate,
    MemoryLine,
    Precision,
    Task,
    Verdict,
    checkpointing_tip,
    estimate,
    estimate_memory,
    fewest_gpus,
    fit_verdict,
    job_hours,
    vendor_note,
)
from gpu_companion.core.planning.model_shapes import MODEL_PRESETS, ModelArch, model_from_config
from gpu_companion.ui.common.models import RowTableModel, row_table
from gpu_companion.ui.common.money_input import parse_user_amount

if TYPE_CHECKING:
    from gpu_companion.ui.wizard import FirstRentalWizard

CENT = Decimal("0.01")
HOURS_PER_WEEK = 168  # the billing plan's cap on GPU-hours per week

# Shown through QCoreApplication.translate("TaskPage", label)
TASK_LABELS = {
    Task.INFERENCE: str(QT_TRANSLATE_NOOP("TaskPage", "Inference (serve or generate)")),
    Task.LORA: str(QT_TRANSLATE_NOOP("TaskPage", "LoRA fine-tune")),
    Task.QLORA_8BIT: str(QT_TRANSLATE_NOOP("TaskPage", "QLoRA fine-tune, 8-bit base")),
    Task.QLORA_4BIT: str(QT_TRANSLATE_NOOP("TaskPage", "QLoRA fine-tune, 4-bit base")),
    Task.QLORA_2BIT: str(QT_TRANSLATE_NOOP("TaskPage", "QLoRA fine-tune, 2-bit base")),
    Task.FULL_MIXED: str(QT_TRANSLATE_NOOP("TaskPage", "Full fine-tune, Adam in mixed precision")),
    Task.FULL_BF16: str(QT_TRANSLATE_NOOP("TaskPage", "Full fine-tune, pure bf16")),
}
# How a job is split over several cards, where the identifier is a word (others are names: ddp,
# zero3, fsdp); shown through QCoreApplication.translate("GpuPage", word)
SPLIT_WORDS = {
    "layers": str(QT_TRANSLATE_NOOP("GpuPage", "layers")),
    "tp": str(QT_TRANSLATE_NOOP("GpuPage", "tp")),
}


class WizardPage(QWizardPage):
    """Answers stay in the widgets: going Back resets nothing (no registered fields to clear)."""

    why: QLabel  # "Next is not available yet: …", added by the wizard under the page's answers

    def wiz(self) -> FirstRentalWizard:
        from gpu_companion.ui.wizard import FirstRentalWizard

        w = self.wizard()
        assert isinstance(w, FirstRentalWizard)
        return w

    def cleanupPage(self) -> None:  # noqa: N802 - Qt's name
        """Keep what the user typed when they go back."""

    def blocked_reason(self) -> str:
        """Why Next (or Finish) is not available on this page, in the user's words."""
        return QCoreApplication.translate("WizardPage", "answer the questions above first.")

    @staticmethod
    def note(text: str = "", name: str = "") -> QLabel:
        label = QLabel(text)
        label.setWordWrap(True)
        if name:
            label.setObjectName(name)
        return label


def _model_label(arch: ModelArch) -> str:
    params = f"{arch.params / 1e9:.1f}"
    if arch.is_moe:
        return QCoreApplication.translate(
            "TaskPage", "{name} ({params} B params, MoE {active} B active)"
        ).format(name=arch.name, params=params, active=f"{arch.active_params / 1e9:.1f}")
    return QCoreApplication.translate("TaskPage", "{name} ({params} B params)").format(
        name=arch.name, params=params
    )


def _spin(low: int, high: int, value: int, suffix: str = "") -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    box.setSuffix(suffix)
    box.setGroupSeparatorShown(True)
    return box


class TaskPage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle(self.tr("What will the GPU do?"))
        self.setSubTitle(
            self.tr(
                "Three numbers decide the card: the VRAM floor, the speed you need, and "
                "whether you train or serve."
            )
        )
        form = QFormLayout(self)
        self.task = QComboBox()
        self.task.setObjectName("task")
        for task, label in TASK_LABELS.items():
            self.task.addItem(QCoreApplication.translate("TaskPage", label), task.value)
        self.model = QComboBox()
        self.model.setObjectName("model")
        self.models: dict[str, ModelArch] = dict(MODEL_PRESETS)
        for key, arch in MODEL_PRESETS.items():
            self.model.addItem(_model_label(arch), key)
        self.model.setCurrentIndex(self.model.findData("qwen2.5-7b"))
        self.config_button = QPushButton(self.tr("Load config.json…"))
        self.config_button.setObjectName("loadConfig")
        self.config_button.clicked.connect(self._pick_config)
        self.config_note = self.note(name="configNote")
        self.precision = QComboBox()
        self.precision.setObjectName("precision")
        self.context = _spin(128, 1 << 20, 4096, self.tr(" tokens"))
        self.context.setObjectName("context")
        self.batch = _spin(1, 4096, 1)
        self.batch.setObjectName("batch")
        self.lora_rank = _spin(1, 4096, 16)
        self.checkpointing = QCheckBox(self.tr("Gradient checkpointing (less memory, ~30% slower)"))
        self.checkpointing.setChecked(True)  # PEFT's QLoRA preparation and LLaMA-Factory do
        self.tokens = _spin(1, 1_000_000, 100, self.tr(" million tokens"))
        self.tokens.setObjectName("tokens")
        self.tokens.setToolTip(
            self.tr("Tokens to train on (all epochs) or to generate: sets job hours.")
        )
        form.addRow(self.tr("Task"), self.task)
        form.addRow(self.tr("Model"), self.model)
        form.addRow("", self.config_button)
        form.addRow("", self.config_note)
        form.addRow(self.tr("Weights stored as"), self.precision)
        form.addRow(self.tr("Context length"), self.context)
        form.addRow(self.tr("Batch or users at once"), self.batch)
        form.addRow(self.tr("LoRA rank"), self.lora_rank)
        form.addRow("", self.checkpointing)
        form.addRow(self.tr("Size of the job"), self.tokens)
        self.answer_tokens = _spin(1, 1 << 20, 500, self.tr(" tokens"))
        self.answer_tokens.setObjectName("answerTokens")
        self.target_seconds = _spin(0, 3600, 0, self.tr(" s"))
        self.target_seconds.setObjectName("targetSeconds")
        self.target_seconds.setSpecialValueText(self.tr("no target"))
        form.addRow(self.tr("Serving: one answer is"), self.answer_tokens)
        form.addRow(self.tr("Serving: answer within"), self.target_seconds)
        self.task.currentIndexChanged.connect(self._task_changed)
        self._task_changed()

    def _task_changed(self) -> None:
        task = self.selected_task()
        keep = self.precision.currentData()
        self.precision.clear()
        self.precision.addItem(self.tr("the task's usual one"), None)
        for p in Precision:
            try:
                estimate_memory(EstimateRequest(MODEL_PRESETS["qwen2.5-0.5b"], task, p))
            except UserError:
                continue
            self.precision.addItem(p.value, p.value)
        self.precision.setCurrentIndex(max(self.precision.findData(keep), 0))
        self.lora_rank.setEnabled(task.uses_lora)
        self.checkpointing.setEnabled(task is not Task.INFERENCE)
        self.answer_tokens.setEnabled(task is Task.INFERENCE)
        self.target_seconds.setEnabled(task is Task.INFERENCE)
        swap = {TRAIN_CONTEXT: SERVE_CONTEXT} if task is Task.INFERENCE else {}
        swap = swap or {SERVE_CONTEXT: TRAIN_CONTEXT}
        self.context.setValue(swap.get(self.context.value(), self.context.value()))

    def _pick_config(self) -> None:
        from PySide6.QtWidgets import QFileDialog

        path, _filter = QFileDialog.getOpenFileName(
            self, self.tr("A model's config.json"), "", self.tr("JSON (*.json)")
        )
        if path:
            self.load_config(Path(path))

    def load_config(self, path: Path) -> None:
        """Add the model a Hugging Face config.json describes and select it; say why if not."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise UserError(
                    self.tr("{name} is not a config.json object.").format(name=path.name)
                )
            arch = model_from_config(data, name=path.parent.name)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, UserError) as exc:
            self.config_note.setText(
                self.tr("Could not use {path}: {error}").format(path=path, error=exc)
            )
            return
        key = f"config:{path}"
        self.models[key] = arch
        if self.model.findData(key) < 0:
            self.model.addItem(_model_label(arch), key)
        self.model.setCurrentIndex(self.model.findData(key))
        self.config_note.setText(
            self.tr("From {path}: {model}.").format(path=path, model=_model_label(arch))
        )

    def selected_task(self) -> Task:
        return Task(self.task.currentData())

    def request(self) -> EstimateRequest:
        task, precision = self.selected_task(), self.precision.currentData()
        answer = self.answer_tokens.value() if task is Task.INFERENCE else 0
        return EstimateRequest(
            model=self.models[self.model.currentData()],
            task=task,
            precision=Precision(precision) if precision else None,
            context_tokens=self.context.value(),
            # serving: the context holds the answer too; the rest is prefilled at once
            output_tokens=answer if 0 < answer < self.context.value() else None,
            batch=self.batch.value(),
            lora_rank=self.lora_rank.value(),
            gradient_checkpointing=self.checkpointing.isChecked() and task is not Task.INFERENCE,
        )


class EstimatePage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle(self.tr("How much GPU memory the job needs"))
        self.setSubTitle(self.tr("Each line with its formula, so you can redo the sums."))
        lay = QVBoxLayout(self)
        self.total = self.note(name="estimateTotal")
        self.model: RowTableModel[MemoryLine] = RowTableModel(
            [
                (self.tr("Part"), lambda line: line.label),
                ("GiB", lambda line: f"{line.gib:,.2f}"),
                (self.tr("Formula"), lambda line: line.formula),
            ]
        )
        self.table = QTableView()
        self.table.setObjectName("estimateLines")
        self.table.setModel(self.model)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.error = self.note(name="estimateError")
        self.error.setStyleSheet("color: #c53030;")
        self.tip = self.note(name="checkpointingTip")
        self.tip.setStyleSheet("color: #2b6cb0;")
        self.use_checkpointing = QPushButton(self.tr("Use gradient checkpointing"))
        self.use_checkpointing.setObjectName("useCheckpointing")
        self.use_checkpointing.clicked.connect(self._turn_on_checkpointing)
        lay.addWidget(self.total)
        lay.addWidget(self.table)
        lay.addWidget(self.tip)
        lay.addWidget(self.use_checkpointing)
        lay.addWidget(self.error)

    def _turn_on_checkpointing(self) -> None:
        self.wiz().task_page.checkpointing.setChecked(True)
        self.initializePage()

    def initializePage(self) -> None:  # noqa: N802
        state = self.wiz().state
        try:
            state.memory = estimate_memory(self.wiz().task_page.request())
            self.error.clear()
        except UserError as exc:
            state.memory = None
            self.error.setText(str(exc))
            self.model.set_rows([])
            self.total.clear()
            self.tip.clear()
        else:
            mem = state.memory
            self.model.set_rows(list(mem.lines))
            self.total.setText(
                self.tr(
                    "<b>{gib} GiB</b> in total for {model} ({params} B params, weights in "
                    "{precision}) on one GPU. The next page lists the cards with how many of "
                    "each the job needs."
                ).format(
                    gib=f"{mem.total_gib:,.1f}",
                    model=mem.request.model.name,
                    params=f"{mem.params / 1e9:.2f}",
                    precision=mem.precision.value,
                )
            )
            tip = checkpointing_tip(mem, load_catalogue().cards)
            self.tip.setText(tip.text if tip else "")
        self.use_checkpointing.setVisible(bool(self.tip.text()))
        self.completeChanged.emit()

    def isComplete(self) -> bool:  # noqa: N802
        return self.wiz().state.memory is not None

    def blocked_reason(self) -> str:
        return self.tr("the job could not be estimated: go back and change what the message names.")


class GpuPage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle(self.tr("Choose the GPU"))
        self.setSubTitle(
            self.tr(
                "Cards that fit, cheapest job first: hours from the estimate × the card's "
                "typical hourly price range (or yours). * not NVIDIA: the monitor and self-check "
                "do not apply."
            )
        )
        lay = QVBoxLayout(self)
        self.sized: dict[str, MemoryEstimate] = {}  # card id -> the job on the fewest such cards
        self.chosen = False  # True once the user picked a card: Back and Next keep it
        self._proposing = False
        self.model: RowTableModel[JobCost] = RowTableModel(
            [
                (self.tr("Card"), lambda j: j.card.name + ("" if j.card.runs_nvidia_smi else " *")),
                (self.tr("GPUs"), lambda j: str(self.gpus_for(j.card.id))),
                (self.tr("VRAM"), lambda j: f"{j.card.vram_gb} GB"),
                ("BF16/FP16 TFLOPS", lambda j: f"{j.card.bf16_tflops or j.card.fp16_tflops:g}"),
                (self.tr("Bandwidth"), lambda j: f"{j.card.bandwidth_gb_s:,g} GB/s"),
                (self.tr("Interconnect"), lambda j: j.card.interconnect),
                (self.tr("GPU-hours"), lambda j: f"{j.hours:,}"),
                (self.tr("Job cost"), lambda j: f"{j.currency} {j.low:,}–{j.high:,}"),
            ]
        )
        self.table = row_table(self.model, "gpuRanking")
        self.table.selectionModel().selectionChanged.connect(self._selected)
        self.verdict = self.note(name="fitVerdict")
        self.int8 = self.note(name="int8Explanation")
        self.prices: dict[str, PriceRange] = {}
        price_row = QWidget()
        price_form = QFormLayout(price_row)
        price_form.setContentsMargins(0, 0, 0, 0)
        self.own_price = QLineEdit()
        self.own_price.setObjectName("ownPrice")
        self.own_price.setPlaceholderText(self.tr("the catalogue's typical range"))
        self.own_currency = QComboBox()
        self.own_currency.addItems(list(CURRENCIES))
        self.own_price.editingFinished.connect(self.apply_own_price)
        price_form.addRow(self.tr("Your price per GPU-hour for the selected card"), self.own_price)
        price_form.addRow(self.tr("Currency"), self.own_currency)
        self.price_note = self.note(name="ownPriceNote")
        lay.addWidget(self.table)
        lay.addWidget(self.verdict)
        lay.addWidget(price_row)
        lay.addWidget(self.price_note)
        lay.addWidget(self.int8)

    def initializePage(self) -> None:  # noqa: N802
        state = self.wiz().state
        mem = state.memory
        assert mem is not None
        tokens = self.wiz().task_page.tokens.value() * 1_000_000
        catalogue = load_catalogue()
        self.sized = {}
        for card in catalogue.cards:
            sized = fewest_gpus(mem.request, card)
            if sized is not None:
                self.sized[card.id] = sized
        ranked = catalogue.rank_by_job_cost(self._gpu_hours(tokens), self.prices)
        keep = state.card.id if state.card and self.chosen else None
        self._proposing = True  # the selection set here is the page's proposal, not the user's
        try:
            self.model.set_rows(ranked)
            ids = [job.card.id for job in ranked]
            # the cheapest job on a card the monitor and self-check read (NVIDIA): a card few
            # platforms rent out is never the proposal, though the user may still choose it
            proposal = next((job.card.id for job in ranked if job.card.runs_nvidia_smi), None)
            self.chosen = keep in ids
            if keep in ids:
                self.select(keep)
            elif proposal is not None:
                self.select(proposal)
            else:
                self.table.clearSelection()
                state.card = None
        finally:
            self._proposing = False
        if not ranked:
            self.verdict.setText(
                self.tr(
                    "Not even 8 of any card in the catalogue hold the job ({gib} GiB on one GPU): "
                    "go back and try int4 weights, LoRA/QLoRA, gradient checkpointing or a "
                    "shorter context."
                ).format(gib=f"{mem.total_gib:,.1f}")
            )
        elif state.card is None:
            self.verdict.setText(
                self.tr(
                    "Only cards marked * (not NVIDIA) hold this job: choose one in the table if "
                    "your platform rents it out."
                )
            )
        self.completeChanged.emit()

    def job(self, card_id: str) -> JobCost | None:
        """The job's GPU-hours and cost on this card as ranked (None before the page is shown)."""
        return next((job for job in self.model.rows() if job.card.id == card_id), None)

    def gpus_for(self, card_id: str) -> int:
        """How many cards of this kind the job needs (1 until the page is shown)."""
        sized = self.sized.get(card_id)
        return sized.request.gpus if sized else 1

    def _gpu_hours(self, tokens: int) -> Callable[[GpuSpec], float | None]:
        def hours(card: GpuSpec) -> float | None:
            sized = self.sized.get(card.id)
            wall = job_hours(sized, card, tokens) if sized else None
            return None if wall is None or sized is None else wall * sized.request.gpus

        return hours

    def select(self, card_id: str) -> None:
        ids = [job.card.id for job in self.model.rows()]
        self.table.selectRow(ids.index(card_id))

    def _selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        state = self.wiz().state
        state.card = self.model.row(rows[0].row()).card if rows else None
        if not self._proposing:
            self.chosen = state.card is not None
        if state.card is not None and state.memory is not None:
            self.verdict.setText(" ".join(v.text for v in self._verdicts(state.card)))
            self.int8.setText(explain_int8_tops(state.card))
            own = self.prices.get(state.card.id)
            self.own_price.setText(f"{own.low}" if own else "")
            if own:
                self.own_currency.setCurrentText(own.currency)
        self.completeChanged.emit()

    def _verdicts(self, card: GpuSpec) -> list[Verdict]:
        """Fit, and for serving with a time target the answer's time on this card."""
        task = self.wiz().task_page
        base = self.wiz().state.memory
        assert base is not None
        mem = self.sized.get(card.id, base)
        target = task.target_seconds.value()
        vendor = vendor_note(card)
        note = [] if vendor is None else [vendor]
        if mem.request.gpus > 1:
            how = mem.request.split.value
            how = (
                QCoreApplication.translate("GpuPage", SPLIT_WORDS[how])
                if how in SPLIT_WORDS
                else how
            )
            note.insert(
                0,
                Verdict(
                    True,
                    self.tr(
                        "One {card} is too small: the job needs {gpus} of them ({how})."
                    ).format(card=card.name, gpus=mem.request.gpus, how=how),
                ),
            )
        if mem.request.task is not Task.INFERENCE or not target:
            return [fit_verdict(mem, card), *note]
        try:
            result = estimate(
                mem.request, card, output_tokens=task.answer_tokens.value(), target_seconds=target
            )
        except UserError as exc:
            return [fit_verdict(mem, card), Verdict(False, str(exc))]
        return [result.verdicts[0], result.verdicts[-1], *note]

    def apply_own_price(self) -> None:
        """Rank again with the user's hourly price for the selected card (empty: catalogue's)."""
        card = self.wiz().state.card
        if card is None:
            return
        text = self.own_price.text().strip()
        if not text:
            self.prices.pop(card.id, None)
            self.price_note.clear()
        else:
            try:
                price = parse_user_amount(text, self.tr("the price"))
                if not price > 0:
                    raise ValueError(self.tr("the price must be above 0"))
            except ValueError as exc:
                self.price_note.setText(self.tr("Not used: {error}.").format(error=exc))
                return
            currency = self.own_currency.currentText()
            self.prices[card.id] = PriceRange(price, price, currency)
            self.price_note.setText(
                self.tr("Ranked with your {currency} {price}/h for the {card}.").format(
                    currency=currency, price=price, card=card.name
                )
            )
        self.chosen = True  # the user priced this card: re-ranking keeps it selected
        self.initializePage()

    def isComplete(self) -> bool:  # noqa: N802
        return self.wiz().state.card is not None

    def blocked_reason(self) -> str:
        if self.model.rowCount() == 0:
            return self.tr("no card fits this job: go back and make it smaller.")
        return self.tr("choose a card in the table.")


class BillingPage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle(self.tr("How to pay for it"))
        self.setSubTitle(
            self.tr(
                "On demand, spot, a monthly plan or buying the card: each option's cost "
                "for your plan and where one starts to beat another."
            )
        )
        outer = QVBoxLayout(self)
        form_box = QWidget()
        form = QFormLayout(form_box)
        self.fields: dict[str, QLineEdit] = {}
        self.labels: dict[str, str] = {}
        self.currency = QComboBox()
        self.currency.addItems(list(CURRENCIES))
        form.addRow(self.tr("Currency"), self.currency)
        self.plan_note = self.note(name="planNote")
        self.planned: tuple[str, Decimal, int] | None = None  # the run the hours were set from
        form.addRow(self.plan_note)
        for name, label, value in (
            ("hours_per_week", self.tr("GPU hours per week"), "20"),
            ("weeks", self.tr("For how many weeks"), "4"),
            ("on_demand", self.tr("On-demand price per GPU-hour"), ""),
            ("spot", self.tr("Spot price per GPU-hour (optional)"), ""),
            ("monthly", self.tr("Monthly plan price per GPU (optional)"), ""),
            ("card_price", self.tr("Buying: card price (optional)"), ""),
            ("power_w", self.tr("Buying: power draw, W"), ""),
            ("electricity", self.tr("Buying: electricity per kWh"), "0.25"),
        ):
            edit = QLineEdit(value)
            edit.setObjectName(name)
            edit.textChanged.connect(self.recompute)
            self.fields[name], self.labels[name] = edit, label
            form.addRow(label, edit)
        self.currency.currentIndexChanged.connect(self.recompute)
        self.rent_as = QComboBox()
        self.rent_as.setObjectName("rentAs")
        self.rent_as.currentIndexChanged.connect(self._rent_as_changed)
        form.addRow(self.tr("Meter this rental as"), self.rent_as)
        self.result = QTextBrowser()
        self.result.setObjectName("billingAdvice")
        outer.addWidget(form_box)
        outer.addWidget(self.result, 1)
        self.advice_ok = False

    def initializePage(self) -> None:  # noqa: N802
        card = self.wiz().state.card
        if card is not None and card.id != self.wiz().state.priced_card:
            self.wiz().state.priced_card = card.id
            price = self.wiz().gpu_page.prices.get(card.id, card.price)
            mid = (price.low + price.high) / 2
            self.fields["on_demand"].setText(f"{mid:.2f}")
            self.fields["power_w"].setText(str(card.tdp_w))
            self.currency.setCurrentText(price.currency)
        if card is not None:
            self._plan_the_run(card)
        self.recompute()

    def _plan_the_run(self, card: GpuSpec) -> None:
        """The plan starts as one run of the estimated job on the chosen card: its GPU-hours (wall
        hours x GPUs), in whole weeks of at most 168 h. Set again only when the estimate or the
        card changes, so the user's own plan survives Back and Next."""
        gpu_page = self.wiz().gpu_page
        job, gpus = gpu_page.job(card.id), gpu_page.gpus_for(card.id)
        if job is None or (card.id, job.hours, gpus) == self.planned:
            return
        self.planned = (card.id, job.hours, gpus)
        hours = max(job.hours, CENT)
        weeks = math.ceil(hours / HOURS_PER_WEEK)
        per_week = (hours / weeks).quantize(CENT, ROUND_UP)
        self.fields["hours_per_week"].setText(f"{per_week}")
        self.fields["weeks"].setText(str(weeks))
        wall = (hours / gpus).quantize(Decimal("0.1"), ROUND_HALF_UP)
        if gpus == 1:
            text = self.tr(
                "From the estimate: one run takes about {hours} GPU-hours on one {card}. "
                "Change the hours below if you will run the job more than once."
            ).format(hours=hours, card=card.name)
        else:
            text = self.tr(
                "From the estimate: one run takes about {hours} GPU-hours ({gpus} × {card} for "
                "{wall} h). Change the hours below if you will run the job more than once."
            ).format(hours=hours, gpus=gpus, card=card.name, wall=wall)
        self.plan_note.setText(text)

    def text(self, name: str) -> str:
        return self.fields[name].text().strip()

    def number(self, name: str, default: str | None = None) -> Decimal | None:
        """A field read in the user's locale ("0,39" is 0.39); None when empty and no default."""
        text = self.text(name) or default
        return None if text is None else parse_user_amount(text, f"'{self.labels[name]}'")

    def recompute(self) -> None:
        try:
            plan = UsagePlan.from_weeks(self.text("hours_per_week"), self.text("weeks"))
            prices = RentalPrices(
                self.currency.currentText(),
                self.number("on_demand", "0") or Decimal(0),
                self.number("spot"),
                self.number("monthly"),
            )
            buy = None
            if self.text("card_price"):
                buy = PurchaseOption(
                    self.number("card_price") or Decimal(0),
                    self.number("power_w", "0") or Decimal(0),
                    self.number("electricity", "0") or Decimal(0),
                )
            advice = advise(plan, prices, buy, first_run=True)
        except (UserError, ArithmeticError, ValueError) as exc:
            self.advice_ok = False
            self.wiz().state.advice, self.wiz().state.prices = None, None
            self.result.setHtml(_error_html(str(exc)))
        else:
            self.advice_ok = True
            self.wiz().state.advice, self.wiz().state.prices = advice, prices
            self.result.setHtml(_advice_html(advice))
        self._offer_modes()
        self.completeChanged.emit()

    def _offer_modes(self) -> None:
        """The billing modes priced above; the one chosen is how the ledger meters the rental."""
        prices = self.wiz().state.prices
        modes = [("on-demand", self.tr("On demand (per hour)"))]
        if prices is not None and prices.spot_per_hour is not None:
            modes.append(("spot", self.tr("Spot (per hour, interruptible)")))
        if prices is not None and prices.monthly_price is not None:
            modes.append(("monthly", self.tr("Monthly plan (per 30 days)")))
        if prices is None:
            return  # a typo in a price: keep the choice until the prices read again
        state = self.wiz().state
        if state.billing_mode not in [key for key, _ in modes]:
            state.billing_mode = "on-demand"
        self.rent_as.blockSignals(True)
        self.rent_as.clear()
        for key, text in modes:
            self.rent_as.addItem(text, key)
        self.rent_as.setCurrentIndex(self.rent_as.findData(state.billing_mode))
        self.rent_as.blockSignals(False)

    def _rent_as_changed(self) -> None:
        self.wiz().state.billing_mode = self.rent_as.currentData() or "on-demand"

    def isComplete(self) -> bool:  # noqa: N802
        return self.advice_ok

    def blocked_reason(self) -> str:
        return self.tr(
            "the prices above cannot be compared yet: correct the one the message names."
        )


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _error_html(text: str) -> str:
    return f"<p style='color:#c53030'>{_html(text)}</p>"


# Break-even units as core names them; shown through QCoreApplication.translate("BillingPage", …)
UNIT_WORDS = {
    "hours/month": str(QT_TRANSLATE_NOOP("BillingPage", "hours/month")),
    "months": str(QT_TRANSLATE_NOOP("BillingPage", "months")),
}


def _advice_html(advice: BillingAdvice) -> str:
    translate = QCoreApplication.translate
    parts = [f"<p><b>{_html(advice.recommendation)}</b></p>"]
    parts += [f"<p style='color:#b7791f'>⚠ {_html(w)}</p>" for w in advice.warnings]
    for option in advice.options:
        lines = "<br>".join(_html(line) for line in option.lines)
        head = translate("BillingPage", "{option}: {total}").format(
            option=option.label, total=option.total
        )
        parts.append(f"<p><b>{_html(head)}</b><br>{lines}</p>")
    for be in advice.break_evens:
        if be.value is None:
            value = translate("BillingPage", "never")
        else:
            unit = be.unit
            if unit in UNIT_WORDS:
                unit = translate("BillingPage", UNIT_WORDS[unit])
            value = translate("BillingPage", "{value} {unit}").format(
                value=f"{be.value:,}", unit=unit
            )
        lines = "<br>".join(_html(line) for line in be.lines)
        parts.append(f"<p><b>{_html(be.label)} {_html(value)}</b><br>{lines}</p>")
    return "".join(parts)
