"""The first-run welcome: where to start, and whether this computer has what the app needs.

Shown once (the `ui.welcome_shown` setting) after the main window appears, never modal to the
event loop; Settings opens the same dialog for the environment check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QGridLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.system.envcheck import CheckResult, run_checks
from gpu_companion.ui.common import worker

if TYPE_CHECKING:
    from gpu_companion.services import Services
    from gpu_companion.ui.common.page import Navigator
    from gpu_companion.ui.shell.main_window import MainWindow

WELCOME_SETTING = "ui.welcome_shown"
CHECKS = ("keyring", "ssh", "ssh-agent", "rsync")  # the environment check's names, in order
# how a check is named where that is a word; the tools' names are shown as they are
_WORDS = {"keyring": QT_TRANSLATE_NOOP("WelcomeDialog", "System keyring")}


def _label(name: str) -> str:
    label = _WORDS.get(name)
    return QCoreApplication.translate("WelcomeDialog", str(label)) if label else name


def _bold(text: str) -> str:
    return f"<b>{text}</b>"


class WelcomeDialog(QDialog):
    """Offers the wizard or the Hosts page, and runs the environment check off the GUI thread."""

    def __init__(
        self,
        ctx: Services,
        nav: Navigator,
        parent: QWidget | None = None,
        check_kwargs: Any = None,
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.nav = nav
        self.check_kwargs: dict[str, Any] = dict(check_kwargs or {})
        self.check_kwargs.setdefault("agent_socket", ctx.runtime_paths.socket)
        self.check_kwargs.setdefault("app_running", ctx.started)
        self.setObjectName("welcomeDialog")
        self.setWindowTitle(self.tr("Welcome to GPU Companion"))
        self.setMinimumWidth(680)
        lay = QVBoxLayout(self)
        intro = QLabel(
            self.tr(
                "<h3>Welcome to GPU Companion</h3>"
                "<p>It keeps a rented GPU safe and visible from the first hour to the bill: one "
                "SSH key per platform in your system keyring, live GPU graphs, resumable "
                "transfers, a release gate that waits for your backups, and a spend ledger.</p>"
                "<p>New to renting? The wizard sizes the job and picks a card and a billing mode. "
                "Already have an instance? Add it on the Hosts page.</p>"
            )
        )
        intro.setWordWrap(True)
        lay.addWidget(intro)

        box = QGroupBox(self.tr("This computer"))
        self.grid = QGridLayout(box)
        self.grid.setColumnStretch(2, 1)
        self.status = QLabel(self.tr("Checking…"))
        self.status.setObjectName("checkStatus")
        self.grid.addWidget(self.status, 0, 0, 1, 3)
        lay.addWidget(box)
        self.results: dict[str, CheckResult] = {}
        self.rows: dict[str, tuple[QLabel, QLabel, QLabel]] = {}
        for name in CHECKS:  # rows exist from the start, so the dialog does not jump
            self._row(name)[1].setText(_bold(_label(name)))

        buttons = QDialogButtonBox()
        self.wizard_button = QPushButton(self.tr("Plan a rental with the wizard"))
        self.wizard_button.setDefault(True)
        self.hosts_button = QPushButton(self.tr("Go to Hosts"))
        self.recheck_button = QPushButton(self.tr("Check again"))
        buttons.addButton(self.wizard_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.hosts_button, QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(self.recheck_button, QDialogButtonBox.ButtonRole.ActionRole)
        close = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        self.wizard_button.clicked.connect(self._wizard)
        self.hosts_button.clicked.connect(self._hosts)
        self.recheck_button.clicked.connect(self.start_check)
        close.clicked.connect(self.reject)
        lay.addWidget(buttons)
        self._worker: worker.Worker | None = None
        self.start_check()

    # the environment check
    def start_check(self) -> None:
        if self._worker is not None:
            return
        self.results.clear()
        self.status.setText(self.tr("Checking the keyring, ssh, ssh-agent and rsync…"))
        self.recheck_button.setEnabled(False)
        self._worker = worker.run_in_thread(
            lambda: run_checks(**self.check_kwargs),
            on_yield=self._show_result,
            on_error=self._check_failed,
            on_finished=self._check_done,
        )

    def _row(self, name: str) -> tuple[QLabel, QLabel, QLabel]:
        if name not in self.rows:
            row = len(self.rows) + 1
            labels = (QLabel(), QLabel(), QLabel())
            for col, label in enumerate(labels):
                label.setObjectName(f"check-{name}-{col}")
                label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
                self.grid.addWidget(label, row, col, Qt.AlignmentFlag.AlignTop)
            labels[2].setWordWrap(True)
            self.rows[name] = labels
        return self.rows[name]

    def _show_result(self, result: CheckResult) -> None:
        self.results[result.name] = result
        mark, name, text = self._row(result.name)
        mark.setText("✔" if result.ok else "✘")
        mark.setStyleSheet("color: #2f855a;" if result.ok else "color: #c53030;")
        version = f" {result.version}" if result.version else ""
        name.setText(_bold(_label(result.name)) + version)
        detail = result.detail
        if result.fix:
            detail += f"\n→ {result.fix}"
        text.setText(detail)
        self.adjustSize()

    def _check_failed(self, exc: Exception) -> None:
        self.status.setText(self.tr("The check itself failed: {error}").format(error=exc))

    def _check_done(self) -> None:
        self._worker = None
        self.recheck_button.setEnabled(True)
        missing = [r for r in self.results.values() if not r.ok]
        if not self.results:
            return
        if not missing:
            self.status.setText(self.tr("Everything GPU Companion needs is here."))
            return
        names = self.tr(", ").join(_label(r.name) for r in missing)
        n = len(missing)
        # two sources keep the English singular and plural exact without an English catalog
        text = (
            QCoreApplication.translate(
                "WelcomeDialog",
                "%n thing to fix: {names}. The rest of the app works meanwhile.",
                None,
                n,
            )
            if n == 1
            else QCoreApplication.translate(
                "WelcomeDialog",
                "%n things to fix: {names}. The rest of the app works meanwhile.",
                None,
                n,
            )
        )
        self.status.setText(text.format(names=names))

    @property
    def checking(self) -> bool:
        return self._worker is not None

    # where to go next
    def _wizard(self) -> None:
        self.accept()
        self.nav.open_wizard()

    def _hosts(self) -> None:
        self.accept()
        self.nav.navigate("hosts")

    def done(self, result: int) -> None:
        if self._worker is not None:
            self._worker.cancel()
        super().done(result)


def show_welcome_once(ctx: Services, window: MainWindow) -> WelcomeDialog | None:
    """Open the welcome dialog the first time the app starts; None on later starts."""
    if ctx.store.get_setting(WELCOME_SETTING):
        return None
    ctx.store.set_setting(WELCOME_SETTING, "1")
    dialog = WelcomeDialog(ctx, window, window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.open()
    return dialog
