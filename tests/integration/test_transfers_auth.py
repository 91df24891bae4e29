"""A refused key is not a dropped connection: the engine fails at once, says which key the host
must hold and where to paste it, and never retries (the issue saw six attempts over a minute)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpu_companion.core.ssh.agent import RuntimePaths, close_control_masters
from gpu_companion.core.ssh.managed import app_ssh_argv
from gpu_companion.core.transfers.engine import RetryPolicy, TransferEngine
from gpu_companion.core.transfers.job import Retrying, TransferControl, TransferJob
from tests.integration.transfer_helpers import make_tree

pytestmark = pytest.mark.sshd


def drive(engine: TransferEngine, job: TransferJob, host):  # type: ignore[no-untyped-def]
    events, gen = [], engine.run(job, host, TransferControl())
    try:
        while True:
            events.append(next(gen))
    except StopIteration as stop:
        return events, stop.value


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[RuntimePaths]:
    """The runtime dir the app makes for its data dir (the shared connections' sockets)."""
    paths = RuntimePaths.for_data_dir(tmp_path)
    paths.make()
    yield paths
    close_control_masters(paths.control_dir)
    shutil.rmtree(paths.root, ignore_errors=True)


def refused_engine(ssh_target, hook_calls: list[str], runtime: RuntimePaths) -> TransferEngine:  # type: ignore[no-untyped-def]
    ssh_target.server.authorized_keys.write_text("")  # the host no longer holds the key
    return TransferEngine(
        # the transfer engine's ssh as Services builds it (managed_ssh.ssh_argv): -F CONFIG
        # -o BatchMode=yes and the shared connection in the app's runtime dir
        app_ssh_argv(ssh_target.config_path, runtime),
        ssh_target.client_factory,
        retry=RetryPolicy(attempts=6, base_delay_s=5),  # a retry would show in the time taken
        before_connect=lambda h: hook_calls.append(h.alias),
        auth_help=lambda h: (
            f"{h.alias} refused the vast.ai key SHA256:abc; paste it on the Keys page."
        ),
    )


def test_refused_key_in_the_version_probe_is_not_retried(
    tmp_path: Path, ssh_target, runtime: RuntimePaths
) -> None:
    calls: list[str] = []
    engine = refused_engine(ssh_target, calls, runtime)
    job = TransferJob("gpu-test", "upload", str(make_tree(tmp_path / "src")), str(tmp_path / "r"))
    events, outcome = drive(engine, job, ssh_target.host)
    assert outcome.outcome == "failed" and not outcome.retryable
    assert outcome.message.startswith("gpu-test refused the vast.ai key SHA256:abc")
    assert not [e for e in events if isinstance(e, Retrying)]
    assert calls == ["gpu-test"]  # the agent was readied once, before the first connection


def test_refused_key_during_rsync_is_not_retried(
    tmp_path: Path, ssh_target, runtime: RuntimePaths
) -> None:
    calls: list[str] = []
    engine = refused_engine(ssh_target, calls, runtime)
    engine._remote_rsync["gpu-test"] = (3, 2, 7)  # probed earlier, while the key still worked
    job = TransferJob("gpu-test", "upload", str(make_tree(tmp_path / "src")), str(tmp_path / "r"))
    events, outcome = drive(engine, job, ssh_target.host)
    assert outcome.outcome == "failed" and not outcome.retryable
    assert "refused the vast.ai key" in outcome.message
    assert not [e for e in events if isinstance(e, Retrying)]
    assert not (tmp_path / "r").exists()


def test_a_user_error_from_the_agent_fails_the_job_in_its_words(tmp_path: Path, ssh_target):  # type: ignore[no-untyped-def]
    from gpu_companion.core.common.errors import UserError

    def needs_passphrase(_host) -> None:  # type: ignore[no-untyped-def]
        raise UserError("The vast.ai key is protected by a passphrase.")

    engine = TransferEngine(ssh_target.ssh_argv, ssh_target.client_factory,
                            before_connect=needs_passphrase)  # fmt: skip
    job = TransferJob("gpu-test", "upload", str(make_tree(tmp_path / "src")), str(tmp_path / "r"))
    events, outcome = drive(engine, job, ssh_target.host)
    assert outcome.outcome == "failed" and "passphrase" in outcome.message and not events
