"""The self-check's results as they stream in (one row per step, the fix under each failure), and
the dialog the Hosts page opens for a host."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from html import escape
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.selfcheck.check import SelfCheckOptions, run_selfcheck
from gpu_companion.core.selfcheck.rules import CheckStep, Status
from gpu_companion.ui.common.worker import Worker, run_in_thread

MARKS = {  # the mark's words are translated where shown (context "SelfCheckView")
    Status.PASS: (QT_TRANSLATE_NOOP("SelfCheckView", "✔ pass"), "#2f855a"),
    Status.WARN: (QT_TRANSLATE_NOOP("SelfCheckView", "▲ warn"), "#b7791f"),
    Status.FAIL: (QT_TRANSLATE_NOOP("SelfCheckView", "✖ fail"), "#c53030"),
    Status.SKIP: (QT_TRANSLATE_NOOP("SelfCheckView", "– skip"), "#718096"),
}


class SelfCheckView(QWidget):
    """Runs the self-check off the GUI thread and lists each step as it arrives."""

    finished = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.steps: list[CheckStep] = []
        self.worker: Worker | None = None
        self.complete = False  # the last run finished (not cancelled, not stopped by an error)
        self._current: object | None = None  # the run whose steps are shown
        self._error = False
        self._pending: tuple[Host, Callable[[Host], Any], SelfCheckOptions | None] | None = None
        self.results = QTextBrowser()
        self.results.setObjectName("selfcheckSteps")
        self.results.setOpenLinks(False)
        self.status = QLabel(self.tr("Not run yet."))
        self.status.setObjectName("selfcheckStatus")
        self.status.setWordWrap(True)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setObjectName("cancelSelfcheck")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        row = QHBoxLayout()
        row.addWidget(self.status, 1)
        row.addWidget(self.cancel_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.results)
        lay.addLayout(row)

    @property
    def running(self) -> bool:
        return self.worker is not None

    def start(
        self, host: Host, connect: Callable[[Host], Any], options: SelfCheckOptions | None = None
    ) -> None:
        """Check `host`; a check still running (for earlier answers) is stopped first and its
        results are dropped, so no stale step is ever shown under the new host."""
        self.steps.clear()
        self.results.clear()
        self.complete = False
        if self.worker is not None:
            self._pending = (host, connect, options)
            self.worker.cancel()
            self.status.setText(self.tr("Stopping the earlier check…"))
            return
        worker_id = object()
        self._current = worker_id
        self.status.setText(
            self.tr("Checking {host} ({user}@{address}:{port})…").format(
                host=host.alias, user=host.user, address=host.hostname, port=host.port
            )
        )
        self.cancel_button.setEnabled(True)
        self.worker = run_in_thread(
            run_selfcheck,
            host,
            connect,
            options,
            on_yield=partial(self._add_from, worker_id),
            on_error=self._failed,
            on_finished=self._done,
        )

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()
            self.status.setText(self.tr("Cancelling after the current step…"))

    def _add_from(self, worker_id: object, step: CheckStep) -> None:
        if worker_id is self._current:  # a stopped run's last step is not shown
            self.add_step(step)

    def add_step(self, step: CheckStep) -> None:
        self.steps.append(step)
        self.results.setHtml(self.html())

    def html(self) -> str:
        """One table row per step; the fix sits under the evidence, wrapped, never cut off."""
        rows = []
        for step in self.steps:
            mark_words, color = MARKS[step.status]
            mark = QCoreApplication.translate("SelfCheckView", str(mark_words))
            found = escape(step.evidence)
            if step.hint:
                fix = self.tr("Fix: {hint}").format(hint=escape(step.hint))
                found += f"<br><span style='color:{color}'>{fix}</span>"
            rows.append(
                f"<tr><td style='color:{color}; white-space:pre'>{mark}</td>"
                f"<td><b>{escape(step.title)}</b></td><td>{found}</td></tr>"
            )
        return "<table cellspacing='0' cellpadding='4' width='100%'>" + "".join(rows) + "</table>"

    def _failed(self, exc: Exception) -> None:
        self._error = True
        if self._pending is None:
            self.status.setText(self.tr("The self-check stopped: {error}").format(error=exc))

    def _done(self) -> None:
        cancelled = self.worker is not None and self.worker.cancel_event.is_set()
        self.worker = None
        self._current = None
        self.cancel_button.setEnabled(False)
        error, self._error = self._error, False
        if self._pending is not None:
            pending, self._pending = self._pending, None
            self.start(*pending)
            return
        self.complete = not cancelled and not error and bool(self.steps)
        if cancelled:
            self.status.setText(self.tr("Cancelled."))
        elif self.steps:
            self.status.setText(self.summary())
        self.finished.emit()

    def summary(self) -> str:
        counts = {s: sum(1 for step in self.steps if step.status is s) for s in Status}
        failed = [step.title for step in self.steps if step.status is Status.FAIL]
        if failed:
            text = self.tr(
                "{passed} passed, {warnings} warnings, {failed} failed, {skipped} skipped. "
                "Fix first: {names}."
            )
        else:
            text = self.tr(
                "{passed} passed, {warnings} warnings, {failed} failed, {skipped} skipped."
            )
        return text.format(
            passed=counts[Status.PASS],
            warnings=counts[Status.WARN],
            failed=counts[Status.FAIL],
            skipped=counts[Status.SKIP],
            names=self.tr(", ").join(failed),
        )


class SelfCheckDialog(QDialog):
    """The Hosts page's "Self-check" for one host, over the app's own connection."""

    def __init__(
        self,
        host: Host,
        connect: Callable[[Host], Any],
        options: SelfCheckOptions | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.tr("Self-check — {host}").format(host=host.alias))
        self.host, self.connect_host, self.options = host, connect, options
        lay = QVBoxLayout(self)
        intro = QLabel(
            self.tr(
                "Checks the GPU, the driver against PyTorch, a matmul and its BF16 speed, the "
                "data disk, Python and pip — over one SSH command, in about a minute."
            )
        )
        intro.setWordWrap(True)
        lay.addWidget(intro)
        self.view = SelfCheckView()
        lay.addWidget(self.view)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.run_button = buttons.addButton(
            self.tr("Run again"), QDialogButtonBox.ButtonRole.ActionRole
        )
        self.run_button.setObjectName("runSelfcheck")
        self.run_button.clicked.connect(self.run)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)
        self.view.finished.connect(lambda: self.run_button.setEnabled(True))
        self.resize(820, 520)

    def run(self) -> None:
        self.run_button.setEnabled(False)
        self.view.start(self.host, self.connect_host, self.options)

    def done(self, result: int) -> None:
        self.view.cancel()
        super().done(result)


def open_selfcheck(ctx: Any, host: Host, parent: QWidget | None = None) -> SelfCheckDialog:
    """Open the dialog for `host` and start the check at once over the app's own connection."""
    dialog = SelfCheckDialog(host, ctx.sessions.connect, parent=parent)
    dialog.setObjectName("selfcheckDialog")
    dialog.open()
    dialog.run()
    return dialog
