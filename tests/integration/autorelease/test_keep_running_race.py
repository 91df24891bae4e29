# ruff: noqa: F811  (the fixtures come from tests/harness/autorelease.py)
"""Keep running wins until the provider is asked: the answer is pressed at every step of the
unattended sequence (notified, checklist running, checklist passed, provider called) against
the harness host, the real vastai client code on a local vast.ai-like server and the real
release gate; the answer, the case, the release record and the provider's state must agree."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from tests.harness.autorelease import calls, rented, vast_api, wait_for_readings  # noqa: F401
from tests.harness.util import wait_for


def _gated_checklist(s, host, tmp_path: Path, marker: Path) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """The checklist's one item runs on the host until the test says go (then passes)."""
    from gpu_companion.core.release.config import CustomCommand

    started, go = tmp_path / "check-started", tmp_path / "check-go"
    command = (
        f"touch {started}; i=0; while [ ! -e {go} ] && [ $i -lt 600 ]; do sleep 0.05; "
        f"i=$((i+1)); done; test -e {marker}"
    )
    config = s.release.settings.config(host.alias)
    s.release.settings.save_config(
        host.alias, replace(config, custom=(CustomCommand("results saved", command),))
    )
    return started, go


def _countdown_ended(service, clock, standin) -> None:  # type: ignore[no-untyped-def]
    standin.configure(util="idle")
    wait_for_readings(service)
    wait_for(lambda: service.detectors["box-a"].idle_since is not None, 30, "idle")
    clock.advance(1.1)
    service.tick()  # notified, one minute's notice
    assert service.case("box-a").stage.value == "notified"
    clock.advance(1.1)  # the notice is over: the next tick runs the checklist


def _tick_in_thread(service) -> threading.Thread:  # type: ignore[no-untyped-def]
    t = threading.Thread(target=service.tick, name="test-tick")
    t.start()
    return t


def _timed(fn):  # type: ignore[no-untyped-def]
    t0 = time.monotonic()
    out = fn()
    return out, time.monotonic() - t0


def _kinds(s) -> list[str]:  # type: ignore[no-untyped-def]
    return [r.kind for r in s.release.ledger.history("box-a")]


def _kept(s, service, vast_api, answer, took) -> None:  # type: ignore[no-untyped-def]
    assert answer.applied and "keeps running" in answer.text, answer
    assert took < 1.0  # the lock is not held across the checklist or the provider call
    assert calls(vast_api) == []  # nothing was sent
    assert 4242 in vast_api.instances
    assert s.registry.host("box-a").state == "active" and s.ledger.running()
    assert service.case("box-a").stage.value == "kept"
    assert "auto-kept" in _kinds(s) and "release" not in _kinds(s)


def test_keep_running_during_the_countdown(rented, standin, vast_api):
    s, host, rental, service, clock, marker, messages = rented
    marker.write_text("saved\n")
    _countdown_ended(service, clock, standin)
    answer, took = _timed(lambda: service.keep_running("box-a"))
    service.tick()
    _kept(s, service, vast_api, answer, took)


def test_keep_running_while_the_checklist_runs(rented, standin, vast_api, tmp_path):
    s, host, rental, service, clock, marker, messages = rented
    marker.write_text("saved\n")
    started, go = _gated_checklist(s, host, tmp_path, marker)
    _countdown_ended(service, clock, standin)
    ticking = _tick_in_thread(service)
    wait_for(started.exists, 30, "the checklist to start on the host")
    assert service.case("box-a").stage.value == "checking"
    answer, took = _timed(lambda: service.keep_running("box-a"))
    go.touch()  # the checklist passes after the answer: it must not release all the same
    ticking.join(60)
    _kept(s, service, vast_api, answer, took)
    assert "The running checklist was stopped." in s.release.ledger.history("box-a")[0].reason


def test_keep_running_after_the_checklist_passed(rented, standin, vast_api):
    """The checklist passed and the gate reads the instance (held on the provider's side):
    the answer still wins, since the case is checked right before the destroy is sent."""
    s, host, rental, service, clock, marker, messages = rented
    marker.write_text("saved\n")
    _countdown_ended(service, clock, standin)
    with vast_api.hanging("GET"):
        ticking = _tick_in_thread(service)
        wait_for(lambda: any(m == "GET" and "4242" in p for m, p in vast_api.requests), 30,
                 "the gate to read the instance")  # fmt: skip
        answer, took = _timed(lambda: service.keep_running("box-a"))
    ticking.join(60)
    _kept(s, service, vast_api, answer, took)


def test_keep_running_once_the_provider_was_asked_says_it_came_too_late(
    rented, standin, vast_api
):
    s, host, rental, service, clock, marker, messages = rented
    marker.write_text("saved\n")
    _countdown_ended(service, clock, standin)
    with vast_api.hanging("DELETE"):
        ticking = _tick_in_thread(service)
        wait_for(lambda: vast_api.methods("DELETE"), 30, "the destroy request")
        answer, took = _timed(lambda: service.keep_running("box-a"))
        assert service.case("box-a").stage.value == "releasing"
    ticking.join(60)
    assert not answer.applied and answer.too_late and took < 1.0
    assert "already sent to the provider" in answer.text
    # what the provider did is what the app says: gone there, released here
    assert calls(vast_api) == [["destroy", "instance", "4242"]]
    assert 4242 not in vast_api.instances
    assert s.registry.host("box-a").state == "released" and not s.ledger.running()
    assert service.case("box-a").stage.value == "done"
    kinds = _kinds(s)
    assert "release" in kinds and "auto-answer-too-late" in kinds and "auto-kept" not in kinds
    assert any("box-a was released" in m for m in messages)
    # pressed again later: still the truth, nothing recorded as kept
    again = service.keep_running("box-a")
    assert not again.applied and again.text == "box-a was already released."


@pytest.mark.parametrize("answer_with", ["snooze", "release_now"])
def test_other_answers_while_the_checklist_runs(rented, standin, vast_api, tmp_path, answer_with):
    s, host, rental, service, clock, marker, messages = rented
    marker.write_text("saved\n")
    started, go = _gated_checklist(s, host, tmp_path, marker)
    _countdown_ended(service, clock, standin)
    ticking = _tick_in_thread(service)
    wait_for(started.exists, 30, "the checklist to start on the host")
    answer, took = _timed(lambda: getattr(service, answer_with)("box-a"))
    go.touch()
    ticking.join(60)
    assert took < 1.0
    if answer_with == "snooze":  # pushed back: nothing sent now, counting down again
        assert answer.applied and calls(vast_api) == []
        assert service.case("box-a").stage.value == "notified"
        assert service.countdown("box-a") > 25 * 60
    else:  # one attempt at a time: the running one releases, the answer says so
        assert not answer.applied and "already running" in answer.text
        assert calls(vast_api) == [["destroy", "instance", "4242"]]
