# ruff: noqa: F811  (the fixtures come from tests/harness/autorelease.py)
"""The finished rule against the harness host: the policy's tmux session, seen running and then
ended, triggers the countdown; a session that never existed (a typo) does not."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from dataclasses import replace

import pytest

from tests.conftest import missing_component
from tests.harness.autorelease import rented, vast_api  # noqa: F401


@pytest.fixture
def session():  # type: ignore[no-untyped-def]
    """A tmux session on the harness host (the sshd runs on this machine, as this user)."""
    if not shutil.which("tmux"):
        missing_component("tmux is needed on the harness host (Debian: tmux)")
    name = f"train-{uuid.uuid4().hex[:8]}"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "sleep 600"], check=True)
    yield name
    subprocess.run(["tmux", "kill-session", "-t", f"={name}"], check=False,
                   capture_output=True)  # fmt: skip


def _policy(rented, name: str) -> None:  # type: ignore[no-untyped-def]
    from gpu_companion.core.autorelease.service import load_policy, save_policy

    s, host = rented[0], rented[1]
    policy = replace(load_policy(s.store, host.id), idle_minutes=0, stall_minutes=0,
                     finished_session=name)  # fmt: skip
    save_policy(s.store, host.id, policy)


def test_an_ended_session_triggers_and_a_never_seen_one_does_not(rented, session):
    s, host, rental, service, clock, marker, messages = rented
    _policy(rented, session)
    service.tick()
    assert "box-a" in service._sessions_seen and not service.case("box-a")
    subprocess.run(["tmux", "kill-session", "-t", f"={session}"], check=True)
    service.tick()
    assert any(f"box-a: its job has finished (tmux session {session!r} has ended)" in m
               for m in messages)  # fmt: skip
    assert service.countdown("box-a") is not None


def test_a_session_never_seen_is_not_finished(rented):
    s, host, rental, service, clock, marker, messages = rented
    _policy(rented, "no-such-session")
    service.tick()
    clock.advance(5)
    service.tick()
    assert service.case("box-a") is None and not any("box-a:" in m for m in messages)
