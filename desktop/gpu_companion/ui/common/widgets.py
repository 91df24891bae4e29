"""Small shared widgets: the empty state every page shows first, and in-app banners.

The window's first frame imports this module (its banner area): `Qt` is imported where used,
so that namespace is made after the first paint (ui/shell/main_window.py says why)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gpu_companion.core.common.notifier import Level, Message
from gpu_companion.ui.common.icons import icon
from gpu_companion.ui.common.plain_text import tooltip_text


class ElidedLabel(QLabel):
    """One line of plain text (a path, an address) shortened with "…" in the middle when the
    window is narrow; the whole text stays in the tooltip and `full_text()`."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        from PySide6.QtCore import Qt

        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._full = ""
        self.set_full_text(text)

    def set_full_text(self, text: str) -> None:
        self._full = text
        self.setToolTip(tooltip_text(text))
        self._elide()

    def full_text(self) -> str:
        return self._full

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        height = super().minimumSizeHint().height()
        return QSize(self.fontMetrics().horizontalAdvance("…") * 8, height)

    def sizeHint(self) -> QSize:  # noqa: N802
        height = super().sizeHint().height()
        return QSize(self.fontMetrics().horizontalAdvance(self._full) + 4, height)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        from PySide6.QtCore import Qt

        metrics = self.fontMetrics()
        shown = metrics.elidedText(self._full, Qt.TextElideMode.ElideMiddle, self.width())
        if shown != self.text():
            super().setText(shown)


# the tallest a dialog asks to be: a 1100×700 window (a 1366×768 laptop less its panels)
DIALOG_MAX_HEIGHT = 640


class FormScroll(QScrollArea):
    """A tall form in a scroll area: as tall as it needs up to `max_height`, then it scrolls;
    as wide as the form, so only the height ever scrolls."""

    def __init__(self, layout: QLayout, max_height: int = DIALOG_MAX_HEIGHT) -> None:
        from PySide6.QtCore import Qt

        super().__init__()
        self.setObjectName("formScroll")
        self.max_height = max_height
        inner = QWidget()
        inner.setLayout(layout)
        layout.setContentsMargins(0, 0, 0, 0)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(inner)
        self.setMinimumWidth(inner.sizeHint().width() + self._bar())

    def _bar(self) -> int:
        return self.verticalScrollBar().sizeHint().width()

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        inner = self.widget()
        hint = inner.sizeHint() if inner is not None else QSize(0, 0)
        return QSize(hint.width() + self._bar(), min(hint.height(), self.max_height))


def scrolling(layout: QLayout, max_height: int = DIALOG_MAX_HEIGHT) -> FormScroll:
    return FormScroll(layout, max_height)


def form_error_label() -> QLabel:
    """The red message under a form, hidden until a save is refused."""
    label = QLabel()
    label.setObjectName("formError")
    label.setStyleSheet("color: #c53030;")
    label.setWordWrap(True)
    label.hide()
    return label


class EmptyState(QWidget):
    """A centred icon, heading, explanation and the next action."""

    def __init__(
        self,
        icon_name: str,
        heading: str,
        text: str,
        actions: list[tuple[str, Callable[[], object]]] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        from PySide6.QtCore import Qt

        super().__init__(parent)
        self.setObjectName("emptyState")
        lay = QVBoxLayout(self)
        lay.addStretch(1)
        pic = QLabel()
        pic.setPixmap(icon(icon_name).pixmap(64, 64))
        pic.setAlignment(Qt.AlignmentFlag.AlignCenter)
        lay.addWidget(pic)
        self.heading = QLabel(heading)
        self.heading.setAlignment(Qt.AlignmentFlag.AlignCenter)
        font = self.heading.font()
        font.setPointSizeF(font.pointSizeF() * 1.4)
        font.setBold(True)
        self.heading.setFont(font)
        lay.addWidget(self.heading)
        self.text = QLabel(text)
        self.text.setWordWrap(True)
        self.text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.text.setMinimumWidth(420)
        self.text.setMaximumWidth(560)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.text)
        row.addStretch(1)
        lay.addLayout(row)
        self.buttons: list[QPushButton] = []
        brow = QHBoxLayout()
        brow.addStretch(1)
        for label, slot in actions or []:
            b = QPushButton(label)
            b.clicked.connect(slot)
            brow.addWidget(b)
            self.buttons.append(b)
        brow.addStretch(1)
        lay.addLayout(brow)
        lay.addStretch(2)


