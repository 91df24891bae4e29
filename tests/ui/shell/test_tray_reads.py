"""The tray stays cheap on the GUI thread with many rented hosts: its refresh reads the ledger off
the GUI thread and builds no menu; the menu is made when it opens, each rental's submenu (the
host's doors, which read the store) when that opens; rapid ledger changes coalesce."""

from __future__ import annotations

import threading
from datetime import timezone

import pytest
from PySide6.QtWidgets import QMenu

import gpu_companion.ui.shell.build as shell_build
from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.ui.shell.tray import Tray
from gpu_companion.ui.shell.tray_model import TrayModel
from tests.ui.store_use import StoreUse

HOSTS = 12


def _rented(ctx, manual_clock, n: int = HOSTS) -> list[str]:  # type: ignore[no-untyped-def]
    """`n` hosts, each with a running rental, an hour in."""
    ctx.ledger.clock = manual_clock
    ctx.ledger.tz = timezone.utc
    ctx.store.set_setting("alerts.quiet_hour", "")
    p = ctx.registry.save_platform(Platform("vast.ai", "", "second", "USD"))
    aliases = []
    for i in range(n):
        h = ctx.registry.save_host(Host(f"gpu{i:02d}", f"192.0.2.{i + 1}", 22, "root", p.id))
        ctx.ledger.start_rental(p.id, "1.20", host_id=h.id)
        aliases.append(h.alias)
    manual_clock.advance(hours=1)
    return aliases


