"""Watching is the app's, not a page's: Services as the app builds them, the app's own SSH
connections (key from the keyring, host key from the app's known_hosts), the harness sshd and the
nvidia-smi stand-in. No Qt, no page: what runs here is what runs with the window closed to the tray.
"""

from __future__ import annotations

import os
import socket
from dataclasses import replace

import pytest

from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.core.monitor.collector import HostState, SamplesEvent
from gpu_companion.services import build_services
from tests.harness.util import wait_for
from tests.integration.recorder import Recorder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def services(app_paths, sshd, standin, keyring_backend, tmp_path):  # type: ignore[no-untyped-def]
    ctx = build_services(app_paths)
    platform = ctx.registry.save_platform(Platform(f"watch-{os.getpid()}-{tmp_path.name}"))
    sshd.authorize(ctx.vault.generate(platform.name).public_line)
    ctx.ssh_config.known_hosts.parent.mkdir(parents=True, exist_ok=True)
    ctx.ssh_config.known_hosts.write_text(sshd.known_hosts_line())
    ctx.test_platform = platform  # type: ignore[attr-defined]
    standin.configure(gpu_count=2)
    yield ctx
    ctx.close()


def _rented(ctx, sshd, alias="gpu1", port=None):  # type: ignore[no-untyped-def]
    host = ctx.registry.save_host(
        Host(alias, "127.0.0.1", port or sshd.port, sshd.user, ctx.test_platform.id)
    )
    ctx.ledger.start_rental(ctx.test_platform.id, "1.20", host_id=host.id)
    return host


def _samples(rec: Recorder, alias: str) -> int:
    return len([e for e in rec.of(SamplesEvent) if e.alias == alias])


def test_a_rented_host_streams_from_launch_with_no_page(services, sshd):
    _rented(services, sshd)
    services.registry.save_host(Host("spare", "127.0.0.1", sshd.port, sshd.user))  # no rental
    rec = Recorder()
    services.monitor().subscribe(rec)
    services.start_watching()
    assert services.watcher.first_look.wait(10)  # the first look runs off the caller's thread
    assert services.monitor().aliases() == ["gpu1"]
    rec.wait(lambda: _samples(rec, "gpu1") >= 2, what="samples from the rented host")
    assert services.monitor().status("gpu1").state == HostState.LIVE
    assert len(services.monitor().history("gpu1").latest) == 2
    assert _samples(rec, "spare") == 0


def test_a_host_edit_reaches_the_running_collector(services, sshd):
    host = _rented(services, sshd, port=_free_port())  # nothing listens there
    rec = Recorder()
    services.monitor().subscribe(rec)
    services.start_watching()
    rec.wait(lambda: services.monitor().status("gpu1").state == HostState.RECONNECTING,
             what="the wrong port refused")  # fmt: skip
    services.registry.save_host(replace(host, port=sshd.port))  # returns at once: only enqueued
    wait_for(lambda: getattr(services.monitor().watched_host("gpu1"), "port", 0) == sshd.port, 10,
             "the collector following the edit")  # fmt: skip
    rec.wait(lambda: _samples(rec, "gpu1") >= 2, what="samples after the port change")
    renamed = services.registry.save_host(replace(host, alias="gpu-renamed", port=sshd.port))
    wait_for(lambda: services.monitor().aliases() == [renamed.alias], 10, "the renamed host")
    n = _samples(rec, "gpu-renamed")
    rec.wait(lambda: _samples(rec, "gpu-renamed") >= n + 2, what="samples under the new alias")


def test_a_rental_ending_stops_watching_and_a_new_one_starts_it(services, sshd, standin):
    host = _rented(services, sshd)
    rec = Recorder()
    services.monitor().subscribe(rec)
    services.start_watching()
    rec.wait(lambda: _samples(rec, "gpu1") >= 1, what="first samples")
    services.ledger.end_for_host(host.id)
    wait_for(lambda: services.monitor().status("gpu1").state == HostState.STOPPED, 10,
             "the collector stopped")  # fmt: skip
    assert services.monitor().aliases() == []
    stopped_at = _samples(rec, "gpu1")
    starts = standin.starts()
    services.ledger.start_rental(services.test_platform.id, "1.20", host_id=host.id)
    wait_for(lambda: services.monitor().aliases() == ["gpu1"], 10, "the new rental watched")
    rec.wait(lambda: _samples(rec, "gpu1") > stopped_at, what="samples of the new rental")
    assert standin.starts() > starts


def test_a_rental_started_by_another_process_is_picked_up_by_the_recheck(services, sshd, app_paths):
    host = services.registry.save_host(
        Host("gpu1", "127.0.0.1", sshd.port, sshd.user, services.test_platform.id)
    )
    services.start_watching()
    services.watcher.stop()
    services.watcher.resync_every_s = 0.2
    services.watcher.start()
    other = build_services(app_paths)  # the `ledger` command in a terminal
    try:
        other.ledger.start_rental(services.test_platform.id, "2", host_id=host.id)
    finally:
        other.close()
    rec = Recorder()
    services.monitor().subscribe(rec)
    rec.wait(lambda: _samples(rec, "gpu1") >= 1, what="the re-check watching the new rental")


def test_with_no_rental_launch_makes_no_monitor(services, sshd):
    """Nothing to watch: the monitor (numpy, with its history) is not even made."""
    services.registry.save_host(Host("spare", "127.0.0.1", sshd.port, sshd.user))
    services.start_watching()
    assert services.watcher.first_look.wait(10)
    assert services._monitor is None
    host = services.registry.host("spare")
    services.ledger.start_rental(services.test_platform.id, "1", host_id=host.id)
    wait_for(lambda: services._monitor is not None and services.monitor().aliases() == ["spare"],
             10, "the monitor made for the first rental")  # fmt: skip
