"""Settings → "When you are away": the notification channels (ntfy, a webhook, e-mail, the
desktop), what each sends and when, its delivery status, and Send test. Every keyring, store
and network call runs off the GUI thread; a channel's secret is typed into a password field and
goes to the keyring, never into the store."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.i18n import N_
from gpu_companion.ui.common.widgets import form_error_label
from gpu_companion.ui.common.worker import run_in_thread

if TYPE_CHECKING:
    from gpu_companion.core.notify.center import NotifyCenter
    from gpu_companion.core.notify.model import Channel, ChannelStatus
    from gpu_companion.services import Services

STATUS_MS = 15_000  # the status column follows the delivery thread while the page shows
KIND_WORDS: dict[str, str] = {
    "budget": str(QT_TRANSLATE_NOOP("ChannelDialog", "Budget crossed")),
    "runtime": str(QT_TRANSLATE_NOOP("ChannelDialog", "Planned runtime")),
    "overnight": str(QT_TRANSLATE_NOOP("ChannelDialog", "Left on overnight")),
    "idle": str(QT_TRANSLATE_NOOP("ChannelDialog", "Idle GPUs")),
    "spot-sync": str(QT_TRANSLATE_NOOP("ChannelDialog", "Spot without a checkpoint")),
    "autorelease": str(QT_TRANSLATE_NOOP("ChannelDialog", "Auto-release countdown and outcome")),
    "unreachable": str(QT_TRANSLATE_NOOP("ChannelDialog", "Host stopped answering")),
    "orphan": str(QT_TRANSLATE_NOOP("ChannelDialog", "Forgotten instance at a provider")),
    "gone": str(QT_TRANSLATE_NOOP("ChannelDialog", "Instance gone at a provider")),
    "release": str(QT_TRANSLATE_NOOP("ChannelDialog", "Releases")),
    "other": str(QT_TRANSLATE_NOOP("ChannelDialog", "Everything else")),
}
WEBHOOK_FORMATS = ("json", "slack", "discord", "feishu", "dingtalk")
SMTP_SECURITY = ("starttls", "tls", "none")  # the store's words; "none" is shown translated
NTFY_SERVER = "https://ntfy.sh"


def _when(moment: datetime | None) -> str:
    #: a strftime format (day, month, time); Chinese e.g. "%m-%d %H:%M"
    when_format = QCoreApplication.translate("NotifySection", "%d %b %H:%M")
    return moment.astimezone().strftime(when_format) if moment else ""


def status_text(status: ChannelStatus | None) -> str:
    """'sent 14:02' / 'failing: …, next try 14:10' / '2 waiting'."""
    if status is None:
        return ""
    parts = []
    if status.last_error and (
        status.last_ok_at is None
        or (status.last_error_at is not None and status.last_error_at >= status.last_ok_at)
    ):
        if status.next_try_at:
            parts.append(
                QCoreApplication.translate(
                    "NotifySection", "failing: {error}; next try {when}"
                ).format(error=status.last_error, when=_when(status.next_try_at))
            )
        else:
            parts.append(
                QCoreApplication.translate("NotifySection", "failing: {error}").format(
                    error=status.last_error
                )
            )
    elif status.last_ok_at:
        parts.append(
            QCoreApplication.translate("NotifySection", "sent {when}").format(
                when=_when(status.last_ok_at)
            )
        )
    if status.pending:
        parts.append(
            QCoreApplication.translate("NotifySection", "{n} waiting").format(n=status.pending)
        )
    if status.failed:
        parts.append(
            QCoreApplication.translate("NotifySection", "{n} given up").format(n=status.failed)
        )
    separator = QCoreApplication.translate("NotifySection", "; ")
    return separator.join(parts) or QCoreApplication.translate("NotifySection", "nothing sent yet")


class ChannelDialog(QDialog):
    """Adds a channel of one type, or edits a channel's filters (`channel` given)."""

    def __init__(
        self, center: NotifyCenter, kind: str, channel: Channel | None = None,
        parent: QWidget | None = None,
    ) -> None:  # fmt: skip
        super().__init__(parent)
        from gpu_companion.core.notify.kinds import DEFAULT_KINDS, KINDS

        self.center, self.kind, self.channel = center, kind, channel
        self.setWindowTitle(
            self.tr("Edit {0}").format(channel.label()) if channel
            else self.tr("Add {0} channel").format(kind)
        )  # fmt: skip
        self.form = QFormLayout()
        self.fields: dict[str, QLineEdit | QComboBox | QSpinBox] = {}
        if channel is None:
            self._type_fields(kind)
        self.name = QLineEdit(channel.name if channel else "")
        self.form.addRow(self.tr("Name (optional)"), self.name)
        self.quiet = QLineEdit(str(channel.quiet) if channel and channel.quiet else "")
        self.quiet.setPlaceholderText(
            self.tr("e.g. 23:00-07:00 (money-critical alerts still come)")
        )
        self.form.addRow(self.tr("Quiet hours"), self.quiet)
        self.remind = QSpinBox()
        self.remind.setRange(1, 24 * 60)
        self.remind.setSuffix(self.tr(" min"))
        self.remind.setValue(channel.remind_minutes if channel else 30)
        self.form.addRow(self.tr("An updated alert again at most every"), self.remind)
        chosen = channel.kinds if channel else DEFAULT_KINDS
        box = QGroupBox(self.tr("Send"))
        grid = QGridLayout(box)
        self.kinds: dict[str, QCheckBox] = {}
        for i, k in enumerate(KINDS):
            check = QCheckBox(self.tr(KIND_WORDS.get(k, k)))
            check.setChecked(k in chosen)
            self.kinds[k] = check
            grid.addWidget(check, i // 2, i % 2)
        self.error = form_error_label()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(self.form)
        lay.addWidget(box)
        lay.addWidget(self.error)
        lay.addWidget(buttons)

    def _line(self, key: str, label: str, placeholder: str = "", secret: bool = False) -> None:
        edit = QLineEdit()
        edit.setObjectName(key)
        edit.setPlaceholderText(placeholder)
        if secret:
            edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.fields[key] = edit
        self.form.addRow(label, edit)

    def _type_fields(self, kind: str) -> None:
        if kind == "ntfy":
            self._line("server", self.tr("Server"), self.tr("https://ntfy.sh (or your own)"))
            self.fields["server"].setText(NTFY_SERVER)  # type: ignore[union-attr]
            self._line("topic", self.tr("Topic"),
                       self.tr("a long, hard-to-guess name, e.g. gpu-7fk2q9"))  # fmt: skip
            self._line("token", self.tr("Access token (optional)"), "tk_…", secret=True)
        elif kind == "webhook":
            self._line("url", self.tr("Webhook URL"), "https://hooks.slack.com/services/…",
                       secret=True)  # fmt: skip
            fmt = QComboBox()
            fmt.addItems(WEBHOOK_FORMATS)
            self.fields["format"] = fmt
            self.form.addRow(self.tr("Format"), fmt)
            self._line("secret", self.tr("Signing secret (optional)"), "", secret=True)
        elif kind == "email":
            self._line("host", self.tr("SMTP server"), "smtp.example.com")
            security = QComboBox()
            for mode in SMTP_SECURITY:  # the protocol names stay; "none" is a word
                shown = self.tr("none", "SMTP security: no encryption") if mode == "none" else mode
                security.addItem(shown, mode)
            self.fields["security"] = security
            self.form.addRow(self.tr("Security"), security)
            port = QSpinBox()
            port.setRange(0, 65535)
            port.setSpecialValueText(self.tr("default (587 / 465 / 25)"))
            self.fields["port"] = port
            self.form.addRow(self.tr("Port"), port)
            self._line("user", self.tr("User"), self.tr("alerts@example.com"))
            self._line("password", self.tr("Password"), "", secret=True)
            self._line("sender", self.tr("From"), self.tr("alerts@example.com"))
            self._line("to", self.tr("To"), self.tr("you@example.com (several: comma-separated)"))

    def _text(self, key: str) -> str:
        w = self.fields[key]
        if isinstance(w, QLineEdit):
            return w.text().strip()
        if isinstance(w, QComboBox):  # the item's data where it has one (shown words differ)
            data = w.currentData()
            return str(data) if data is not None else w.currentText()
        return str(w.value())

    def common(self) -> dict[str, Any]:
        from gpu_companion.core.notify.kinds import QuietHours

        quiet = QuietHours.parse(self.quiet.text()) if self.quiet.text().strip() else None
        kinds = frozenset(k for k, c in self.kinds.items() if c.isChecked())
        if not kinds:
            raise ValidationError("kinds", self.tr("Choose at least one kind of alert to send."))
        return {"name": self.name.text().strip(), "kinds": kinds, "quiet": quiet,
                "remind_minutes": self.remind.value()}  # fmt: skip

    def save(self) -> None:
        """Validates here; the keyring and the store are written by `apply` (off the GUI)."""
        try:
            self.values = self.common()
            if self.channel is None:
                self.preflight()
        except ValidationError as exc:
            self.error.setText(exc.message)
            return
        self.accept()

    def preflight(self) -> None:
        """The same checks the store makes, here, so a mistake keeps the dialog and what was
        typed (no network, no keyring)."""
        from gpu_companion.core.notify import validate as v

        if self.kind == "ntfy":
            v.validate_server(self._text("server"))
            v.validate_topic(self._text("topic"))
        elif self.kind == "webhook":
            # core translates `what` (its catalog has this msgid from core/notify/channels.py)
            v.validate_url("url", self._text("url"), what=N_("The webhook URL"))
        elif self.kind == "email":
            v.validate_host(self._text("host"))
            v.validate_address("sender", self._text("sender"))
            for address in self._text("to").split(",") or [""]:
                v.validate_address("to", address.strip())

    def apply(self) -> Channel:
        """Create or change the channel (keyring and store: call off the GUI thread)."""
        channels, common = self.center.channels, self.values
        if self.channel is not None:
            return channels.update(self.channel.id, **common)
        if self.kind == "ntfy":
            return channels.add_ntfy(self._text("server"), self._text("topic"),
                                     token=self._text("token"), **common)  # fmt: skip
        if self.kind == "webhook":
            return channels.add_webhook(self._text("url"), self._text("format"),
                                        secret=self._text("secret"), **common)  # fmt: skip
        if self.kind == "email":
            security = self._text("security")
            port = int(self._text("port")) or {"starttls": 587, "tls": 465, "none": 25}[security]
            recipients = [a.strip() for a in self._text("to").split(",") if a.strip()]
            return channels.add_email(self._text("host"), port, security, self._text("sender"),
                                      recipients, user=self._text("user"),
                                      password=self._text("password"), **common)  # fmt: skip
        return channels.add_desktop(**common)


class NotifySection(QGroupBox):
    """The channels table with Add ▾, Edit…, Send test, Remove, and a line of results."""

    def __init__(self, ctx: Services, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTitle(self.tr("When you are away: where alerts go"))
        self.ctx = ctx
        self.setObjectName("notifySection")
        intro = QLabel(
            self.tr(
                "Budget alerts, auto-release countdowns, forgotten instances and hosts that stop "
                "answering are sent here too, by whichever GPU Companion runs the rules (this "
                "window or `gpu-companion watch`). A phone in five minutes: install the ntfy app, "
                "subscribe to a topic of your own, add it here and press Send test."
            )
        )
        intro.setWordWrap(True)
        self.table = QTableWidget(0, 4)
        self.table.setObjectName("notifyChannels")
        self.table.setHorizontalHeaderLabels(
            [self.tr("Channel"), self.tr("Sends to"), self.tr("Quiet hours"), self.tr("Status")]
        )
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        fit, stretch = QHeaderView.ResizeMode.ResizeToContents, QHeaderView.ResizeMode.Stretch
        for col, mode in enumerate((fit, stretch, fit, stretch)):
            header.setSectionResizeMode(col, mode)
        self.table.verticalHeader().setVisible(False)
        self.table.setMaximumHeight(160)
        self.add_btn = QPushButton(self.tr("Add ▾"))
        menu = QMenu(self.add_btn)
        for kind, words in (
            ("ntfy", self.tr("ntfy (phone app)…")),
            ("webhook", self.tr("Webhook (Slack, Discord, Feishu, DingTalk)…")),
            ("email", self.tr("E-mail…")),
            ("desktop", self.tr("Desktop notifications…")),
        ):
            menu.addAction(words, self._adder(kind))
        self.add_btn.setMenu(menu)
        self.edit_btn = QPushButton(self.tr("Edit…"))
        self.test_btn = QPushButton(self.tr("Send test"))
        self.test_btn.setObjectName("notifyTest")
        self.remove_btn = QPushButton(self.tr("Remove"))
        self.edit_btn.clicked.connect(self.edit_selected)
        self.test_btn.clicked.connect(self.test_selected)
        self.remove_btn.clicked.connect(self.remove_selected)
        self.result = QLabel("")
        self.result.setObjectName("notifyResult")
        self.result.setWordWrap(True)
        self.result.setTextFormat(Qt.TextFormat.PlainText)  # a server's answer is quoted
        bar = QHBoxLayout()
        for b in (self.add_btn, self.edit_btn, self.test_btn, self.remove_btn):
            bar.addWidget(b)
        bar.addStretch(1)
        lay = QVBoxLayout(self)
        lay.addWidget(intro)
        lay.addWidget(self.table)
        lay.addLayout(bar)
        lay.addWidget(self.result)
        self.channels: list[Channel] = []
        self.timer = QTimer(self)
        self.timer.setInterval(STATUS_MS)
        self.timer.timeout.connect(self.refresh)
        self.table.itemSelectionChanged.connect(self._sync_buttons)
        self._sync_buttons()

    @property
    def center(self) -> NotifyCenter:
        return self.ctx.notify

    # --- showing ---------------------------------------------------------------------------
    def showEvent(self, event: Any) -> None:  # noqa: N802
        super().showEvent(event)
        self.refresh()
        self.timer.start()

    def hideEvent(self, event: Any) -> None:  # noqa: N802
        self.timer.stop()
        super().hideEvent(event)

    def refresh(self) -> None:
        """Channels and their status, read off the GUI thread."""
        center = self.center

        def read() -> tuple[list[Channel], dict[int, ChannelStatus]]:
            return center.channels.all(), center.statuses()

        run_in_thread(read, on_result=self._show, on_error=self._said_error)

    def _show(self, read: tuple[list[Channel], dict[int, ChannelStatus]]) -> None:
        channels, statuses = read
        selected = self.selected()
        self.channels = channels
        self.table.setRowCount(len(channels))
        for row, c in enumerate(channels):
            name = c.label() if c.enabled else self.tr("{channel} (off)").format(channel=c.label())
            cells = [name, c.target(), str(c.quiet) if c.quiet else "",
                     status_text(statuses.get(c.id))]  # fmt: skip
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)  # plain text: a QTableWidgetItem's tooltip is not HTML
                self.table.setItem(row, col, item)
            if selected is not None and c.id == selected.id:
                self.table.selectRow(row)
        self._sync_buttons()

    def selected(self) -> Channel | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or rows[0].row() >= len(self.channels):
            return None
        return self.channels[rows[0].row()]

    def _sync_buttons(self) -> None:
        chosen = self.selected() is not None
        for b in (self.edit_btn, self.test_btn, self.remove_btn):
            b.setEnabled(chosen)

    def _said_error(self, exc: Exception) -> None:
        self.result.setText(str(exc))

    # --- acting ----------------------------------------------------------------------------
    def _adder(self, kind: str) -> Callable[[], None]:
        return lambda: self.add(kind)

    def ask(self, dialog: ChannelDialog) -> bool:
        """The dialog, modal (tests answer it instead)."""
        return dialog.exec() == QDialog.DialogCode.Accepted

    def add(self, kind: str) -> None:
        dialog = ChannelDialog(self.center, kind, parent=self)
        if self.ask(dialog):
            self._run(dialog.apply, lambda c: self.tr("Added {channel}: press Send test to try it.")
                      .format(channel=c.label()))  # fmt: skip

    def edit_selected(self) -> None:
        channel = self.selected()
        if channel is None:
            return
        dialog = ChannelDialog(self.center, channel.type, channel, parent=self)
        if self.ask(dialog):
            self._run(dialog.apply, lambda c: self.tr("Saved {channel}.").format(channel=c.label()))

    def remove_selected(self) -> None:
        channel = self.selected()
        if channel is not None:
            self._run(lambda: self.center.channels.remove(channel.id),
                      lambda c: self.tr("Removed {channel}; its secrets left the keyring.")
                      .format(channel=c.label()))  # fmt: skip

    def test_selected(self) -> None:
        channel = self.selected()
        if channel is None:
            return
        self.test_btn.setEnabled(False)
        self.result.setText(
            self.tr("Sending a test message through {channel} …").format(channel=channel.label())
        )
        center = self.center
        run_in_thread(
            lambda: center.send_test(channel.id),
            on_result=lambda r: self.result.setText(
                (
                    self.tr("{channel}: {result}")
                    if r.ok
                    else self.tr("{channel} failed: {result}")
                ).format(channel=channel.label(), result=r.text)
            ),
            on_error=self._said_error,
            on_finished=self._sync_buttons,
        )

    def _run(self, work: Callable[[], Any], said: Callable[[Any], str]) -> None:
        def done(value: Any) -> None:
            self.result.setText(said(value))
            self.refresh()

        def failed(exc: Exception) -> None:
            text = exc.message if isinstance(exc, ValidationError | UserError) else str(exc)
            self.result.setText(text)

        run_in_thread(work, on_result=done, on_error=failed)
