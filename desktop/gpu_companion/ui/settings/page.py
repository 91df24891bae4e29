"""Settings page: start at login, the environment check, where the app keeps its files."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QT_TRANSLATE_NOOP, Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from gpu_companion import __version__
from gpu_companion.core.access.launch import CUSTOM, TERMINALS, terminal_choices
from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.system.autostart import Autostart
from gpu_companion.ui.common.page import Navigator, Page
from gpu_companion.ui.common.widgets import ElidedLabel

if TYPE_CHECKING:
    from gpu_companion.services import Services
    from gpu_companion.ui.shell.welcome import WelcomeDialog

log = logging.getLogger(__name__)  # log.log(WARNING, …): log lines, never translated


class SettingsPage(Page):
    key, title, icon_name = "settings", str(QT_TRANSLATE_NOOP("Sidebar", "Settings")), "settings"

    def __init__(self, ctx: Services, nav: Navigator, parent: QWidget | None = None) -> None:
        super().__init__(ctx, nav, parent)
        self.autostart = Autostart()
        self.welcome: WelcomeDialog | None = None
        # a tall form: it scrolls in a short window (1100×700, a laptop at 125 % scaling)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll = QScrollArea()
        scroll.setObjectName("settingsScroll")
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        inner = QWidget()
        scroll.setWidget(inner)
        outer.addWidget(scroll)
        lay = QVBoxLayout(inner)

        startup = QGroupBox(self.tr("Start-up"))
        slay = QVBoxLayout(startup)
        self.start_at_login = QCheckBox(self.tr("Start GPU Companion in the tray when I log in"))
        self.start_at_login.setObjectName("startAtLogin")
        self.start_at_login.setChecked(self.autostart.is_enabled())
        self.start_at_login.toggled.connect(self._toggle_autostart)
        slay.addWidget(self.start_at_login)
        self.autostart_note = QLabel()
        self.autostart_note.setObjectName("autostartNote")
        self.autostart_note.setWordWrap(True)
        self._update_autostart_note()
        slay.addWidget(self.autostart_note)
        check_row = QHBoxLayout()
        self.check_button = QPushButton(self.tr("Check this computer…"))
        self.check_button.setObjectName("checkEnvironment")
        self.check_button.clicked.connect(self.open_check)
        check_label = QLabel(self.tr("Keyring, ssh, ssh-agent and rsync, and how to install them:"))
        check_label.setWordWrap(True)
        check_row.addWidget(check_label, 1)
        check_row.addWidget(self.check_button)
        slay.addLayout(check_row)
        lay.addWidget(startup)

        from gpu_companion.ui.settings.notify_section import NotifySection

        self.notify = NotifySection(ctx)  # where alerts go while the user is away
        lay.addWidget(self.notify)

        from gpu_companion.ui.settings.language_section import LanguageSection

        self.language = LanguageSection(ctx.paths.config_dir)
        lay.addWidget(self.language)

        lay.addWidget(self._terminal_box())

        box = QGroupBox(self.tr("Where GPU Companion keeps its files"))
        form = QFormLayout(box)
        for label, path in (
            (self.tr("Data (database)"), ctx.paths.data_dir),
            (self.tr("Configuration"), ctx.paths.config_dir),
            (self.tr("Logs"), ctx.paths.log_dir),
        ):
            row = QHBoxLayout()
            text = ElidedLabel(str(path))  # a long home directory must not push the button off
            text.setTextInteractionFlags(text.textInteractionFlags().TextSelectableByMouse)
            row.addWidget(text, 1)
            button = QPushButton(self.tr("Open folder"))
            button.clicked.connect(lambda _checked=False, p=path: self.open_folder(p))
            row.addWidget(button)
            form.addRow(label, row)
        lay.addWidget(box)
        about = QGroupBox(self.tr("About"))
        alay = QVBoxLayout(about)
        about_text = QLabel(
            self.tr(
                "GPU Companion {version}. Private keys live only in your system keyring; the app "
                "never stores them in plain files. The colour theme follows your system."
            ).format(version=__version__)
        )
        about_text.setWordWrap(True)
        alay.addWidget(about_text)
        lay.addWidget(about)
        lay.addStretch(1)

    def _terminal_box(self) -> QGroupBox:
        """Which terminal “Open terminal” starts (this system's installed ones, or a command of
        the user's own), and the tmux session it can attach to."""
        prefs = self.ctx.launcher.prefs
        box = QGroupBox(self.tr("Terminal"))
        form = QFormLayout(box)
        self.terminal = QComboBox()
        self.terminal.setObjectName("terminalChoice")
        self._fill_terminals()
        self.terminal.currentIndexChanged.connect(lambda _i: self._terminal_chosen())
        form.addRow(self.tr("Open terminals in"), self.terminal)
        self.custom_terminal = QLineEdit(prefs.custom_terminal)
        self.custom_terminal.setObjectName("customTerminal")
        # {ssh} and {alias} are the command's own placeholders, shown as they are
        self.custom_terminal.setPlaceholderText(
            self.tr("e.g. kitty -- {ssh}   or   wezterm ssh {alias}")
        )
        self.custom_terminal.setToolTip(
            self.tr(
                "The program and its arguments, split like a shell would but never run by one. "
                "{ssh} is the ssh command (ssh ALIAS, or with the tmux session), {alias} the host."
            )
        )
        self.custom_terminal.editingFinished.connect(self._save_custom_terminal)
        self.custom_note = QLabel()
        self.custom_note.setObjectName("customTerminalNote")
        self.custom_note.setWordWrap(True)
        form.addRow(self.tr("Custom command"), self.custom_terminal)
        form.addRow("", self.custom_note)
        self._show_custom()
        self.tmux_session = QLineEdit(prefs.tmux_session)
        self.tmux_session.setObjectName("tmuxSession")
        self.tmux_note = QLabel(
            self.tr(
                "“Open terminal in tmux” attaches to this session on the host (made if missing), "
                "so a dropped link does not stop the work."
            )
        )
        self.tmux_note.setWordWrap(True)
        self.tmux_session.editingFinished.connect(self._save_tmux)
        form.addRow(self.tr("tmux session"), self.tmux_session)
        form.addRow("", self.tmux_note)
        return box

    def _fill_terminals(self) -> None:
        """This system's installed terminals (looked up again on each visit: one may have been
        installed meanwhile), and the saved choice even when it is no longer found."""
        prefs = self.ctx.launcher.prefs
        keys = terminal_choices(self.ctx.launcher.which, self.ctx.launcher.platform)
        chosen = prefs.terminal
        self.terminal.blockSignals(True)
        self.terminal.clear()
        for key in keys:  # the names are core/access's words (gettext)
            self.terminal.addItem(_(TERMINALS[key]), key)
        if chosen not in keys:
            missing = self.tr("{terminal} (not found)").format(terminal=_(TERMINALS[chosen]))
            self.terminal.insertItem(1, missing, chosen)
        self.terminal.setCurrentIndex(max(0, self.terminal.findData(chosen)))
        self.terminal.blockSignals(False)

    def _terminal_chosen(self) -> None:
        self.ctx.launcher.prefs.terminal = self.terminal.currentData()
        self._show_custom()
        if self.terminal.currentData() == CUSTOM and not self.ctx.launcher.prefs.custom_terminal:
            self.custom_terminal.setFocus()

    def _show_custom(self) -> None:
        custom = self.terminal.currentData() == CUSTOM
        self.custom_terminal.setEnabled(custom)
        if not custom:
            self.custom_note.setText("")
        elif not self.ctx.launcher.prefs.custom_terminal:
            self.custom_note.setText(
                self.tr(
                    "Give the command: {ssh} is replaced by the ssh command, {alias} by the host."
                )
            )

    def _save_custom_terminal(self) -> None:
        prefs = self.ctx.launcher.prefs
        try:
            prefs.custom_terminal = self.custom_terminal.text()
        except ValidationError as exc:
            self.custom_note.setText(self.tr("Not saved: {error}").format(error=exc.message))
            return
        self.custom_note.setText(self.tr("Saved: “Open terminal” runs this command."))

    def _save_tmux(self) -> None:
        try:
            self.ctx.launcher.prefs.tmux_session = self.tmux_session.text()
        except ValidationError as exc:
            self.tmux_note.setText(self.tr("Not saved: {error}").format(error=exc.message))
            self.tmux_session.setText(self.ctx.launcher.prefs.tmux_session)
            return
        name = self.tmux_session.text()
        self.tmux_note.setText(
            self.tr("Saved: terminals attach to tmux session “{name}”.").format(name=name)
        )

    def refresh(self) -> None:
        self._fill_terminals()
        self._show_custom()
        enabled = self.autostart.is_enabled()  # the user may have removed the entry by hand
        if enabled != self.start_at_login.isChecked():
            self.start_at_login.blockSignals(True)
            self.start_at_login.setChecked(enabled)
            self.start_at_login.blockSignals(False)
        self._update_autostart_note()

    def _toggle_autostart(self, on: bool) -> None:
        try:
            if on:
                self.autostart.enable()
            else:
                self.autostart.disable()
        except (OSError, ValueError) as exc:
            log.warning("start at login: %s", exc)
            self.ctx.notifier.error(
                self.tr("Could not change start at login ({location}): {error}").format(
                    location=self.autostart.location, error=exc
                ),
                source="settings",
                key="autostart",
            )
            self.start_at_login.blockSignals(True)
            self.start_at_login.setChecked(self.autostart.is_enabled())
            self.start_at_login.blockSignals(False)
        self._update_autostart_note()

    def _update_autostart_note(self) -> None:
        where = self.autostart.location
        if self.autostart.is_enabled():
            self.autostart_note.setText(self.tr("Entry: {path}").format(path=where))
        else:
            self.autostart_note.setText(self.tr("Would be written to {path}").format(path=where))

    def open_check(self) -> WelcomeDialog:
        from gpu_companion.ui.shell.welcome import WelcomeDialog

        if self.welcome is None or not self.welcome.isVisible():
            self.welcome = WelcomeDialog(self.ctx, self.nav, self)
        self.welcome.open()
        return self.welcome

    @staticmethod
    def open_folder(path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))
