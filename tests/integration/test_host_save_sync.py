"""Saving a host returns at once: the managed config's `ssh -G` checks run on the sync thread."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path

import pytest

from gpu_companion.core.hosts.registry import Host
from tests.conftest import missing_component


@pytest.fixture
def slow_ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The real ssh behind a wrapper that takes a second per call and logs its arguments."""
    real = shutil.which("ssh")
    if real is None:
        missing_component("ssh not installed (Debian: openssh-client)")
    bin_dir = tmp_path / "slow-bin"
    bin_dir.mkdir()
    log = tmp_path / "ssh-calls.log"
    wrapper = bin_dir / "ssh"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nsleep 1\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path(real).parent}")
    return log


def test_saving_hosts_does_not_wait_for_ssh_and_the_config_follows(
    app_paths, slow_ssh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpu_companion.core.ssh import resolve
    from gpu_companion.services import build_services

    threads: list[str] = []
    real_run = subprocess.run

    def spy(argv, *args, **kwargs):  # type: ignore[no-untyped-def]
        if "-G" in argv:
            threads.append(threading.current_thread().name)
        return real_run(argv, *args, **kwargs)

    monkeypatch.setattr(resolve.subprocess, "run", spy)
    services = build_services(app_paths)
    try:
        start = time.monotonic()
        for i in range(3):
            services.registry.save_host(Host(f"gpu-{i}", f"10.0.0.{i + 1}", 2200 + i, "root"))
        saved_in = time.monotonic() - start
        assert saved_in < 0.5, f"saving three hosts took {saved_in:.1f} s"
        assert services.ssh_sync.flush(30)
        text = services.ssh_config.config_path.read_text()
        assert all(f"Host gpu-{i}\n" in text for i in range(3))
        assert threads == ["ssh-config-sync"] * 3  # one coalesced pass: ssh -G once per host
        assert services.ssh_sync.runs == 1
        host = services.registry.host("gpu-1")
        assert host is not None
        services.registry.delete_host(host.id)  # type: ignore[arg-type]
    finally:
        services.close()  # serves the pending delete before the command or app exits
    assert "Host gpu-1\n" not in services.ssh_config.config_path.read_text()
    assert not any(t.name == "ssh-config-sync" for t in threading.enumerate())
    assert slow_ssh.read_text().count("-G") == 5


def test_a_sync_that_fails_is_said_and_the_host_is_kept(app_paths) -> None:
    """The managed folder cannot be written (here a file stands where it should be): the host is
    saved all the same, and the user hears why `ssh ALIAS` did not follow."""
    from gpu_companion.services import build_services

    services = build_services(app_paths)
    heard: list[str] = []
    services.notifier.subscribe(lambda m: heard.append(m.text))
    folder = services.ssh_config.config_path.parent
    shutil.rmtree(folder, ignore_errors=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("not a folder\n")
    try:
        services.registry.save_host(Host("gpu-x", "10.0.0.9", 22, "root"))
        assert services.ssh_sync.flush(30)
        assert services.registry.host("gpu-x") is not None
        assert any(t.startswith("The generated ssh config was not updated: ") for t in heard), heard
    finally:
        services.close()
    assert folder.read_text() == "not a folder\n"


def test_a_host_key_trusted_while_the_config_syncs_is_kept(app_paths) -> None:
    """The first contact's "Trust" and the sync after the host was saved run at the same time
    (the user tests a host right after adding it): the trusted key is never replaced by the
    empty known_hosts the sync creates when there is none. 100 races, none may lose the key
    (the check-then-write this replaced lost about one in four)."""
    from gpu_companion.services import build_services
    from tests.conftest import make_ed25519

    services = build_services(app_paths)
    try:
        host = services.registry.save_host(Host("gpu-t", "10.0.0.7", 22, "root"))
        assert services.ssh_sync.flush(30)
        key = make_ed25519()
        lost = 0
        for _ in range(100):
            services.ssh_config.known_hosts.unlink()
            start = threading.Barrier(2)

            def sync(start: threading.Barrier = start) -> None:
                start.wait()
                services.managed_ssh.sync()

            def trust(start: threading.Barrier = start) -> None:
                start.wait()
                services.sessions.trust_host_key(host, key)

            both = [threading.Thread(target=sync), threading.Thread(target=trust)]
            for t in both:
                t.start()
            for t in both:
                t.join(30)
            lost += not services.sessions.known_keys(host)
        assert lost == 0
    finally:
        services.close()
