# ruff: noqa: F811  (the fixtures come from tests/harness/autorelease.py)
"""What the user confirmed by hand in the window counts for the unattended checklist: the
manual item "Data disk snapshot taken", confirmed on the Release page, lets auto-release release
the idle host through the provider (real services, harness host, the vastai client code)."""

from __future__ import annotations

from dataclasses import replace

from gpu_companion.ui.common import worker
from tests.harness.autorelease import calls, rented, vast_api, wait_for_readings  # noqa: F401
from tests.harness.util import wait_for

SNAPSHOT = "Data disk snapshot taken"  # the default checklist's manual item


def test_a_manual_item_confirmed_in_the_window_lets_auto_release_release(
    rented, standin, vast_api, qtbot, monkeypatch
):
    from gpu_companion.ui.shell.build import build_window

    s, host, rental, service, clock, marker, messages = rented
    marker.write_text("saved\n")
    config = s.release.settings.config(host.alias)
    s.release.settings.save_config(host.alias, replace(config, manual=(SNAPSHOT,)))
    s.__dict__["autorelease"] = service
    win = build_window(s)
    qtbot.addWidget(win)
    win.quitting = True
    page = win.navigate("release")
    page.open_host("box-a")
    page.select("manual:0")
    monkeypatch.setattr(page, "_ask_text", lambda *_: "snapshot snap-0421 in the console")
    page.confirm_selected()
    assert s.release.settings.confirmations("box-a") == {
        SNAPSHOT: "snapshot snap-0421 in the console"
    }

    standin.configure(util="idle")
    wait_for_readings(service)
    wait_for(lambda: service.detectors["box-a"].idle_since is not None, 30, "idle")
    clock.advance(1.1)
    service.tick()
    clock.advance(1.1)
    service.tick()  # the unattended checklist: the confirmation from the window counts
    assert calls(vast_api) == [["destroy", "instance", "4242"]]
    assert s.registry.host("box-a").state == "released" and not s.ledger.running()
    release = next(r for r in s.release.ledger.history("box-a") if r.kind == "release")
    assert any(e.get("summary") == "confirmed: snapshot snap-0421 in the console"
               for e in release.evidence)  # fmt: skip
    worker.wait_all()


def test_without_the_confirmation_it_is_kept_and_says_why(rented, standin, vast_api):
    s, host, rental, service, clock, marker, messages = rented
    marker.write_text("saved\n")
    config = s.release.settings.config(host.alias)
    s.release.settings.save_config(host.alias, replace(config, manual=(SNAPSHOT,)))
    standin.configure(util="idle")
    wait_for_readings(service)
    wait_for(lambda: service.detectors["box-a"].idle_since is not None, 30, "idle")
    clock.advance(1.1)
    service.tick()
    clock.advance(1.1)
    service.tick()
    assert calls(vast_api) == []
    assert any("was kept running" in m and f"{SNAPSHOT}: not confirmed yet" in m
               for m in messages)  # fmt: skip
