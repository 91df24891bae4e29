"""Tooltips that quote a host (an rsync error, a process name) show its characters, never its
markup: Qt renders a tooltip as rich text when it looks like HTML, so `<h1>` or `<img width=400>`
from a host would render. Checked the way Qt decides: mightBeRichText, then the text shown."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as QtGui
from PySide6.QtGui import QTextDocument

from gpu_companion.core.transfers.job import JobState, TransferJob
from gpu_companion.ui.common.models import RowTableModel
from gpu_companion.ui.common.plain_text import tooltip_text
from gpu_companion.ui.common.widgets import ElidedLabel
from gpu_companion.ui.transfers.model import TransferTableModel

HOSTILE = "rsync: <h1>BIG</h1><img width=400 src=x> & more\nsecond line"


def shown(tip: str) -> str:
    """The characters Qt shows for a tooltip."""
    doc = QTextDocument()
    if QtGui.mightBeRichText(tip):
        doc.setHtml(tip)
    else:
        doc.setPlainText(tip)
    return doc.toPlainText()


def test_the_helper_shows_exactly_the_hosts_characters(qtbot) -> None:
    assert QtGui.mightBeRichText(HOSTILE)  # so the checks below can fail
    assert shown(tooltip_text(HOSTILE)) == HOSTILE
    assert tooltip_text("plain words") == "plain words"
    assert tooltip_text("") == "" and tooltip_text(None) == ""
    assert shown(tooltip_text("a\x1b]52;c;eA==\x07b <i>")) == "ab <i>"


def test_a_transfer_error_tooltip_is_text(qtbot) -> None:
    model = TransferTableModel()
    job = TransferJob("gpu1", "upload", "/x", "y", id=1, state=JobState.FAILED, message=HOSTILE)
    model.set_jobs([job])
    tip = model.data(model.index(0, 0), Qt.ItemDataRole.ToolTipRole)
    assert shown(tip) == HOSTILE


def test_a_row_table_tooltip_is_text(qtbot) -> None:
    model: RowTableModel[str] = RowTableModel([("name", lambda r: r)])
    model.set_rows([HOSTILE])
    assert model.data(model.index(0, 0), Qt.ItemDataRole.DisplayRole) == HOSTILE
    assert shown(model.data(model.index(0, 0), Qt.ItemDataRole.ToolTipRole)) == HOSTILE


def test_an_elided_label_tooltip_is_text(qtbot) -> None:
    label = ElidedLabel(HOSTILE)
    qtbot.addWidget(label)
    assert shown(label.toolTip()) == HOSTILE
