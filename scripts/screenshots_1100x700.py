#!/usr/bin/env python3
"""Every page at 1100×700, the smallest window the app is laid out for, into
docs/screenshots/KEY-1100x700.png (under Xvfb, as scripts/screenshots.py does):

    python scripts/screenshots_1100x700.py [--out docs/screenshots] [--pages hosts,spend]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import screenshots  # noqa: E402

if __name__ == "__main__":
    from gpu_companion.ui.shell.build import PAGES

    args = sys.argv[1:]
    if "--pages" not in args:
        args += ["--pages", ",".join(p.key for p in PAGES)]
    sys.argv = [sys.argv[0], *args, "--size", "1100x700"]
    sys.exit(screenshots.main())
