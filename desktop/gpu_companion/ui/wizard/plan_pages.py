"""The planning half of the wizard: the task, its VRAM estimate, the card ranked by job cost, and
the billing mode with its break-even points. All arithmetic is core's; these pages show it."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from PySide6.QtWidgets import (
    QAbstractItemView,
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
from gpu_companion.core.hosts.registry import CURRENCIES
from gpu_companion.core.planning.billing import (
    BillingAdvice,
    PurchaseOption,
    RentalPrices,
    UsagePlan,
    advise,
)
from gpu_companion.core.planning.catalogue import JobCost, explain_int8_tops, load_catalogue
from gpu_companion.core.planning.checkpointing import checkpointing_hint
from gpu_companion.core.planning.estimate import (
    EstimateRequest,
    MemoryLine,
    Precision,
    Task,
    estimate_memory,
    fit_verdict,
    job_hours,
)
from gpu_companion.core.planning.model_shapes import MODEL_PRESETS
from gpu_companion.ui.common.models import RowTableModel

if TYPE_CHECKING:
    from gpu_companion.ui.wizard import FirstRentalWizard

TASK_LABELS = {
    Task.INFERENCE: "Inference (serve or generate)",
    Task.LORA: "LoRA fine-tune",
    Task.QLORA_8BIT: "QLoRA fine-tune, 8-bit base",
    Task.QLORA_4BIT: "QLoRA fine-tune, 4-bit base",
    Task.FULL_MIXED: "Full fine-tune, Adam in mixed precision",
    Task.FULL_BF16: "Full fine-tune, pure bf16",
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
        return "answer the questions above first."

    @staticmethod
    def note(text: str = "", name: str = "") -> QLabel:
        label = QLabel(text)
        label.setWordWrap(True)
        if name:
            label.setObjectName(name)
        return label


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
        self.setTitle("What will the GPU do?")
        self.setSubTitle(
            "Three numbers decide the card: the VRAM floor, the speed you need, and "
            "whether you train or serve."
        )
        form = QFormLayout(self)
        self.task = QComboBox()
        self.task.setObjectName("task")
        for task, label in TASK_LABELS.items():
            self.task.addItem(label, task.value)
        self.model = QComboBox()
        self.model.setObjectName("model")
        for key, arch in MODEL_PRESETS.items():
            self.model.addItem(f"{arch.name} ({arch.params / 1e9:.1f} B params)", key)
        self.model.setCurrentIndex(self.model.findData("qwen2.5-7b"))
        self.precision = QComboBox()
        self.precision.setObjectName("precision")
        self.context = _spin(128, 1 << 20, 4096, " tokens")
        self.context.setObjectName("context")
        self.batch = _spin(1, 4096, 1)
        self.batch.setObjectName("batch")
        self.lora_rank = _spin(1, 4096, 16)
        self.checkpointing = QCheckBox("Gradient checkpointing (less memory, ~30% slower)")
        self.tokens = _spin(1, 1_000_000, 100, " million tokens")
        self.tokens.setObjectName("tokens")
        self.tokens.setToolTip("Tokens to train on (all epochs) or to generate: sets job hours.")
        form.addRow("Task", self.task)
        form.addRow("Model", self.model)
        form.addRow("Weights stored as", self.precision)
        form.addRow("Context length", self.context)
        form.addRow("Batch or users at once", self.batch)
        form.addRow("LoRA rank", self.lora_rank)
        form.addRow("", self.checkpointing)
        form.addRow("Size of the job", self.tokens)
        self.task.currentIndexChanged.connect(self._task_changed)
        self._task_changed()

    def _task_changed(self) -> None:
        task = self.selected_task()
        keep = self.precision.currentData()
        self.precision.clear()
        self.precision.addItem("the task's usual one", None)
        for p in Precision:
            try:
                estimate_memory(EstimateRequest(MODEL_PRESETS["qwen2.5-0.5b"], task, p))
            except UserError:
                continue
            self.precision.addItem(p.value, p.value)
        self.precision.setCurrentIndex(max(self.precision.findData(keep), 0))
        self.lora_rank.setEnabled(task.uses_lora)
        self.checkpointing.setEnabled(task is not Task.INFERENCE)

    def selected_task(self) -> Task:
        return Task(self.task.currentData())

    def request(self) -> EstimateRequest:
        task, precision = self.selected_task(), self.precision.currentData()
        return EstimateRequest(
            model=MODEL_PRESETS[self.model.currentData()],
            task=task,
            precision=Precision(precision) if precision else None,
            context_tokens=self.context.value(),
            batch=self.batch.value(),
            lora_rank=self.lora_rank.value(),
            gradient_checkpointing=self.checkpointing.isChecked() and task is not Task.INFERENCE,
        )


class EstimatePage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle("How much GPU memory the job needs")
        self.setSubTitle("Each line with its formula, so you can redo the sums.")
        lay = QVBoxLayout(self)
        self.total = self.note(name="estimateTotal")
        self.model: RowTableModel[MemoryLine] = RowTableModel(
            [
                ("Part", lambda line: line.label),
                ("GiB", lambda line: f"{line.gib:,.2f}"),
                ("Formula", lambda line: line.formula),
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
        self.checkpointing = self.note(name="checkpointingHint")
        self.use_checkpointing = QPushButton("Use gradient checkpointing")
        self.use_checkpointing.setObjectName("useCheckpointing")
        self.use_checkpointing.clicked.connect(self._turn_on_checkpointing)
        lay.addWidget(self.total)
        lay.addWidget(self.table)
        lay.addWidget(self.checkpointing)
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
            self.checkpointing.clear()
        else:
            mem = state.memory
            self.model.set_rows(list(mem.lines))
            self.total.setText(
                f"<b>{mem.total_gib:,.1f} GiB</b> in total for {mem.request.model.name} "
                f"({mem.params / 1e9:.2f} B params, weights in {mem.precision.value}). Pick a "
                "card with more memory than that; the next page lists the ones that fit."
            )
            self.checkpointing.setText(checkpointing_hint(mem))
        self.use_checkpointing.setVisible(bool(self.checkpointing.text()))
        self.completeChanged.emit()

    def isComplete(self) -> bool:  # noqa: N802
        return self.wiz().state.memory is not None

    def blocked_reason(self) -> str:
        return "the job could not be estimated: go back and change what the message names."


class GpuPage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle("Choose the GPU")
        self.setSubTitle(
            "Cards that fit, cheapest job first: hours from the estimate × the "
            "card's typical hourly price range."
        )
        lay = QVBoxLayout(self)
        self.model: RowTableModel[JobCost] = RowTableModel(
            [
                ("Card", lambda j: j.card.name),
                ("VRAM", lambda j: f"{j.card.vram_gb} GB"),
                ("BF16/FP16 TFLOPS", lambda j: f"{j.card.bf16_tflops or j.card.fp16_tflops:g}"),
                ("Bandwidth", lambda j: f"{j.card.bandwidth_gb_s:,g} GB/s"),
                ("Interconnect", lambda j: j.card.interconnect),
                ("Job hours", lambda j: f"{j.hours:,}"),
                ("Job cost", lambda j: f"{j.currency} {j.low:,}–{j.high:,}"),
            ]
        )
        self.table = QTableView()
        self.table.setObjectName("gpuRanking")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.selectionModel().selectionChanged.connect(self._selected)
        self.verdict = self.note(name="fitVerdict")
        self.int8 = self.note(name="int8Explanation")
        lay.addWidget(self.table)
        lay.addWidget(self.verdict)
        lay.addWidget(self.int8)

    def initializePage(self) -> None:  # noqa: N802
        state = self.wiz().state
        mem = state.memory
        assert mem is not None
        tokens = self.wiz().task_page.tokens.value() * 1_000_000
        ranked = load_catalogue().rank_by_job_cost(lambda card: job_hours(mem, card, tokens))
        keep = state.card.id if state.card else None
        self.model.set_rows(ranked)
        ids = [job.card.id for job in ranked]
        if ranked:
            self.select(keep if keep in ids else ids[0])
        else:
            state.card = None
            self.verdict.setText(
                f"No card in the catalogue has {mem.total_gib:,.1f} GiB: go back and try int4 "
                "weights, LoRA/QLoRA, gradient checkpointing or a shorter context. "
                + checkpointing_hint(mem)
            )
        self.completeChanged.emit()

    def select(self, card_id: str) -> None:
        ids = [job.card.id for job in self.model.rows()]
        self.table.selectRow(ids.index(card_id))

    def _selected(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        state = self.wiz().state
        state.card = self.model.row(rows[0].row()).card if rows else None
        if state.card is not None and state.memory is not None:
            hint = checkpointing_hint(state.memory, state.card)
            self.verdict.setText(
                " ".join(filter(None, [fit_verdict(state.memory, state.card).text, hint]))
            )
            self.int8.setText(explain_int8_tops(state.card))
        self.completeChanged.emit()

    def isComplete(self) -> bool:  # noqa: N802
        return self.wiz().state.card is not None

    def blocked_reason(self) -> str:
        if self.model.rowCount() == 0:
            return "no card fits this job: go back and make it smaller."
        return "choose a card in the table."


class BillingPage(WizardPage):
    def __init__(self) -> None:
        super().__init__()
        self.setTitle("How to pay for it")
        self.setSubTitle(
            "On demand, spot, a monthly plan or buying the card: each option's cost "
            "for your plan and where one starts to beat another."
        )
        outer = QVBoxLayout(self)
        form_box = QWidget()
        form = QFormLayout(form_box)
        self.fields: dict[str, QLineEdit] = {}
        self.currency = QComboBox()
        self.currency.addItems(list(CURRENCIES))
        form.addRow("Currency", self.currency)
        for name, label, value in (
            ("hours_per_week", "GPU hours per week", "20"),
            ("weeks", "For how many weeks", "4"),
            ("on_demand", "On-demand price per hour", ""),
            ("spot", "Spot price per hour (optional)", ""),
            ("monthly", "Monthly plan price (optional)", ""),
            ("card_price", "Buying: card price (optional)", ""),
            ("power_w", "Buying: power draw, W", ""),
            ("electricity", "Buying: electricity per kWh", "0.25"),
        ):
            edit = QLineEdit(value)
            edit.setObjectName(name)
            edit.textChanged.connect(self.recompute)
            self.fields[name] = edit
            form.addRow(label, edit)
        self.currency.currentIndexChanged.connect(self.recompute)
        self.result = QTextBrowser()
        self.result.setObjectName("billingAdvice")
        outer.addWidget(form_box)
        outer.addWidget(self.result, 1)
        self.advice_ok = False

    def initializePage(self) -> None:  # noqa: N802
        card = self.wiz().state.card
        if card is not None and card.id != self.wiz().state.priced_card:
            self.wiz().state.priced_card = card.id
            mid = (card.price.low + card.price.high) / 2
            self.fields["on_demand"].setText(f"{mid:.2f}")
            self.fields["power_w"].setText(str(card.tdp_w))
            self.currency.setCurrentText(card.price.currency)
        self.recompute()

    def text(self, name: str) -> str:
        return self.fields[name].text().strip()

    def recompute(self) -> None:
        try:
            plan = UsagePlan.from_weeks(self.text("hours_per_week"), self.text("weeks"))
            prices = RentalPrices(
                self.currency.currentText(),
                Decimal(self.text("on_demand") or "0"),
                Decimal(self.text("spot")) if self.text("spot") else None,
                Decimal(self.text("monthly")) if self.text("monthly") else None,
            )
            buy = None
            if self.text("card_price"):
                buy = PurchaseOption(
                    Decimal(self.text("card_price")),
                    Decimal(self.text("power_w") or "0"),
                    Decimal(self.text("electricity") or "0"),
                )
            advice = advise(plan, prices, buy, first_run=True)
        except (UserError, ArithmeticError, ValueError) as exc:
            self.advice_ok = False
            self.wiz().state.advice, self.wiz().state.prices = None, None
            self.result.setHtml(f"<p style='color:#c53030'>{_html(str(exc))}</p>")
        else:
            self.advice_ok = True
            self.wiz().state.advice, self.wiz().state.prices = advice, prices
            self.result.setHtml(_advice_html(advice))
        self.completeChanged.emit()

    def isComplete(self) -> bool:  # noqa: N802
        return self.advice_ok

    def blocked_reason(self) -> str:
        return "the prices above cannot be compared yet: correct the one the message names."


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _advice_html(advice: BillingAdvice) -> str:
    parts = [f"<p><b>{_html(advice.recommendation)}</b></p>"]
    parts += [f"<p style='color:#b7791f'>⚠ {_html(w)}</p>" for w in advice.warnings]
    for option in advice.options:
        lines = "<br>".join(_html(line) for line in option.lines)
        parts.append(f"<p><b>{_html(option.label)}: {option.total}</b><br>{lines}</p>")
    for be in advice.break_evens:
        value = "never" if be.value is None else f"{be.value:,} {be.unit}"
        lines = "<br>".join(_html(line) for line in be.lines)
        parts.append(f"<p><b>{_html(be.label)} {value}</b><br>{lines}</p>")
    return "".join(parts)
