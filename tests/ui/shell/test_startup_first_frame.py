"""The first frame is the window alone: made without the `Qt` namespace, without any page and
without the host registry.

`PySide6.QtCore.Qt` makes its ~100 enums at once when first reached (15-20 ms), the start page
costs 20-30 ms more (its modules, widgets and first read) and the countdown banners load the
host registry (6 ms): together a third of a start-up measured against a bare Qt window
(benchmarks/startup.py, benchmarks/year_of_use.py). All come right after the first paint; the
window they leave is the same as before, checked here too.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from typing import Any

# Loaded right after the first paint, not before it: the host registry (with money, decimal)
# behind the countdown banners, the worker, the signal handlers, the notifier's json.
AFTER_PAINT = (
    "gpu_companion.core.hosts.registry",
    "gpu_companion.ui.release.countdown",
    "gpu_companion.ui.common.worker",
    "decimal",
    "signal",
    "json",
)

# What `gpu-companion` runs (cli.main, then app.run_gui), with a hook at the moment the first
# paint is reported: what exists then, and once it is past, what the window looks like.
PROBE = (
    f"AFTER_PAINT = {AFTER_PAINT!r}\n"
    + """
import sys
import gpu_companion.ui.shell.first_paint as fp
from PySide6 import QtCore
report = fp._FirstPaint._report

def first_frame_then_report(self):
    window = self.window
    seen = {
        "qt_namespace": "Qt" in QtCore.__dict__,
        "pages_built": [k for k in window.pages if window.pages.built(k)],
        "page_modules": sorted(m for m in sys.modules if m.startswith("gpu_companion.ui.")
                               and m.endswith(".page") and m != "gpu_companion.ui.common.page"),
        "after_paint": sorted(m for m in AFTER_PAINT if m in sys.modules),
        "start_key": window.current_key(),
    }
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QGuiApplication
    from PySide6.QtWidgets import QApplication, QToolBar

    toolbar = window.findChild(QToolBar, "mainToolbar")
    seen["toolbar_text_beside_icon"] = (
        toolbar.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    seen["rounding_pass_through"] = (QGuiApplication.highDpiScaleFactorRoundingPolicy()
                                     == Qt.HighDpiScaleFactorRoundingPolicy.PassThrough)
    seen["style"] = QApplication.style().name()
    print("seen:" + repr(seen), flush=True)
    report(self)

fp._FirstPaint._report = first_frame_then_report
from gpu_companion.cli import main
raise SystemExit(main([]))
"""
)


def _first_frame() -> dict[str, Any]:
    """The app's first frame on the test's data dir ($GPU_COMPANION_HOME, conftest)."""
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "GPU_COMPANION_EXIT_AFTER_FIRST_PAINT": "1",
    }
    env.pop("QT_STYLE_OVERRIDE", None)
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[-1] == "first-paint", out.stdout
    return dict(ast.literal_eval(next(ln for ln in lines if ln.startswith("seen:"))[5:]))


def test_the_first_frame_is_made_without_the_qt_namespace_and_without_a_page(app_paths):
    from gpu_companion.core.storage.store import Store

    for start in ("hosts", "spend"):  # a first start (the database made), a later one
        seen = _first_frame()
        assert seen["qt_namespace"] is False, "PySide6.QtCore.Qt was reached before the paint"
        assert seen["pages_built"] == [] and seen["page_modules"] == [], seen
        early = seen["after_paint"]
        if start == "hosts":  # the first start's migrations load sqlite-utils (json, decimal)
            early = [m for m in early if m.startswith("gpu_companion")]
        assert early == [], f"imported before the first paint: {early}"
        assert seen["start_key"] == start  # the sidebar already shows where the window opens
        # the window is the one these gave when they came before the paint
        assert seen["toolbar_text_beside_icon"] is True
        assert seen["rounding_pass_through"] is True
        assert str(seen["style"]).casefold() == "fusion"
        store = Store(app_paths.database)
        store.set_setting("ui.last_page", "spend")  # as a user who left it on the Spend page
        store.close()


def test_messages_still_reach_the_window_queued_from_any_thread(window, ctx, qtbot):
    """The window's queued connection is made with the first message, not before the paint:
    a message is still shown after the poster's call returns, never inside it."""
    import threading

    from gpu_companion.core.common.notifier import Level, Message

    ctx.notifier.post(Message(Level.WARNING, "from the GUI thread", key="a"))
    assert window.banners.banners() == []  # queued: not inside the poster's call
    qtbot.waitUntil(lambda: len(window.banners.banners()) == 1)
    poster = threading.Thread(
        target=lambda: ctx.notifier.post(Message(Level.WARNING, "from a thread", key="b"))
    )
    poster.start()
    poster.join(10)
    qtbot.waitUntil(lambda: len(window.banners.banners()) == 2)
    assert [b.label.text() for b in window.banners.banners()] == [
        "from a thread",
        "from the GUI thread",
    ]


def test_the_countdown_banners_are_made_right_after_the_first_paint(app_paths, qapp, qtbot):
    from gpu_companion.core.common.notifier import Level, Message
    from gpu_companion.services import build_services
    from gpu_companion.ui.shell.build import build_window

    ctx = build_services(app_paths)
    win = build_window(ctx)
    qtbot.addWidget(win)
    try:
        assert win._countdowns is None  # noqa: SLF001 - not before the paint
        assert "registry" not in ctx.__dict__  # nor the host registry they follow
        win.show()
        qtbot.waitUntil(lambda: win.first_paint_done, timeout=10000)
        assert win._countdowns is not None  # noqa: SLF001
        # a countdown's notice is theirs to show: a banner with the ladder's answers
        ctx.notifier.post(Message(Level.WARNING, "box: releasing in 10 min", key="autorelease:box"))
        qtbot.waitUntil(lambda: win.countdowns.banner("box") is not None)
    finally:
        win.quitting = True
        win.close()
        ctx.close()
