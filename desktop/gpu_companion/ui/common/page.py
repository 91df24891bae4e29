"""What every sidebar page is: a widget with a key, a title, an icon and a refresh()."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from PySide6.QtWidgets import QStackedWidget, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from gpu_companion.app import AppContext


class Page(QWidget):
    key: ClassVar[str] = ""
    title: ClassVar[str] = ""
    icon_name: ClassVar[str] = ""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx

    def refresh(self) -> None:
        """Re-read what the page shows; called when the page becomes visible."""


class EmptyStatePage(Page):
    """A page that shows its empty state until it has content (a stack of two widgets)."""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.stack = QStackedWidget()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.stack)
