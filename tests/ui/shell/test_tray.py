"""The tray through its model: icon state, tooltip, menu entries, notifications; banners where
no tray exists; the window stays in the tray while a rental runs."""

from datetime import timedelta, timezone

import pytest
from PySide6.QtWidgets import QSystemTrayIcon

from gpu_companion.core.common.notifier import Level, Message
from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.ui.shell.tray import Tray, notification_for
from gpu_companion.ui.shell.tray_model import TrayModel


def _setup(ctx, manual_clock):
    ctx.ledger.clock = manual_clock
    ctx.ledger.tz = timezone.utc
    ctx.store.set_setting("alerts.quiet_hour", "")
    p = ctx.registry.save_platform(Platform("vast.ai", "", "second", "USD"))
    h = ctx.registry.save_host(Host("vast-4090", "ssh4.vast.ai", 41022, "root", p.id, "4090", 1))
    return p, h


def _read(tray, qtbot):  # type: ignore[no-untyped-def]
    """The tray reads the ledger off the GUI thread: wait until what it asked for is applied."""
    qtbot.waitUntil(lambda: not tray.busy(), timeout=10000)


def test_a_stopped_instance_shows_as_stopped_and_its_disk_still_counts(ctx, manual_clock, qtbot):
    p, h = _setup(ctx, manual_clock)
    ctx.ledger.start_rental(p.id, "0.01", host_id=h.id, billing_mode="stopped")
    manual_clock.advance(hours=10)
    snap = TrayModel(ctx.ledger, ctx.budgets).snapshot()
    assert snap.tooltip.startswith("GPU Companion — 0 running, 1 stopped, $0.01/h")
    assert [e.text for e in snap.entries] == ["vast-4090 (stopped: disk billed) · 10 h · $0.10"]


def test_icon_state_tooltip_and_menu_follow_the_ledger(ctx, manual_clock, qtbot):
    p, h = _setup(ctx, manual_clock)
    model = TrayModel(ctx.ledger, ctx.budgets)
    snap = model.snapshot()
    assert snap.state == "idle" and snap.entries == []
    assert snap.tooltip == "GPU Companion — nothing running\nToday: 0"

    r = ctx.ledger.start_rental(p.id, "2.40", host_id=h.id)
    manual_clock.advance(hours=2, minutes=15)
    snap = model.snapshot()
    assert snap.state == "ok"
    assert snap.tooltip == "GPU Companion — 1 running, $2.40/h\nToday: $5.40"
    assert [e.text for e in snap.entries] == ["vast-4090 · 2 h 15 min · $5.40"]

    ctx.budgets.set_budget("day", "6", "USD")
    assert model.snapshot().state == "warning"  # $5.40 of $6: 90%
    manual_clock.advance(minutes=20)
    snap = model.snapshot()
    assert snap.state == "over" and "Over budget" in snap.tooltip
    ctx.ledger.end_rental(r.id)
    assert model.snapshot().state == "over"  # the day is still over budget
    manual_clock.advance(days=1)
    assert model.snapshot().state == "idle"


def test_menu_lists_running_rentals_and_opens_the_pages(ctx, manual_clock, qtbot):
    p, h = _setup(ctx, manual_clock)
    opened, shown, released = [], [], []
    tray = Tray(
        lambda: shown.append(1),
        lambda: None,
        lambda m: None,
        available=False,
        model=TrayModel(ctx.ledger, ctx.budgets),
        navigate=opened.append,
        alerts=ctx.alerts,
        open_release=released.append,
    )
    try:
        assert [a.text() for a in tray.actions() if a.text()] == [
            "Open GPU Companion",
            "Spend",
            "Quit",
        ]
        r = ctx.ledger.start_rental(p.id, "1", host_id=h.id, max_runtime=timedelta(minutes=20))
        manual_clock.advance(minutes=90)
        tray.refresh()
        _read(tray, qtbot)
        texts = [a.text() for a in tray.actions() if a.text()]
        assert texts[1] == "vast-4090 · 1 h 30 min · $1.50"
        assert texts[2:6] == [
            "Open the monitor",
            "Release checklist",
            "Snooze its alerts for 1 hour",
            "Mute its alerts",
        ]
        actions = {a.text(): a for a in tray.actions()}
        actions["Release checklist"].trigger()
        actions["Open the monitor"].trigger()
        actions["Spend"].trigger()
        assert released == ["vast-4090"]  # the checklist opens on this rental's host
        assert opened == ["monitor", "spend"] and len(shown) == 3
        actions["Snooze its alerts for 1 hour"].trigger()
        assert ctx.alerts.suppressed(r.id, "runtime")
        manual_clock.advance(minutes=61)
        assert not ctx.alerts.suppressed(r.id, "runtime")
        actions["Mute its alerts"].trigger()
        manual_clock.advance(days=3)
        assert ctx.alerts.suppressed(r.id, "idle")
    finally:
        tray.hide()
        tray.deleteLater()


