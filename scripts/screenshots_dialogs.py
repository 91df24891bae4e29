#!/usr/bin/env python3
"""Every main dialog, as the app shows it at 1100×700, into docs/screenshots/dialogs/NAME.png
(or docs/screenshots/zh_CN/dialogs/ with --lang zh_CN):

    python scripts/screenshots_dialogs.py [--lang zh_CN] [--out DIR]

The dialogs and their demo data are the ones tests/ui/test_fits_1100x700.py checks for clipped
buttons (and tests/ui/test_chinese_window.py for English left in Chinese); each is rendered
offscreen with its own size hint and saved with QWidget.grab().
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", default="en", help="the app's language (en, zh_CN)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out = args.out or REPO / "docs" / "screenshots" / (
        "dialogs" if args.lang == "en" else f"{args.lang}/dialogs"
    )
    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    home = tempfile.mkdtemp(prefix="gc-dialogs-")
    os.environ["GPU_COMPANION_HOME"] = home
    sys.path.insert(0, str(REPO))

    from PySide6.QtWidgets import QApplication
    from tests.ui.test_fits_1100x700 import SIZE, _dialogs, _populate

    from gpu_companion.core.common.paths import AppPaths
    from gpu_companion.services import build_services
    from gpu_companion.ui.common.i18n import install_translators
    from gpu_companion.ui.shell.build import build_window

    app = QApplication([])
    app.setStyle("Fusion")
    install_translators(app, args.lang)
    ctx = build_services(AppPaths.default())
    window = build_window(ctx)
    window.resize(*SIZE)
    host = _populate(ctx)
    for name, make in _dialogs(ctx, window, host).items():
        dialog = make()
        dialog.show()
        dialog.resize(dialog.sizeHint().boundedTo(dialog.maximumSize()))
        app.processEvents()
        path = out / f"{name}.png"
        dialog.grab().save(str(path))
        print(path)
        dialog.close()
        dialog.deleteLater()
    window.quitting = True
    window.close()
    ctx.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