def _hold_snapshots(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Each tray snapshot waits (on its worker) until the returned event is set, then reads the
    ledger as before."""
    gate = threading.Event()
    snapshot = TrayModel.snapshot

    def held(model):  # type: ignore[no-untyped-def]
        gate.wait(10)
        return snapshot(model)

    monkeypatch.setattr(TrayModel, "snapshot", held)
    return gate


def _read(tray: Tray, qtbot) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: not tray.busy(), timeout=10000)


def _tray(ctx, **kw) -> Tray:  # type: ignore[no-untyped-def]
    return Tray(
        lambda: None,
        lambda: None,
        lambda m: None,
        available=False,
        model=TrayModel(ctx.ledger, ctx.budgets),
        alerts=ctx.alerts,
        **kw,
    )


def test_a_refresh_reads_off_the_gui_thread_and_builds_no_menu(
    ctx, manual_clock, qtbot, monkeypatch
):
    aliases = _rented(ctx, manual_clock)
    filled: list[str] = []
    use = StoreUse(monkeypatch)
    tray = _tray(ctx, fill_host_menu=lambda menu, alias: filled.append(alias))
    try:
        _read(tray, qtbot)
        for _ in range(3):  # the half-minute refresh, and a change in the ledger
            manual_clock.advance(minutes=30)
            tray.tick()
            _read(tray, qtbot)
            before = tray.reads
            tray.ledger_changed.emit()
            qtbot.waitUntil(lambda b=before: tray.reads == b + 1)  # queued to the GUI thread
            _read(tray, qtbot)
        assert use.on_gui == [], use.on_gui[0]
        assert use.off_gui  # read, in workers
        assert tray.state == "ok" and tray.tooltip.startswith(f"GPU Companion — {HOSTS} running")
        assert [e.host_alias for e in tray._entries] == aliases
        assert tray.menus_made == 0 and QMenu.actions(tray.menu) == []  # nothing built
        assert filled == []
        # asked for (tests, accessibility), the menu is made from the latest snapshot
        texts = [a.text() for a in tray.actions() if a.text()]
        assert texts[1] == "gpu00 · 2 h 30 min · $3.00"
        assert tray.menus_made == 1 and filled == aliases
    finally:
        tray.hide()
        tray.deleteLater()


def test_opening_the_menu_lists_every_rental_and_a_submenu_fills_when_it_opens(
    window, ctx, manual_clock, qtbot, monkeypatch
):
    aliases = _rented(ctx, manual_clock)
    tray = window.tray
    qtbot.waitUntil(lambda: tray.model is not None, timeout=10000)  # attached after the paint
    qtbot.waitUntil(lambda: len(tray._entries) == HOSTS, timeout=10000)
    _read(tray, qtbot)
    assert tray.menus_made == 0  # no refresh built it
    doors: list[str] = []
    fill = shell_build._fill_host_menu

    def counted(win, menu, alias):  # type: ignore[no-untyped-def]
        doors.append(alias)
        fill(win, menu, alias)

    monkeypatch.setattr(shell_build, "_fill_host_menu", counted)
    use = StoreUse(monkeypatch)
    tray.menu.aboutToShow.emit()  # the user opens the tray's menu
    assert use.on_gui == [], use.on_gui[0]  # the entries come from the snapshot
    assert doors == []  # no host's doors read yet
    entries = [a for a in QMenu.actions(tray.menu) if a.menu() is not None]
    assert [a.text() for a in entries] == [f"{a} · 1 h · $1.20" for a in aliases]
    assert all(QMenu.actions(a.menu()) == [] for a in entries)  # submenus made when opened
    sub = entries[3].menu()
    sub.aboutToShow.emit()  # the pointer rests on the fourth rental
    assert doors == [aliases[3]]
    texts = [a.text() for a in QMenu.actions(sub) if a.text()]
    assert texts[:2] == ["Open the monitor", "Release checklist"]
    assert "Open terminal" in texts and texts[-2:] == [
        "Snooze its alerts for 1 hour",
        "Mute its alerts",
    ]
    tray.menu.aboutToHide.emit()
    tray.menu.aboutToShow.emit()  # opened again, nothing changed: the same menu
    assert tray.menus_made == 1
    sub.aboutToShow.emit()  # a submenu opened again reads its host's doors afresh (tunnels)
    assert doors == [aliases[3]] * 2


def test_rapid_ledger_changes_coalesce_into_one_more_snapshot(
    ctx, manual_clock, qtbot, monkeypatch
):
    _rented(ctx, manual_clock, 2)
    gate = _hold_snapshots(monkeypatch)
    tray = _tray(ctx)
    try:
        qtbot.waitUntil(lambda: tray.reads == 1)  # the first read, held
        platform = ctx.registry.platforms()[0]

        def changes() -> None:  # a provider sync elsewhere: every change posts a refresh
            for _ in range(20):
                ctx.ledger.start_rental(platform.id, "0.10")

        writer = threading.Thread(target=changes)
        writer.start()
        writer.join()
        for _ in range(5):
            tray.tick()
        qtbot.wait(50)  # the queued refreshes arrive
        assert tray.reads == 1 and tray.busy()  # asked for, not queued
        gate.set()
        _read(tray, qtbot)
        assert tray.reads == 2  # one more read, for all of them
        assert len(tray._entries) == 22  # and it saw every change
    finally:
        gate.set()
        tray.hide()
        tray.deleteLater()


def test_an_auto_release_countdown_marks_its_rental_in_the_menu_without_a_read(
    ctx, manual_clock, qtbot
):
    """The title says "auto-release pending" from the countdowns' own state (no SQL); a change
    in the answers makes the menu again when next opened, without reading the ledger."""
    aliases = _rented(ctx, manual_clock, 3)
    pending: set[str] = set()

    def answers(alias: str):  # type: ignore[no-untyped-def]
        return [("Keep running", lambda: pending.discard(alias))] if alias in pending else []

    tray = _tray(ctx, answers=answers)
    try:
        _read(tray, qtbot)
        reads = tray.reads
        pending.add(aliases[1])
        tray.answers_changed()
        titles = [a.text() for a in tray.menu.actions() if a.menu() is not None]
        assert titles[1] == "gpu01 · 1 h · $1.20 · auto-release pending"
        assert "pending" not in titles[0] + titles[2]
        keep = next(a for a in tray.actions() if a.text() == "Keep running")
        keep.trigger()
        tray.answers_changed()
        assert not [a for a in tray.actions() if a.text() == "Keep running"]
        assert tray.reads == reads and tray.menus_made == 2
    finally:
        tray.hide()
        tray.deleteLater()


def test_a_tray_hidden_as_the_app_quits_reads_no_more(ctx, manual_clock, qtbot, monkeypatch):
    """The read running ends without another after it, and a refresh queued meanwhile reads
    nothing: no read reaches the store once the services close."""
    _rented(ctx, manual_clock, 1)
    gate = _hold_snapshots(monkeypatch)
    tray = _tray(ctx)
    try:
        qtbot.waitUntil(lambda: tray.reads == 1)
        tray.tick()  # one more asked for
        assert tray.busy()
        tray.hide()
        gate.set()
        _read(tray, qtbot)
        tray.refresh()
        tray.ledger_changed.emit()
        qtbot.wait(50)
        assert tray.reads == 1 and not tray.busy()
        assert tray.tooltip.startswith("GPU Companion — 1 running")  # the last read still shows
    finally:
        gate.set()
        tray.deleteLater()
