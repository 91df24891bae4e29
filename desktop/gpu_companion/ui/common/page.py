"""What every sidebar page is: a widget with a key, a title, an icon and a refresh()."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol

from PySide6.QtWidgets import QStackedWidget, QVBoxLayout, QWidget

if TYPE_CHECKING:
    from gpu_companion.services import Services


class Navigator(Protocol):
    """What a page may ask of the window around it (the main window implements it)."""

    def navigate(self, key: str) -> Page: ...

    def open_release(self, alias: str) -> None: ...

    def open_wizard(self) -> None: ...

    def refresh_tray(self) -> None: ...


class Page(QWidget):
    key: ClassVar[str] = ""
    title: ClassVar[str] = ""
    icon_name: ClassVar[str] = ""

    def __init__(self, ctx: Services, nav: Navigator, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.nav = nav

    def refresh(self) -> None:
        """Re-read what the page shows; called when the page becomes visible."""


class EmptyStatePage(Page):
    """A page that shows its empty state until it has content (a stack of two widgets)."""

    def __init__(self, ctx: Services, nav: Navigator, parent: QWidget | None = None) -> None:
        super().__init__(ctx, nav, parent)
        self.stack = QStackedWidget()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.stack)
