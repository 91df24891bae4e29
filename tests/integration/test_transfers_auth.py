"""A refused key is not a dropped connection: the engine fails at once, says which key the host
must hold and where to paste it, and never retries (the issue saw six attempts over a minute).

The app's own queue (`Services.transfers`) on the harness sshd, wired as shipped: the platform's
key from the keyring in the app's ssh-agent, `ssh -F <managed config>`, the app's known_hosts."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from gpu_companion.core.transfers.job import JobState, TransferJob
from tests.integration.transfer_helpers import ShippedTransfers, make_tree

pytestmark = pytest.mark.sshd


def run_lane(shipped: ShippedTransfers, job: TransferJob) -> tuple[TransferJob, list[str], float]:
    """The job run on its host's lane here: how it ended, every message it showed, seconds."""
    queue = shipped.queue
    added = queue.add(job)
    started = time.monotonic()
    messages = [j.message for j in queue.run_lane(shipped.alias)]
    got = queue.get(added.id)
    assert got is not None
    return got, messages, time.monotonic() - started


def refused_words(shipped: ShippedTransfers) -> str:
    stored = shipped.services.vault.key(shipped.platform)
    assert stored is not None
    host = shipped.host
    key = f"{stored.kind.upper()} {stored.fingerprint}"
    return f"{host.user}@127.0.0.1:{host.port} refused the {shipped.platform} key ({key})"


def assert_not_retried(got: TransferJob, messages: list[str], elapsed: float) -> None:
    assert got.state is JobState.FAILED, got.message
    assert not [m for m in messages if m.startswith("Connection dropped")], messages
    assert "Gave up" not in got.message and got.attempts <= 1, got
    assert elapsed < 15, elapsed  # the app's backoff starts at 2 s: a retry would show too


def test_refused_key_in_the_version_probe_is_not_retried(
    tmp_path: Path, shipped_transfers: ShippedTransfers, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = shipped_transfers.services.agent
    calls: list[str] = []
    ensure = agent.ensure_for_host

    def counting_ensure(host: Any) -> None:  # a spy on the app's own before_connect
        calls.append(host.alias)
        ensure(host)

    monkeypatch.setattr(agent, "ensure_for_host", counting_ensure)  # before the queue is built
    shipped_transfers.server.authorized_keys.write_text("")  # the host no longer holds the key
    job = TransferJob("gpu-test", "upload", str(make_tree(tmp_path / "src")), str(tmp_path / "r"))
    got, messages, elapsed = run_lane(shipped_transfers, job)
    assert_not_retried(got, messages, elapsed)
    assert got.message.startswith(refused_words(shipped_transfers)), got.message
    assert "Keys page" in got.message
    assert calls == ["gpu-test"]  # the agent was readied once, before the first connection
    assert not (tmp_path / "r").exists()


def test_refused_key_during_rsync_is_not_retried(
    tmp_path: Path, shipped_transfers: ShippedTransfers
) -> None:
    src = make_tree(tmp_path / "src")
    first, _messages, _s = run_lane(  # probed and copied while the key still worked
        shipped_transfers, TransferJob("gpu-test", "upload", str(src), str(tmp_path / "r1"))
    )
    assert first.state is JobState.DONE and first.engine == "rsync", first.message
    shipped_transfers.server.authorized_keys.write_text("")  # the key leaves the host
    shipped_transfers.server.kill_sessions()  # and the app's shared connection drops
    job = TransferJob("gpu-test", "upload", str(src), str(tmp_path / "r2"))
    got, messages, elapsed = run_lane(shipped_transfers, job)
    assert_not_retried(got, messages, elapsed)
    assert got.engine == "rsync"  # the version probe was not asked again: rsync was refused
    assert refused_words(shipped_transfers) in got.message, got.message
    assert not (tmp_path / "r2").exists()


def test_a_user_error_from_the_agent_fails_the_job_in_its_words(tmp_path: Path, ship, sshd):  # type: ignore[no-untyped-def]
    # the platform's key has a passphrase nobody typed in this session: the app's agent cannot
    # take it, so the job fails before any connection, in the agent's words
    shipped = ship(sshd, passphrase="correct horse battery staple")
    assert shipped.services.agent.identities() == []  # start-up skipped the protected key
    job = TransferJob("gpu-test", "upload", str(make_tree(tmp_path / "src")), str(tmp_path / "r"))
    got, messages, _elapsed = run_lane(shipped, job)
    assert got.state is JobState.FAILED, got.message
    assert f"The {shipped.platform} key is protected by a passphrase." in got.message
    assert not got.engine, got.engine  # no engine was chosen: nothing reached the host
    assert not (tmp_path / "r").exists()
