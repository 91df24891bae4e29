""" "Open in browser" with no browser set: QDesktopServices.openUrl answers False, and the user is
told so, with the address to copy and a Copy button, instead of nothing happening."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

from gpu_companion.core.access.specs import TunnelSpec
from gpu_companion.core.access.tunnel import TunnelStatus
from gpu_companion.ui.common.access import AccessActions


def test_open_in_browser_without_a_browser_says_so_with_the_url_to_copy(ctx, qtbot) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    actions = AccessActions(ctx, parent)
    asked: list[str] = []

    def no_browser(url: str) -> bool:  # what QDesktopServices.openUrl answers with none set
        asked.append(url)
        return False

    actions.open_url = no_browser
    status = TunnelStatus(99, "gpu1", TunnelSpec("Web", 8080), "up", 18080, answers=True)
    actions.open_in_browser(status)
    assert asked == ["http://127.0.0.1:18080/"]
    dialog = actions.browser_failed
    assert dialog is not None and dialog.isVisible()
    assert dialog.url.text() == "http://127.0.0.1:18080/"
    assert "No web browser opened" in actions.last_message
    qtbot.mouseClick(dialog.copy, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == "http://127.0.0.1:18080/"
    dialog.close()


def test_a_browser_that_opens_shows_no_dialog(ctx, qtbot) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    actions = AccessActions(ctx, parent)
    actions.open_url = lambda url: True
    assert actions.browse("http://127.0.0.1:8888/?token=x")
    assert actions.browser_failed is None
