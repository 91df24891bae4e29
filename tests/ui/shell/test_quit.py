"""Quit means quit: the tray's Quit ends the app (it never only hides the window), asking first
while a rental is metered and saying what keeps running, and costing, on the provider; closing the
window without a tray says the same before the app exits."""

from __future__ import annotations

from datetime import timezone

import pytest
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMessageBox

from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.core.spend.quitting import still_running_text
from gpu_companion.ui.shell.tray import Tray


def _rent(ctx, manual_clock, rate="2.40"):
    ctx.ledger.clock = manual_clock
    ctx.ledger.tz = timezone.utc
    p = ctx.registry.save_platform(Platform("vast.ai", "", "second", "USD"))
    h = ctx.registry.save_host(Host("vast-4090", "ssh4.vast.ai", 41022, "root", p.id, "4090", 1))
    ctx.ledger.start_rental(p.id, rate, host_id=h.id)
    manual_clock.advance(hours=2, minutes=15)


def _answer(button_text: str, seen: list[str]) -> None:
    """Click `button_text` on the quit confirmation once it is shown (it runs its own loop)."""

    def look() -> None:
        box = next(
            (
                w
                for w in QApplication.topLevelWidgets()
                if isinstance(w, QMessageBox) and w.objectName() == "quitConfirm" and w.isVisible()
            ),
            None,
        )
        if box is None:
            QTimer.singleShot(20, look)
            return
        seen.append(f"{box.windowTitle()}\n{box.text()}")
        button = next(b for b in box.buttons() if b.text().replace("&", "") == button_text)
        button.click()

    QTimer.singleShot(0, look)


def _tray_quit(tray: Tray) -> None:
    next(a for a in tray.actions() if a.text() == "Quit").trigger()


def test_tray_quit_with_nothing_metered_quits_without_asking(window, ctx):
    quits: list[int] = []
    window.quit_app = lambda: quits.append(1)
    assert still_running_text(ctx.ledger) == ""
    _tray_quit(window.tray)
    assert quits == [1]
    assert window.close()  # Qt closes the window as the app quits: nothing holds it back


# a tray icon on the offscreen platform: Qt says the platform has no tray window to follow
@pytest.mark.qt_log_ignore("No such signal QPlatformNativeInterface::systemTrayWindowChanged")
def test_tray_quit_while_metered_asks_names_the_rental_and_then_quits(
    window, ctx, manual_clock, qtbot
):
    _rent(ctx, manual_clock)
    # a desktop with a tray: closing would normally keep the app in it
    tray = Tray(window.bring_forward, window.request_quit, lambda m: None, available=True)
    assert tray.icon is not None
    window.tray = tray
    quits: list[int] = []
    window.quit_app = lambda: quits.append(1)

    seen: list[str] = []
    _answer("Cancel", seen)
    _tray_quit(tray)
    assert quits == [] and window.isVisible()  # cancelled: nothing changes
    title, text = seen[0].split("\n", 1)
    assert title == "Quit GPU Companion?"
    assert text.startswith("1 rental is still metered:\n• vast-4090 on vast.ai: $2.40/h, 2 h 15")
    assert "($5.40)" in text
    assert "keeps running, and costing, on vast.ai until you release it there" in text

    _answer("Quit anyway", seen)
    _tray_quit(tray)
    assert quits == [1] and len(seen) == 2
    # quitting closes the window: accepted, not hidden-and-ignored (the old invisible process)
    assert window.close() and not window.isVisible()
    tray.hide()


def test_closing_without_a_tray_while_metered_says_so_before_exiting(
    window, ctx, manual_clock, qtbot
):
    _rent(ctx, manual_clock, rate="3")
    assert window.tray is not None and window.tray.icon is None  # offscreen: no system tray
    quits: list[int] = []
    window.quit_app = lambda: quits.append(1)
    seen: list[str] = []
    _answer("Cancel", seen)
    assert not window.close()
    assert window.isVisible() and quits == []
    assert seen[0].startswith("Close GPU Companion?\n1 rental is still metered:")
    assert "$3.00/h" in seen[0]

    _answer("Quit anyway", seen)
    assert window.close()
    assert quits == [1]


def test_the_warning_counts_every_billed_rental_and_skips_free_ones(ctx, manual_clock):
    _rent(ctx, manual_clock)
    p2 = ctx.registry.save_platform(Platform("RunPod", "", "second", "USD"))
    ctx.ledger.start_rental(p2.id, "1.10", gpu_model="A100")
    p3 = ctx.registry.save_platform(Platform("own box", "", "second", "USD"))
    ctx.ledger.start_rental(p3.id, "0", gpu_model="3090")  # bought hardware: not billed
    text = still_running_text(ctx.ledger)
    assert text.startswith("2 rentals are still metered:")
    assert "• RunPod A100 on RunPod: $1.10/h" in text
    assert "own box" not in text
    assert "on RunPod and vast.ai until you release them there" in text
