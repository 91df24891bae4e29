"""What every page uses: the off-GUI-thread worker, shared widgets, table models, icons and
the page base.

The first `gpu_companion.ui` module the app imports, so it also spares the start-up PySide's
`__feature__` scan (see `_skip_feature_scan`)."""

from __future__ import annotations

import sys


def _skip_feature_scan() -> None:
    """Once PySide6 is loaded, every import statement hands the module it names to PySide's
    `__feature__` check, which reads that module's whole source the first time (to see whether
    it says "PySide6"): typing, inspect, datetime, threading, logging and the rest, 8-9 ms
    before the window's first paint. The app selects no `__feature__` (snake_case,
    true_property) anywhere. The modules loaded by now are entered in PySide's published table
    (PYSIDE-1019) with what that check concludes without a feature: the app's own as modules
    that may use PySide6 (0), the rest (the standard library, platformdirs) as modules the
    feature switching ignores (-1). Modules loaded later are checked by PySide as before."""
    feature = sys.modules.get("PySide6.support.feature")
    table = getattr(feature, "pyside_feature_dict", None)
    if not isinstance(table, dict):  # another PySide6: its own check runs, as before
        return
    for name in list(sys.modules):
        if name.startswith(("PySide6", "shiboken6", "shibokensupport", "__feature__")):
            continue
        table.setdefault(name, 0 if name.split(".")[0] == "gpu_companion" else -1)


_skip_feature_scan()
