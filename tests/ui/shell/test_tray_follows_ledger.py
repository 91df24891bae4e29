"""The tray follows the ledger at once (a rental started by the wizard, on a worker thread, shows
without waiting for the half-minute refresh), and one idle stretch is one alert, not two."""

from __future__ import annotations

import threading
from datetime import timezone

from PySide6.QtCore import QThread
from PySide6.QtWidgets import QSystemTrayIcon

from gpu_companion.core.common.notifier import Message
from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.core.monitor.collector import SamplesEvent, TimedSample
from gpu_companion.core.monitor.nvsmi import GpuSample


def _rented(ctx):  # type: ignore[no-untyped-def]
    p = ctx.registry.save_platform(Platform("vast.ai", "", "second", "USD"))
    return p, ctx.registry.save_host(Host("gpu1", "203.0.113.7", 41022, "root", p.id, "4090", 1))


def test_a_rental_started_elsewhere_shows_in_the_tray_at_once(window, ctx, qtbot) -> None:
    tray = window.tray
    qtbot.waitUntil(lambda: tray.model is not None, timeout=10000)  # attached after first paint
    tray.timer.stop()  # not the half-minute refresh: the ledger's own change
    assert "nothing running" in tray.tooltip
    p, h = _rented(ctx)
    threads: list[QThread] = []
    original = tray.refresh

    def refresh() -> None:
        threads.append(QThread.currentThread())
        original()

    tray.refresh = refresh  # type: ignore[method-assign]
    tray.ledger_changed.disconnect()
    from PySide6.QtCore import Qt

    tray.ledger_changed.connect(tray.refresh, Qt.ConnectionType.QueuedConnection)
    started = threading.Thread(  # as the wizard does: off the GUI thread
        target=lambda: ctx.ledger.start_rental(p.id, "2.40", host_id=h.id)
    )
    started.start()
    started.join(10)
    qtbot.waitUntil(lambda: "1 running" in tray.tooltip, timeout=3000)
    assert [e.host_alias for e in tray._entries] == ["gpu1"]
    assert threads and all(t is window.thread() for t in threads)  # hopped to the GUI thread
    rental = ctx.ledger.running_for_alias("gpu1")
    ctx.ledger.update_rental(rental.id, gpu_model="H100")  # an edit shows too
    ctx.ledger.end_rental(rental.id)
    qtbot.waitUntil(lambda: "nothing running" in tray.tooltip, timeout=3000)


def test_the_ledger_listener_goes_with_the_tray(ctx, qtbot) -> None:
    from gpu_companion.ui.shell.tray import Tray
    from gpu_companion.ui.shell.tray_model import TrayModel

    tray = Tray(lambda: None, lambda: None, lambda m: None, available=False)
    tray.attach(TrayModel(ctx.ledger, ctx.budgets))
    assert len(ctx.ledger.on_rentals_changed._items) >= 1
    before = len(ctx.ledger.on_rentals_changed._items)
    tray.hide()
    assert len(ctx.ledger.on_rentals_changed._items) == before - 1


def _tick(alias: str, t: float) -> SamplesEvent:
    sample = GpuSample(index=0, utilization_gpu=0, memory_used_mib=10, memory_total_mib=100)
    return SamplesEvent(alias, (TimedSample(t, sample),))


def test_an_idle_stretch_is_one_alert_not_two(window, ctx, qtbot, manual_clock) -> None:
    ctx.clock = manual_clock  # the monitor reads the services' clock, the alerts the ledger's
    ctx.ledger.clock = manual_clock
    ctx.ledger.tz = timezone.utc
    ctx.store.set_setting("alerts.quiet_hour", "")
    p, h = _rented(ctx)
    ctx.ledger.start_rental(p.id, "2.40", host_id=h.id)
    delivered: list[Message] = []
    tray = window.tray
    tray.icon = QSystemTrayIcon(tray)  # as where a tray exists: alerts become balloons
    tray.deliver = delivered.append  # type: ignore[method-assign]
    monitor = ctx.monitor()
    monitor.ingest(_tick("gpu1", manual_clock.now().timestamp()))
    manual_clock.advance(minutes=31)
    monitor.ingest(_tick("gpu1", manual_clock.now().timestamp()))
    qtbot.waitUntil(lambda: bool(delivered), timeout=5000)
    qtbot.wait(200)
    idle = [m for m in delivered if m.key == "idle:gpu1"]
    assert len(idle) == 1, [(m.source, m.text) for m in idle]
    assert idle[0].source == "spend" and "so far on gpu1" in idle[0].text  # the one with its cost
    assert not [b for b in window.banners.banners() if b.message.key == "idle:gpu1"]
