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


class KeysPage(_Placeholder):
    key, title, icon_name = "keys", "Keys", "keys"
    heading = "No SSH keys yet"
    text = (
        "Each platform gets its own SSH key, kept in your system keyring, never in a plain file. "
        "Add a platform and a host first; key generation arrives in a later version."
    )


class TransfersPage(_Placeholder):
    key, title, icon_name = "transfers", "Transfers", "transfers"
    heading = "No transfers"
    text = (
        "Resumable, verified uploads and downloads will be queued here. Add a host to start; the "
        "transfer queue arrives in a later version."
    )


class ReleasePage(_Placeholder):
    key, title, icon_name = "release", "Release", "release"
    heading = "No instance to release"
    text = (
        "Before you release an instance, its backup checklist must pass here. Add a host to start; "
        "the release gate arrives in a later version."
    )


class SpendPage(_Placeholder):
    key, title, icon_name = "spend", "Spend", "spend"
    heading = "No rentals metered yet"
    text = (
        "Every rental will be metered here with budgets and alerts. Add a platform and a host to "
        "start; the spend ledger arrives in a later version."
    )
