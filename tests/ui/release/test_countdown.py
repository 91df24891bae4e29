# ruff: noqa: F811  (the fixtures come from tests/harness/autorelease.py)
"""The auto-release countdown as the user meets it: the ladder's notice becomes a banner with the
time left and Keep running / Release now / Snooze 30 min, answered through the real
AutoReleaseService over the harness hosts (idle stand-in, real checklist over ssh, a `vastai`
stand-in recording its argv). Release now still needs a passed checklist."""

from __future__ import annotations

from gpu_companion.core.autorelease.ladder import Stage
from gpu_companion.ui.common import worker
from gpu_companion.ui.release.countdown import KEEP, RELEASE, SNOOZE, clock_text
from tests.harness.autorelease import (  # noqa: F401
    calls,
    rented,
    vast_api,
    wait_for_readings,
)
from tests.harness.util import wait_for

WAIT = 60_000


def _counting_down(rented, standin, qtbot):  # type: ignore[no-untyped-def]
    """The app's window over the rented fleet, the idle rule holding, the notice on show."""
    from gpu_companion.ui.shell.build import build_window

    s, host, rental, service, clock, marker, messages = rented
    s.__dict__["autorelease"] = service  # the window answers the service on the moved clock
    win = build_window(s)
    qtbot.addWidget(win)
    win.quitting = True  # qtbot's close at teardown quits without asking about the rental
    win.show()
    standin.configure(util="idle")  # 0 %, 70 W of 700 W
    wait_for_readings(service)
    wait_for(lambda: service.detectors["box-a"].idle_since is not None, 30, "idle")
    clock.advance(1.1)
    service.tick()
    qtbot.waitUntil(lambda: win.countdowns.banner("box-a") is not None, timeout=WAIT)
    return win, win.countdowns.banner("box-a")


def _history(win) -> list[str]:  # type: ignore[no-untyped-def]
    page = win.navigate("release")
    page.open_host("box-a")
    return [page.history.item(i).text() for i in range(page.history.count())]


def test_the_banner_counts_down_and_keep_running_cancels_the_case(
    rented,
    standin,
    vast_api,
    qtbot,
):
    s, host, rental, service, clock, marker, messages = rented
    marker.write_text("saved\n")  # the checklist would pass: only the user's answer stops it
    win, banner = _counting_down(rented, standin, qtbot)
    assert [b.text() for b in banner.buttons] == [KEEP, RELEASE, SNOOZE]
    assert "box-a: its GPUs are idle (GPU0: 0 %" in banner.label.text()
    assert "left, then the backup checklist runs unattended" in banner.label.text()
    left = banner.label.text().split("\n")[-1].split(" left")[0]
    assert left in (clock_text(60), clock_text(59), clock_text(58))
    banner.button(KEEP).click()
    qtbot.waitUntil(lambda: not banner.buttons, timeout=WAIT)
    assert service.case("box-a").stage is Stage.KEPT
    assert "box-a keeps running" in banner.label.text()
    clock.advance(2)  # the countdown would have ended twice over
    service.tick()
    assert calls(vast_api) == []
    assert s.registry.host("box-a").state == "active" and s.ledger.running()
    texts = _history(win)
    assert texts[0].endswith("Keep running")
    assert "Auto-release countdown started — idle (GPU0: 0 %, 70/700 W" in texts[1]
    worker.wait_all()


def test_release_now_with_a_failing_checklist_keeps_the_host(
    rented,
    standin,
    vast_api,
    qtbot,
):
    s, host, rental, service, clock, marker, messages = rented  # no marker: an item fails
    win, banner = _counting_down(rented, standin, qtbot)
    banner.button(SNOOZE).click()
    qtbot.waitUntil(lambda: (service.countdown("box-a") or 0) > 29 * 60, timeout=WAIT)
    qtbot.waitUntil(lambda: bool(banner.buttons) and banner.buttons[0].isEnabled(), timeout=WAIT)
    banner.button(RELEASE).click()
    qtbot.waitUntil(lambda: "was kept running" in banner.label.text(), timeout=WAIT)
    qtbot.waitUntil(lambda: "Next check in 15:00" in banner.label.text()
                    or "Next check in 14:5" in banner.label.text(), timeout=WAIT)  # fmt: skip
    assert "results saved" in banner.label.text()
    assert [b.text() for b in banner.buttons] == [KEEP, RELEASE, SNOOZE]  # still answerable
    assert calls(vast_api) == []
    assert s.registry.host("box-a").state == "active" and s.ledger.running()
    texts = _history(win)
    assert "Auto-release held back, checklist not passed" in texts[0]
    assert "not passed: results saved" in texts[0]
    assert "Countdown snoozed" in texts[1]
    worker.wait_all()