_BANNER_COLORS = {
    Level.INFO: ("#e6f0fb", "#1a4971"),
    Level.WARNING: ("#fff4d6", "#6b4b00"),
    Level.ERROR: ("#fde2e1", "#7a1c17"),
}


class Banner(QFrame):
    """One in-app alert with a dismiss button (used where no system tray exists), and optional
    action buttons (an auto-release countdown's "Keep running", ...)."""

    dismissed = Signal()

    def __init__(self, message: Message, parent: QWidget | None = None) -> None:
        from PySide6.QtCore import Qt

        super().__init__(parent)
        self.setObjectName("banner")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(10, 6, 6, 6)
        self.label = QLabel(message.text)
        self.label.setTextFormat(Qt.TextFormat.PlainText)  # messages can quote a host's output
        self.label.setWordWrap(True)
        self.label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        lay.addWidget(self.label)
        self._actions = QHBoxLayout()
        lay.addLayout(self._actions)
        self.buttons: list[QPushButton] = []
        close = QToolButton()
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip(self.tr("Dismiss"))
        close.setAccessibleName(self.tr("Dismiss"))
        close.clicked.connect(self._dismiss)
        lay.addWidget(close)
        self.update_message(message)

    def update_message(self, message: Message) -> None:
        self.message = message
        bg, fg = _BANNER_COLORS[message.level]
        self.setStyleSheet(
            f"QFrame#banner {{ background: {bg}; border-radius: 6px; }} "
            f"QFrame#banner QLabel {{ color: {fg}; }}"
        )
        self.label.setText(message.text)

    def set_actions(self, actions: list[tuple[str, Callable[[], object]]]) -> None:
        """Replace the banner's buttons (none: a plain alert)."""
        for b in self.buttons:
            self._actions.removeWidget(b)
            b.deleteLater()
        self.buttons = []
        for label, slot in actions:
            b = QPushButton(label)
            b.clicked.connect(slot)
            self._actions.addWidget(b)
            self.buttons.append(b)

    def button(self, label: str) -> QPushButton | None:
        return next((b for b in self.buttons if b.text() == label), None)

    def dismiss(self) -> None:
        self._dismiss()

    def _dismiss(self) -> None:
        self.hide()
        self.dismissed.emit()
        QTimer.singleShot(0, self.deleteLater)


class BannerArea(QWidget):
    """A stack of banners at the top of the window; the newest first, at most `limit` shown."""

    def __init__(self, limit: int = 3, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.limit = limit
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(8, 4, 8, 0)
        self._lay.setSpacing(4)
        self._banners: list[Banner] = []

    def banners(self) -> list[Banner]:
        """The banners on show, newest first."""
        self._banners = [b for b in self._banners if not b.isHidden()]
        return list(self._banners)

    def with_key(self, key: str) -> Banner | None:
        return next((b for b in self.banners() if key and b.message.key == key), None)

    def _forget(self, banner: Banner) -> None:
        if banner in self._banners:
            self._banners.remove(banner)

    def show_message(self, message: Message) -> Banner:
        for b in self.banners():
            if message.key and b.message.key == message.key:
                b.update_message(message)
                return b
        banner = Banner(message, self)
        banner.dismissed.connect(lambda: self._forget(banner))  # before its deleteLater runs
        self._lay.insertWidget(0, banner)
        self._banners.insert(0, banner)
        banner.show()
        for old in self._banners[self.limit :]:
            old.hide()
            old.deleteLater()
        del self._banners[self.limit :]  # a deleted banner must not be touched again
        return banner
