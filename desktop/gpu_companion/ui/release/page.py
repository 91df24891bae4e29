"""Release page: a host's backup checklist with live state and evidence, and the Release button
that stays disabled until every item has passed and none is stale."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, QTimer
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.autorelease.service import load_policy
from gpu_companion.core.common.errors import UserError
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.release import (
    ChecklistItem,
    ItemState,
    ItemUpdate,
    ReleaseChecklist,
    ReleaseContext,
)
from gpu_companion.core.release.items import ManualConfirmation
from gpu_companion.core.release.leftovers import listed_path
from gpu_companion.ui.common.page import EmptyStatePage, Navigator
from gpu_companion.ui.common.plain_text import tooltip_text
from gpu_companion.ui.common.widgets import EmptyState
from gpu_companion.ui.common.worker import Worker, run_in_thread
from gpu_companion.ui.release.dialogs import ChecklistSettingsDialog, OverrideDialog
from gpu_companion.ui.release.flow import ReleaseFlow
from gpu_companion.ui.release.model import (
    ChecklistModel,
    describe_record,
    record_details,
    state_word,
    stream,
    verdict,
)
from gpu_companion.ui.release.policy_dialog import PolicyDialog, policy_summary

if TYPE_CHECKING:
    from gpu_companion.services import Services


STATE_WORDS = {
    "released": str(QT_TRANSLATE_NOOP("ReleasePage", "released")),
    "stopped": str(QT_TRANSLATE_NOOP("ReleasePage", "stopped")),
    "gone": str(QT_TRANSLATE_NOOP("ReleasePage", "gone at the provider")),
}


class ReleasePage(ReleaseFlow, EmptyStatePage):
    key, title, icon_name = "release", "Release", "release"
    staleness_interval_ms = 60_000

    def __init__(self, ctx: Services, nav: Navigator, parent: QWidget | None = None) -> None:
        super().__init__(ctx, nav, parent)
        self.wiring = ctx.release
        self.checklists: dict[str, ReleaseChecklist] = {}
        self.worker: Worker | None = None
        self.log: list[str] = []
        self.progress = ""  # the last progress line of a running copy
        self.empty = EmptyState(
            "release",
            self.tr("No instance to release"),
            self.tr(
                "Before you release a rented instance, its backup checklist must pass here: "
                "checkpoints synced, artefacts archived, nothing left behind, no work running. "
                "Add a host to start."
            ),
            [(self.tr("Add a host"), lambda: nav.navigate("hosts"))],
        )
        self.stack.addWidget(self.empty)
        content = QWidget()
        lay = QVBoxLayout(content)
        bar = QHBoxLayout()
        bar.addWidget(QLabel(self.tr("Host")))
        self.host_box = QComboBox()
        self.host_box.setMinimumWidth(220)
        self.host_box.currentIndexChanged.connect(self._host_changed)
        bar.addWidget(self.host_box)
        self.settings_btn = QPushButton(self.tr("Checklist settings…"))
        self.settings_btn.clicked.connect(self.edit_settings)
        self.run_all_btn = QPushButton(self.tr("Run all"))
        self.run_all_btn.clicked.connect(self.run_all)
        self.policy_btn = QPushButton(self.tr("Auto-release…"))
        self.policy_btn.setObjectName("autoreleaseButton")
        self.policy_btn.clicked.connect(self.edit_policy)
        bar.addWidget(self.settings_btn)
        bar.addWidget(self.policy_btn)
        bar.addStretch(1)
        bar.addWidget(self.run_all_btn)
        lay.addLayout(bar)
        self.policy_label = QLabel()
        self.policy_label.setObjectName("autoreleaseSummary")
        self.policy_label.setWordWrap(True)
        lay.addWidget(self.policy_label)

        self.model = ChecklistModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._show_selected())
        self.detail = QPlainTextEdit()
        self.detail.setReadOnly(True)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setSizes([260, 160])
        lay.addWidget(split, 1)

        actions = QHBoxLayout()
        self.check_btn = QPushButton(self.tr("Check again"))
        self.check_btn.clicked.connect(lambda: self.run_item(self._selected_key()))
        self.fix_btn = QPushButton(self.tr("Fix"))
        self.fix_btn.clicked.connect(lambda: self.fix(self._selected_key()))
        self.confirm_btn = QPushButton(self.tr("Confirm…"))
        self.confirm_btn.clicked.connect(self.confirm_selected)
        self.dismiss_btn = QPushButton(self.tr("Dismiss a file…"))
        self.dismiss_btn.clicked.connect(self.dismiss_selected)
        self.cancel_btn = QPushButton(self.tr("Cancel copy"))
        self.cancel_btn.setObjectName("cancelCopy")
        self.cancel_btn.setToolTip(
            self.tr("Cancel the transfer job; what arrived is kept and resumes.")
        )
        self.cancel_btn.clicked.connect(self.cancel_copy)
        self.cancel_btn.hide()
        self.fixing: str | None = None  # the item whose fix runs (its copies are queue jobs)
        for b in (self.check_btn, self.fix_btn, self.confirm_btn, self.dismiss_btn,
                  self.cancel_btn):  # fmt: skip
            actions.addWidget(b)
        actions.addStretch(1)
        lay.addLayout(actions)

        bottom = QHBoxLayout()
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # verdicts quote the host's evidence
        self.status.setWordWrap(True)
        bottom.addWidget(self.status, 1)
        self.override_btn = QPushButton(self.tr("Release anyway…"))
        self.override_btn.clicked.connect(self.open_override)
        self.release_btn = QPushButton(self.tr("Release"))
        self.release_btn.setObjectName("releaseButton")
        self.release_btn.clicked.connect(self.release)
        bottom.addWidget(self.override_btn)
        bottom.addWidget(self.release_btn)
        lay.addLayout(bottom)
        lay.addWidget(QLabel(self.tr("History")))
        self.history = QListWidget()
        self.history.setMaximumHeight(120)
        lay.addWidget(self.history)
        self.stack.addWidget(content)
        self.content = content
        self.override_dialog: OverrideDialog | None = None

        self.timer = QTimer(self)
        self.timer.setInterval(self.staleness_interval_ms)
        self.timer.timeout.connect(self.check_changes)
        self.refresh()

    # --- hosts ---------------------------------------------------------------------------
    def refresh(self) -> None:
        current = self.host_box.currentData()
        hosts = self.ctx.registry.hosts()
        self.host_box.blockSignals(True)
        self.host_box.clear()
        for h in hosts:
            label = (
                self.tr("{alias} ({state})").format(
                    alias=h.alias,
                    state=QCoreApplication.translate("ReleasePage", STATE_WORDS[h.state]),
                )
                if h.state in STATE_WORDS
                else h.alias
            )
            self.host_box.addItem(label, h.alias)
        idx = self.host_box.findData(current)
        self.host_box.setCurrentIndex(max(idx, 0))
        self.host_box.blockSignals(False)
        self.stack.setCurrentWidget(self.content if hosts else self.empty)
        self._host_changed()

    def open_host(self, alias: str) -> None:
        """Preselect a host (the tray menu and rental alerts come here)."""
        self.refresh()
        idx = self.host_box.findData(alias)
        if idx >= 0:
            self.host_box.setCurrentIndex(idx)

    def host(self) -> Host | None:
        alias = self.host_box.currentData()
        return self.ctx.registry.host(alias) if alias else None

    def checklist(self) -> ReleaseChecklist | None:
        host = self.host()
        if host is None:
            return None
        if host.alias not in self.checklists:
            settings = self.wiring.settings
            self.checklists[host.alias] = ReleaseChecklist.build(
                host, settings.config(host.alias), settings.confirmations(host.alias)
            )
        checklist = self.checklists[host.alias]
        checklist.host = host
        return checklist

    def _host_changed(self) -> None:
        checklist = self.checklist()
        selected = self._selected_key()
        self.model.set_rows(checklist.items if checklist else [])
        if selected:
            self.select(selected)
        self._fill_history()
        host = self.host()
        active = host is not None and host.id is not None and host.state == "active"
        policy = load_policy(self.ctx.store, host.id) if active and host and host.id else None
        self.policy_label.setText(policy_summary(policy) if active else "")
        self._show_selected()
        self._sync()

    def _fill_history(self) -> None:
        self.history.clear()
        host = self.host()
        for record in self.wiring.ledger.history(host.alias) if host else []:
            item = QListWidgetItem(describe_record(record))
            item.setToolTip(tooltip_text(record_details(record)))
            self.history.addItem(item)
        if not self.history.count():
            self.history.addItem(self.tr("No release or override recorded for this host yet."))

    # --- running checks off the GUI thread -----------------------------------------------
    def context(self, host: Host) -> ReleaseContext:
        return self.wiring.context(host)

    def busy(self) -> bool:
        return self.worker is not None

    def _start(
        self,
        what: str,
        steps: Callable[[ReleaseChecklist, ReleaseContext], Iterator[ItemUpdate]],
        then: Callable[[], None] | None = None,
    ) -> bool:
        checklist, host = self.checklist(), self.host()
        if checklist is None or host is None or self.busy():
            return False
        ctx = self.context(host)
        self.status.setText(what.format(host=host.alias))  # what: a sentence naming {host}
        self.worker = run_in_thread(
            stream,
            lambda: steps(checklist, ctx),
            ctx,
            on_yield=self._on_update,
            on_error=self._on_error,
            on_finished=lambda: self._on_finished(then),
        )
        self._sync()
        return True

    def run_all(self) -> None:
        self._start(self.tr("Checking on {host} …"), lambda cl, ctx: cl.run_all(ctx))

    def run_item(self, key: str | None) -> None:
        if key:
            self._start(self.tr("Checking on {host} …"), lambda cl, ctx: cl.run_item(key, ctx))

    def fix(self, key: str | None) -> None:
        if key and self._start(self.tr("Fixing on {host} …"), lambda cl, ctx: cl.fix(key, ctx)):
            self.fixing = key
            self._sync()

    def cancel_copy(self) -> None:
        """Cancel the fix's transfer jobs (the same jobs the Transfers page lists)."""
        host = self.host()
        if host is not None and self.fixing is not None:
            run_in_thread(self.wiring.sync.cancel, host)

    def check_changes(self) -> None:
        """Staleness probe of the passed items (timer while the page is shown)."""
        checklist, host = self.checklist(), self.host()
        if host is None or host.state != "active" or checklist is None:
            return
        if any(it.state is ItemState.PASSED for it in checklist.items):
            self._start(
                self.tr("Looking for changes on {host} …"),
                lambda cl, ctx: cl.check_staleness(ctx),
            )

    def _on_update(self, update: ItemUpdate) -> None:
        if update.message:
            self.log = [*self.log[-199:], f"{update.key}: {update.message}"]
            if self.fixing == update.key:
                self.progress = update.message  # the copy's progress, from its queue job
        self.model.changed()
        self._show_selected()
        self._sync()

    def _on_error(self, exc: Exception) -> None:
        self.ctx.notifier.error(str(exc), source="release", key="release-error")

    def _on_finished(self, then: Callable[[], None] | None) -> None:
        self.worker = None
        self.fixing = None
        self.progress = ""
        self.model.changed()
        self._show_selected()
        self._sync()
        if then is not None:
            then()

    # --- selection, details and item actions ---------------------------------------------
    def _selected_key(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.row(rows[0].row()).key if rows else None

    def select(self, key: str) -> None:
        for i, it in enumerate(self.model.rows()):
            if it.key == key:
                self.table.selectRow(i)

    def _show_selected(self) -> None:
        key = self._selected_key()
        checklist = self.checklist()
        item = checklist.item(key) if checklist and key else None
        if item is None:
            self.detail.setPlainText(self.tr("Select an item to see its evidence."))
        else:
            self.detail.setPlainText(self._evidence_text(item))
        self._sync()

    def _evidence_text(self, item: ChecklistItem) -> str:
        ev = item.evidence
        lines = [f"{item.title} — {state_word(item.state)}"]
        if ev is not None:
            lines += [
                self.tr("Checked: {what}").format(what=ev.checked),
                self.tr("When: {time}").format(time=f"{ev.at.astimezone():%Y-%m-%d %H:%M:%S}"),
            ]
            lines += [f"{k}: {v}" for k, v in ev.figures.items()]
            if ev.details:
                lines += ["", *ev.details]
        recent = [m for m in self.log if m.startswith(f"{item.key}: ")][-5:]
        if recent:
            lines += ["", *recent]
        return "\n".join(lines)

    def confirm_selected(self) -> None:
        checklist, key = self.checklist(), self._selected_key()
        host = self.host()
        if not checklist or not key or host is None:
            return
        item = checklist.item(key)
        if not isinstance(item, ManualConfirmation):
            return
        note = self._ask_text(item.title, self.tr("Note (optional):"))
        if note is None:
            return
        item.tick(note)
        self.wiring.settings.confirm(host.alias, item.label, note)  # the unattended run counts it
        list(checklist.run_item(key, self.context(host)))  # no SSH: a manual item only
        self._on_finished(None)

    def dismiss_selected(self) -> None:
        checklist, host = self.checklist(), self.host()
        if not checklist or host is None:
            return
        item = checklist.item("leftovers")
        paths = [listed_path(d) for d in (item.evidence.details if item.evidence else ())]
        choice = self._ask_dismiss(paths) if paths else None
        if choice is None:
            return
        path, reason = choice
        try:
            config = self.wiring.settings.config(host.alias).dismiss(path, reason)
            self.wiring.settings.save_config(host.alias, config)
        except UserError as exc:
            self.ctx.notifier.warning(str(exc), source="release")
            return
        self.run_item("leftovers")

    def edit_policy(self) -> None:
        host = self.host()
        if host is not None and host.id is not None:
            PolicyDialog(self.ctx.store, host, self).exec()
            self._host_changed()

    def edit_settings(self) -> None:
        host = self.host()
        if host is None:
            return
        dialog = ChecklistSettingsDialog(self.wiring.settings, host, self, self.wiring.accounts)
        if dialog.exec():
            self.checklists.pop(host.alias, None)
            self._host_changed()

    # --- buttons and words ---------------------------------------------------------------
    def _sync(self) -> None:
        checklist, host = self.checklist(), self.host()
        active = host is not None and host.state == "active" and checklist is not None
        idle = not self.busy()
        key = self._selected_key()
        item = checklist.item(key) if checklist and key else None
        self.run_all_btn.setEnabled(active and idle)
        self.settings_btn.setEnabled(active and idle)
        self.check_btn.setEnabled(active and idle and item is not None)
        self.fix_btn.setEnabled(active and idle and item is not None and bool(item.fix_label))
        self.fix_btn.setText(
            item.fix_label if item is not None and item.fix_label else self.tr("Fix")
        )
        self.confirm_btn.setEnabled(active and idle and isinstance(item, ManualConfirmation))
        self.dismiss_btn.setEnabled(
            active
            and idle
            and item is not None
            and item.key == "leftovers"
            and item.evidence is not None
            and bool(item.evidence.details)
        )
        ready = active and checklist is not None and checklist.ready()
        self.release_btn.setEnabled(ready and idle)
        # a stopped instance cannot be checked over ssh: destroying it is an override
        stopped = host is not None and host.state == "stopped" and checklist is not None
        self.override_btn.setEnabled((active or stopped) and idle)
        self.policy_btn.setEnabled(active)
        copying = self.fixing in ("checkpoints", "archive")
        self.cancel_btn.setVisible(copying)
        self.cancel_btn.setEnabled(copying)
        if copying and host is not None:
            self.status.setText(
                self.tr("Copying from {host}: {progress}").format(
                    host=host.alias, progress=self.progress or self.tr("queued")
                )
            )
        elif host is not None and host.state == "released":
            self.status.setText(
                self.tr("{host} was released; its history is below.").format(host=host.alias)
            )
        elif host is not None and host.state == "stopped":
            self.status.setText(
                self.tr(
                    "{host} is stopped at the provider and its disk still bills: release it "
                    "anyway to destroy it."
                ).format(host=host.alias)
            )
        elif host is not None and host.state == "gone":
            self.status.setText(
                self.tr("{host} is gone at the provider; its history is below.").format(
                    host=host.alias
                )
            )
        elif checklist is not None and idle:
            self.status.setText(verdict(checklist))

    # --- the staleness timer runs only while the page is shown ---------------------------
    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.timer.start()

    def hideEvent(self, event: Any) -> None:
        self.timer.stop()
        super().hideEvent(event)
