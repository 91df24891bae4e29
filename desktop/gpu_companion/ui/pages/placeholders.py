"""Pages whose feature is not built yet: each says what it will hold and what to do first."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QVBoxLayout, QWidget

from gpu_companion.ui.pages.base import Page
from gpu_companion.ui.widgets import EmptyState

if TYPE_CHECKING:
    from gpu_companion.app import AppContext


class _Placeholder(Page):
    heading = ""
    text = ""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        lay = QVBoxLayout(self)
        self.empty = EmptyState(
            self.icon_name,
            self.heading,
            self.text,
            [("Add a host", lambda: ctx.navigate("hosts"))],
        )
        lay.addWidget(self.empty)


class MonitorPage(_Placeholder):
    key, title, icon_name = "monitor", "Monitor", "monitor"
    heading = "Nothing to monitor yet"
    text = (
        "Live graphs of every GPU on every rented host will show here. Add a host to start; the "
        "live monitor arrives in a later version."
    )