@pytest.mark.qt_log_ignore("This plugin does not support")  # the popup, offscreen
def test_an_open_menu_is_not_rebuilt_under_the_pointer(ctx, manual_clock, qtbot):
    """The 30 s refresh leaves an open menu alone; the next opening shows what changed."""
    p, h = _setup(ctx, manual_clock)
    tray = Tray(lambda: None, lambda: None, lambda m: None, available=False,
                model=TrayModel(ctx.ledger, ctx.budgets))  # fmt: skip
    try:
        ctx.ledger.start_rental(p.id, "1", host_id=h.id)
        manual_clock.advance(minutes=10)
        tray.refresh()
        _read(tray, qtbot)
        tray.menu.popup(tray.menu.pos())
        qtbot.waitUntil(tray.menu.isVisible)

        def named() -> list:  # type: ignore[type-arg]
            return [a for a in tray.actions() if a.text()]

        browsing = named()[2]  # "Open the monitor" in the rental's submenu
        manual_clock.advance(minutes=30)
        tray.tick()
        _read(tray, qtbot)  # read and applied while the menu is open
        assert named()[2] is browsing and browsing.text() == "Open the monitor"
        assert named()[1].text() == "vast-4090 · 10 min · $0.17"
        tray.menu.hide()  # aboutToHide
        tray.menu.aboutToShow.emit()  # opened again: built from the latest refresh
        assert named()[1].text() == "vast-4090 · 40 min · $0.67"
    finally:
        tray.hide()
        tray.deleteLater()


def test_notifications_map_levels_to_tray_balloons():
    title, text, kind = notification_for(Message(Level.ERROR, "Over budget", source="spend"))
    assert (title, text, kind) == (
        "GPU Companion — spend",
        "Over budget",
        QSystemTrayIcon.MessageIcon.Critical,
    )
    assert notification_for(Message(Level.WARNING, "x"))[2] is QSystemTrayIcon.MessageIcon.Warning


def test_alerts_become_banners_without_a_tray_and_the_window_stays_while_billing(
    window, ctx, manual_clock, qtbot
):
    p, h = _setup(ctx, manual_clock)
    assert window.tray is not None and not window.tray.available
    ctx.ledger.start_rental(p.id, "3", host_id=h.id, max_runtime=timedelta(hours=1))
    manual_clock.advance(minutes=50)
    ctx.alerts.check()  # what the always-on loop does every 30 s, off the GUI thread
    window.tray.tick()  # the tray only shows the state
    qtbot.waitUntil(lambda: len(window.banners.banners()) == 1)
    banner = window.banners.banners()[0]
    assert "vast-4090 reaches its planned runtime in 10 min" in banner.label.text()
    _read(window.tray, qtbot)
    assert window.tray.state == "ok"

    msg = ctx.alerts.on_idle("vast-4090", manual_clock.now() - timedelta(hours=3))
    assert msg is not None
    qtbot.waitUntil(lambda: len(window.banners.banners()) == 2)
    assert window.banners.banners()[0].label.text().startswith("3 h idle = $9 so far")

    quits = []
    window.quit_app = lambda: quits.append(1)
    from tests.ui.shell.test_quit import _answer

    seen: list[str] = []
    _answer("Quit anyway", seen)
    window.close()
    assert window.keep_in_tray is True  # set from the ledger before the close is handled
    assert quits == [1]  # ...but without a tray, closing quits (after saying what runs on)
    assert "still metered" in seen[0]
