"""SVG icons from resources/, tinted to the palette and rendered per device pixel ratio."""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QRectF, QSize
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QIconEngine, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

# the shipped resources folder (a package of its own, mapped in pyproject.toml)
RESOURCES = Path(importlib.import_module("gpu_companion.resources").__file__ or ".").parent


# the window's first frame paints these icons: before `Qt` is made (ui/shell/main_window.py)
TRANSPARENT = QColor(0, 0, 0, 0)


@cache
def svg_text(name: str) -> str:
    return (RESOURCES / "icons" / f"{name}.svg").read_text()


class _SvgIconEngine(QIconEngine):
    """Renders the tinted SVG at the size and pixel ratio asked for, when first asked: the
    first window paints without rendering six sizes of every sidebar and toolbar icon."""

    def __init__(self, data: QByteArray) -> None:
        super().__init__()
        self._data = data
        self._renderer: QSvgRenderer | None = None
        self._cache: dict[tuple[int, int, float, bool], QPixmap] = {}

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        if self._renderer is None:
            self._renderer = QSvgRenderer(self._data)
        if mode == QIcon.Mode.Disabled:
            painter.setOpacity(0.4)
        self._renderer.render(painter, QRectF(rect))

    def scaledPixmap(  # noqa: N802 (Qt's name)
        self, size: QSize, mode: QIcon.Mode, state: QIcon.State, scale: float
    ) -> QPixmap:
        key = (size.width(), size.height(), scale, mode == QIcon.Mode.Disabled)
        if key not in self._cache:
            px = QPixmap(size * scale)
            px.setDevicePixelRatio(scale)
            px.fill(TRANSPARENT)  # Qt.GlobalColor.transparent, without the Qt namespace
            painter = QPainter(px)
            self.paint(painter, QRect(0, 0, size.width(), size.height()), mode, state)
            painter.end()
            self._cache[key] = px
        return self._cache[key]

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        return self.scaledPixmap(size, mode, state, 1.0)

    def clone(self) -> QIconEngine:
        return _SvgIconEngine(self._data)


def icon(name: str, color: QColor | None = None) -> QIcon:
    """An icon whose `currentColor` follows the palette's text colour (light and dark themes)."""
    if color is None:
        app = QGuiApplication.instance()
        color = (
            app.palette().windowText().color()
            if isinstance(app, QGuiApplication)
            else QColor("black")
        )
    data = QByteArray(svg_text(name).replace("currentColor", color.name()).encode())
    return QIcon(_SvgIconEngine(data))
