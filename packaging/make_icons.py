#!/usr/bin/env python3
"""PNG icons at the standard sizes from the SVG master, rendered by Qt's own SVG renderer.

    python packaging/make_icons.py --out build/icons [--iconset build/gpu-companion.iconset]

Writes a freedesktop hicolor tree (NxN/apps/gpu-companion.png and scalable/apps/gpu-companion.svg)
and, on request, a macOS .iconset folder for `iconutil -c icns`. Qt renders the SVG, so no
ImageMagick or librsvg build is needed and every platform gets the same pixels.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MASTER = REPO / "resources" / "icons" / "app.svg"
NAME = "gpu-companion"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)
ICONSET = {  # macOS iconset file name -> pixel size
    "icon_16x16.png": 16,
    "icon_16x16@2x.png": 32,
    "icon_32x32.png": 32,
    "icon_32x32@2x.png": 64,
    "icon_128x128.png": 128,
    "icon_128x128@2x.png": 256,
    "icon_256x256.png": 256,
    "icon_256x256@2x.png": 512,
    "icon_512x512.png": 512,
    "icon_512x512@2x.png": 1024,
}


def render(svg: Path, size: int, dest: Path) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        sys.exit(f"{svg} is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    dest.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(dest), "PNG"):
        sys.exit(f"could not write {dest}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the hicolor tree")
    parser.add_argument("--iconset", type=Path, help="also write a macOS .iconset folder")
    parser.add_argument("--svg", type=Path, default=MASTER)
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication.instance() or QGuiApplication([])  # noqa: F841 (QImage needs it)
    hicolor = args.out / "hicolor"
    for size in SIZES:
        render(args.svg, size, hicolor / f"{size}x{size}" / "apps" / f"{NAME}.png")
    (hicolor / "scalable" / "apps").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(args.svg, hicolor / "scalable" / "apps" / f"{NAME}.svg")
    if args.iconset:
        for filename, size in ICONSET.items():
            render(args.svg, size, args.iconset / filename)
    print(f"icons: {len(SIZES)} PNG sizes and the SVG under {hicolor}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
