"""App and tray icons: readable on light and dark panels; PNG sizes generated from the SVG."""

from __future__ import annotations

import subprocess
import sys

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

from tests.conftest import REPO

ICONS = REPO / "resources" / "icons"
PANELS = {"white": "#ffffff", "light grey": "#ececec", "dark grey": "#2d2d2d", "black": "#000000"}


def lightness(c: QColor) -> float:
    """CIE L* (0 black .. 100 white)."""

    def lin(v: int) -> float:
        s = v / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    y = 0.2126 * lin(c.red()) + 0.7152 * lin(c.green()) + 0.0722 * lin(c.blue())
    return 116 * y ** (1 / 3) - 16 if y > 0.008856 else 903.3 * y


def contrasting_share(svg: str, panel: str, size: int = 22) -> float:
    """Share of a panel-sized icon's pixels that stand out (ΔL* > 40) from the panel colour."""
    image = QImage(size, size, QImage.Format.Format_RGB32)
    image.fill(QColor(panel))
    painter = QPainter(image)
    QSvgRenderer(str(ICONS / svg)).render(painter, QRectF(0, 0, size, size))
    painter.end()
    ref = lightness(QColor(panel))
    hits = sum(
        abs(lightness(image.pixelColor(x, y)) - ref) > 40 for x in range(size) for y in range(size)
    )
    return hits / (size * size)


@pytest.mark.parametrize("svg", ["tray-idle.svg", "app.svg"])
@pytest.mark.parametrize("panel", list(PANELS))
def test_icon_reads_on_light_and_dark_panels(qapp, svg, panel):
    assert contrasting_share(svg, PANELS[panel]) >= 0.15


def test_tray_icon_still_reads_on_a_coloured_panel(qapp):
    assert contrasting_share("tray-idle.svg", "#3c6eb4") >= 0.10


def test_a_grey_on_grey_icon_would_fail_the_check(qapp, tmp_path, monkeypatch):
    """The measure can fail: a mid-grey glyph on a dark-grey panel does not stand out."""
    (tmp_path / "flat.svg").write_text(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8">'
        '<rect width="8" height="8" fill="#444444"/></svg>'
    )
    monkeypatch.setattr(sys.modules[__name__], "ICONS", tmp_path)
    assert contrasting_share("flat.svg", PANELS["dark grey"]) < 0.15


def test_make_icons_writes_every_standard_size(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            str(REPO / "packaging" / "make_icons.py"),
            "--out",
            str(tmp_path),
            "--iconset",
            str(tmp_path / "app.iconset"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    for size in (16, 22, 24, 32, 48, 64, 128, 256, 512):
        png = tmp_path / "hicolor" / f"{size}x{size}" / "apps" / "gpu-companion.png"
        image = QImage(str(png))
        assert (image.width(), image.height()) == (size, size)
        assert image.pixelColor(size // 2, size // 2).alpha() == 255  # drawn, not empty
        assert image.pixelColor(0, 0).alpha() == 0  # rounded corner stays transparent
    assert (tmp_path / "hicolor" / "scalable" / "apps" / "gpu-companion.svg").read_bytes() == (
        ICONS / "app.svg"
    ).read_bytes()
    assert QImage(str(tmp_path / "app.iconset" / "icon_512x512@2x.png")).width() == 1024
