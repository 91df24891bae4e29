"""`kill -9` of `gpu-companion release` at each journaled step, then a restart: the next start
reads the instance back, and no rental is left metered-but-destroyed or released-but-running.

The release runs as the shipped command in its own process (real vastai client code, the
harness keyring, the app's data dir); the local vast.ai server holds the request at the step
under test, the process is killed there, and a fresh `Services` plays the next start."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.harness.fake_vast import FakeVast
from tests.harness.util import wait_for

pytestmark = pytest.mark.keyring
NEEDS_SSH = ("checkpoints", "archive", "leftovers", "processes")  # covered elsewhere

ALIAS = "rig"


def _services(app_paths, monkeypatch) -> Any:  # type: ignore[no-untyped-def]
    import keyring.backend
    import keyring.core

    from gpu_companion.services import build_services

    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    monkeypatch.delattr(keyring.backend.get_all_keyring, "saved_result", raising=False)
    return build_services(app_paths)


@pytest.fixture
def rig(app_paths, keyring_backend, monkeypatch) -> Iterator[tuple[FakeVast, Any]]:  # type: ignore[no-untyped-def]
    from gpu_companion.core.hosts.registry import Host
    from gpu_companion.core.release.config import ChecklistConfig

    with FakeVast() as fake:
        monkeypatch.setenv("VAST_URL", fake.url)
        fake.add_instance(4242, dph_total=0.4)
        s = _services(app_paths, monkeypatch)
        account = s.providers.add("vast.ai", fake.api_key, platform=f"vast-{uuid.uuid4().hex[:6]}")
        host = s.registry.save_host(Host(ALIAS, "127.0.0.1", 9, "root", account.platform_id,
                                         instance_id="4242"))  # fmt: skip
        s.release.settings.save_config(ALIAS, ChecklistConfig(
            manual=("data copied",), disabled=NEEDS_SSH))
        s.ledger.start_rental(account.platform_id, "0.40", host_id=host.id)
        s.close()
        yield fake, app_paths


def _release_process() -> subprocess.Popen[str]:
    code = "import sys; from gpu_companion.cli import main; sys.exit(main())"
    argv = [sys.executable, "-c", code, "release", ALIAS, "--yes", "--confirm", "data copied"]
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)  # fmt: skip


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert proc.returncode == -signal.SIGKILL


def _journal(app_paths) -> list[tuple[str, str | None]]:  # type: ignore[no-untyped-def]
    import sqlite3

    con = sqlite3.connect(app_paths.database)
    try:
        return con.execute("SELECT step, outcome FROM release_journal ORDER BY id").fetchall()
    finally:
        con.close()


def _restart(app_paths, monkeypatch) -> tuple[Any, list[str]]:  # type: ignore[no-untyped-def]
    s = _services(app_paths, monkeypatch)
    said = s.resolve_interrupted_releases()
    return s, said


def _consistent(s: Any, fake: FakeVast) -> str:
    """The ledger agrees with the provider: metered and active iff the instance exists."""
    running = s.ledger.running_for_alias(ALIAS) is not None
    state = s.registry.host(ALIAS).state
    exists = 4242 in fake.instances
    assert running == exists and (state == "active") == exists, (running, state, exists)
    return state


def test_killed_before_the_intent_is_journaled(rig, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    fake, app_paths = rig
    with fake.hanging("GET"):
        proc = _release_process()
        wait_for(lambda: fake.methods("GET"), 60, "the read before the release")
        _kill(proc)
    assert _journal(app_paths) == []
    s, said = _restart(app_paths, monkeypatch)
    try:
        assert said == [] and _consistent(s, fake) == "active"
    finally:
        s.close()


@pytest.mark.parametrize("provider_acted", [True, False])
def test_killed_while_the_destroy_request_is_in_flight(rig, monkeypatch, provider_acted) -> None:  # type: ignore[no-untyped-def]
    fake, app_paths = rig
    event = fake.hang_method("DELETE")
    proc = _release_process()
    wait_for(lambda: fake.methods("DELETE"), 60, "the destroy request")
    assert _journal(app_paths) == [("intent", "")]
    _kill(proc)
    if not provider_acted:
        fake.linger(4242, reads=1_000_000)  # the held request changes nothing that shows
    event.set()  # the provider answers the dead process's request
    wait_for(lambda: provider_acted == (4242 not in fake.instances) or not provider_acted, 10,
             "the provider's answer")  # fmt: skip
    time.sleep(0.2)
    s, said = _restart(app_paths, monkeypatch)
    try:
        state = _consistent(s, fake)
        kinds = [r.kind for r in s.release.ledger.history(ALIAS)]
        if provider_acted:
            assert state == "released" and kinds == ["release"]
            assert "is confirmed: vast.ai reports instance 4242 gone" in said[0]
        else:
            assert state == "active" and kinds == ["unconfirmed"]
            assert "vast.ai still reports instance 4242 running" in said[0]
            assert "still billing" in said[0]
        assert _journal(app_paths)[0][1] == ("confirmed" if provider_acted else "unconfirmed")
    finally:
        s.close()


def test_killed_while_reading_back(rig, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    fake, app_paths = rig
    fake.linger(4242, reads=1_000_000)  # accepted, still listed running
    proc = _release_process()
    wait_for(lambda: _journal(app_paths) == [("requested", "")], 60, "the read-back")
    _kill(proc)
    fake.instances.pop(4242)  # the provider finishes the destroy after the crash
    s, said = _restart(app_paths, monkeypatch)
    try:
        assert _consistent(s, fake) == "released"
        [rental] = s.ledger.history()
        assert rental.end_reason == "release" and rental.ended_at is not None
        assert _journal(app_paths) == [("requested", "confirmed")]  # the step the dead one reached
    finally:
        s.close()


def test_the_always_on_loop_resolves_what_a_crash_left_open(rig, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The window, the tray and `watch` resolve it at start, before the first policy tick."""
    fake, app_paths = rig
    fake.linger(4242, reads=1_000_000)
    proc = _release_process()
    wait_for(lambda: _journal(app_paths) == [("requested", "")], 60, "the read-back")
    _kill(proc)
    s = _services(app_paths, monkeypatch)
    heard: list[str] = []
    s.notifier.subscribe(lambda m: heard.append(m.text))
    try:
        assert s.start_always_on(every_s=3600)
        wait_for(lambda: any("interrupted" in t for t in heard), 30, "the start-up alert")
        assert _consistent(s, fake) == "active"
        assert any("vast.ai still reports instance 4242 running" in t for t in heard)
    finally:
        s.close()
