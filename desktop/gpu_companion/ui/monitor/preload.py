"""The Monitor's plotting libraries (numpy, pyqtgraph and the plots module), imported on a
worker thread right after the window's first paint, so that the first click on the Monitor
page does not pay their 0.25-0.9 s on the GUI thread.

pyqtgraph makes no QObject, widget, pixmap or font at import (module-level values are
QPainterPath and QTransform only), so a worker thread may import it. A GUI-thread import that
comes meanwhile (the Monitor clicked within that second) waits on Python's per-module import
lock for this one to end and pays only what is left. Nothing here runs before the first paint:
tests/ui/shell/test_startup_imports.py keeps numpy and pyqtgraph out of the first frame.
"""

from __future__ import annotations

import gc
import logging
import threading

log = logging.getLogger(__name__)

PLOTTING = ("numpy", "pyqtgraph", "gpu_companion.ui.monitor.plots")

_lock = threading.Lock()
_thread: threading.Thread | None = None


def preload_plotting() -> threading.Thread:
    """Start importing the plotting modules on a daemon thread (once per process: later calls
    return the same thread, to `join` when the import must be done)."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(
                target=_import_plotting, name="preload-plotting", daemon=True
            )
            _thread.start()
        return _thread


def preload_thread() -> threading.Thread | None:
    """The preload's thread once started (the app starts it right after its first paint)."""
    return _thread


def _import_plotting() -> None:
    """Import the plotting modules, then freeze what exists: by then the app's modules, its
    window and its pages are made and live as long as the process (~110,000 objects the
    collector tracks, nearly all functions, types and descriptors). CPython's full collection
    walks every one of them each time, 30-50 ms holding the GIL whichever thread runs it: it
    was the GUI thread's longest stall while a fleet streams. Frozen, they are out of its sight
    (a full collection walks what was made since); a cycle already garbage then is kept, once."""
    try:
        import gpu_companion.ui.monitor.plots  # noqa: F401 - numpy and pyqtgraph with it
    except Exception:  # noqa: BLE001 - the Monitor's own import will raise it where it is seen
        log.warning("preloading the plotting modules failed", exc_info=True)
    finally:
        gc.freeze()