def test_release_now_with_a_passing_checklist_releases_through_the_provider_api(
    rented,
    standin,
    vast_api,
    qtbot,
):
    s, host, rental, service, clock, marker, messages = rented
    marker.write_text("saved\n")
    win, banner = _counting_down(rented, standin, qtbot)
    banner.button(RELEASE).click()
    qtbot.waitUntil(lambda: "was released" in banner.label.text(), timeout=WAIT)
    qtbot.waitUntil(lambda: not banner.buttons, timeout=WAIT)
    assert calls(vast_api) == [["destroy", "instance", "4242"]]
    assert not s.ledger.running() and s.registry.host("box-a").state == "released"
    release = _history(win)[0]
    assert "Released, checklist passed" in release
    assert "ask vast.ai to destroy instance 4242, then read it back" in release
    assert 4242 not in vast_api.instances
    worker.wait_all()


def _tray_submenu(win):  # type: ignore[no-untyped-def]
    """The tray's menu entry of the box-a rental, as a user opening the tray sees it."""
    [entry] = [a for a in win.tray.menu.actions() if a.menu() is not None]
    return entry.text(), [a.text() for a in entry.menu().actions() if a.text()], entry.menu()


def test_the_tray_offers_the_countdown_answers_with_the_banner_closed(
    rented,
    standin,
    vast_api,
    qtbot,
):
    """The user who lives in the tray answers from its menu; the answer closes it everywhere."""
    from PySide6.QtWidgets import QToolButton

    s, host, rental, service, clock, marker, messages = rented
    marker.write_text("saved\n")  # the checklist would pass: only the user's answer stops it
    win, banner = _counting_down(rented, standin, qtbot)
    qtbot.waitUntil(lambda: win.first_paint_done, timeout=WAIT)  # the tray reads the ledger
    title, texts, menu = _tray_submenu(win)
    assert "auto-release pending" in title
    assert texts[:3] == [KEEP, RELEASE, SNOOZE]
    banner.findChild(QToolButton).click()  # ✕: the banner is dismissed
    qtbot.waitUntil(lambda: win.countdowns.banner("box-a") is None, timeout=WAIT)
    next(a for a in menu.actions() if a.text() == KEEP).trigger()
    qtbot.waitUntil(lambda: service.case("box-a").stage is Stage.KEPT, timeout=WAIT)
    qtbot.waitUntil(lambda: KEEP not in _tray_submenu(win)[1], timeout=WAIT)
    title, texts, _menu = _tray_submenu(win)
    assert "auto-release pending" not in title and RELEASE not in texts
    clock.advance(2)  # the countdown would have ended twice over
    service.tick()
    assert calls(vast_api) == [] and s.ledger.running()
    worker.wait_all()


def test_a_kept_running_banner_goes_when_the_host_is_released_by_hand(
    rented,
    standin,
    vast_api,
    qtbot,
):
    from dataclasses import replace

    s, host, rental, service, clock, marker, messages = rented  # no marker: an item fails
    win, banner = _counting_down(rented, standin, qtbot)
    banner.button(RELEASE).click()
    qtbot.waitUntil(lambda: "was kept running" in banner.label.text(), timeout=WAIT)
    worker.wait_all()
    # released by hand (the provider's console, then the host marked released here)
    s.registry.save_host(replace(s.registry.host("box-a"), state="released"))
    qtbot.waitUntil(lambda: win.countdowns.banner("box-a") is None, timeout=WAIT)
    assert "box-a" not in win.countdowns.texts
