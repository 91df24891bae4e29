"""SVG icons from resources/, tinted to the palette and rendered per device pixel ratio."""

from __future__ import annotations

from functools import cache
from importlib import resources

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QGuiApplication, QIcon, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer


@cache
def svg_text(name: str) -> str:
    return (resources.files("gpu_companion.resources") / "icons" / f"{name}.svg").read_text()


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
    renderer = QSvgRenderer(data)
    result = QIcon()
    ratio = 1.0
    app = QGuiApplication.instance()
    if isinstance(app, QGuiApplication) and app.primaryScreen():
        ratio = app.primaryScreen().devicePixelRatio()
    for size in (16, 24, 32, 48, 64, 128):
        px = QPixmap(QSize(size, size) * ratio)
        px.setDevicePixelRatio(ratio)
        px.fill(Qt.GlobalColor.transparent)
        painter = QPainter(px)
        renderer.render(painter, QRectF(0, 0, size, size))
        painter.end()
        result.addPixmap(px)
    return result
