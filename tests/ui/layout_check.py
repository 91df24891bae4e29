"""Checks that a window's buttons can be seen and reached at a given size: no visible button is
cut off by a parent (scroll areas excepted: what they hide can be scrolled to)."""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtWidgets import QAbstractButton, QAbstractScrollArea, QWidget


def _scrolls(widget: QWidget) -> bool:
    """Whether `widget` is a scroll area's viewport: its children may lie outside, scrolled."""
    parent = widget.parentWidget()
    return isinstance(parent, QAbstractScrollArea) and parent.viewport() is widget


def _name(widget: QWidget) -> str:
    text = widget.text() if isinstance(widget, QAbstractButton) else ""
    return f"{type(widget).__name__}({widget.objectName() or text!r})"


def clipped_buttons(root: QWidget, slack: int = 1) -> list[str]:
    """Each visible button under `root` whose rectangle leaves one of its visible parents'."""
    problems: list[str] = []
    for button in root.findChildren(QAbstractButton):
        if not button.isVisible() or button.width() <= 0:
            continue
        hint = button.minimumSizeHint()
        if button.width() + slack < hint.width() or button.height() + slack < hint.height():
            problems.append(
                f"{_name(button)} squeezed to {button.size().toTuple()} under its minimum "
                f"{hint.toTuple()} (in {_name(root)})"
            )
            continue
        rect = QRect(button.rect())
        child: QWidget = button
        parent = button.parentWidget()
        while parent is not None:
            rect.translate(child.pos())
            if _scrolls(parent):  # hidden by scrolling, not cut off: it can be scrolled to
                break
            bounds = parent.rect().adjusted(-slack, -slack, slack, slack)
            if not bounds.contains(rect):
                problems.append(
                    f"{_name(button)} at {rect.getRect()} outside {_name(parent)} "
                    f"{parent.rect().getRect()} (in {_name(root)})"
                )
                break
            if parent is root or parent.isWindow():
                break
            child, parent = parent, parent.parentWidget()
    return problems
