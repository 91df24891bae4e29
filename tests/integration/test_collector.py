"""The collector against the real harness sshd and the nvidia-smi stand-in."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import pytest

from gpu_companion.core.hosts.registry import LOCAL_HOST, Host
from gpu_companion.core.monitor.collector import (
    CollectorConfig,
    HostCollector,
    HostState,
    PollEvent,
    SamplesEvent,
)
from tests.integration.recorder import Recorder

HOST = Host(alias="gpu1", hostname="127.0.0.1", port=22, user="root")
FAST = CollectorConfig(interval_ms=200, poll_every_s=0, backoff_initial_s=0.1, backoff_max_s=0.5)


def _start(factory, recorder, config=FAST, host=HOST, **kw):  # type: ignore[no-untyped-def]
    return HostCollector(host, factory, recorder, config, **kw).start()


def _gpu_times(recorder: Recorder, index: int) -> list:  # type: ignore[type-arg]
    return [
        s.sample.timestamp
        for e in recorder.of(SamplesEvent)
        for s in e.samples
        if s.sample.index == index
    ]


def test_four_gpus_stream_then_a_cut_connection_reconnects_without_gaps_or_repeats(
    sshd, standin, harness_client_factory
):
    standin.configure(gpu_count=4)
    rec = Recorder()
    collector = _start(harness_client_factory, rec)
    try:
        rec.wait(lambda: len(rec.of(SamplesEvent)) >= 5, what="5 ticks")
        assert all(len(e.samples) == 4 for e in rec.of(SamplesEvent)[1:])
        assert rec.states() == ["live"]
        before = len(rec.of(SamplesEvent))
        cut_at = datetime.now()  # the stand-in stamps samples with this machine's local time
        assert sshd.kill_sessions() >= 1
        rec.wait(lambda: "reconnecting" in rec.states(), what="reconnecting")
        rec.wait(lambda: rec.states()[-1] == "live" and len(rec.of(SamplesEvent)) > before + 5)
        assert rec.states() == ["live", "reconnecting", "live"]
        assert standin.starts() == 4  # help + stream, twice: none per sample
    finally:
        collector.stop()
    assert collector.status.state == HostState.STOPPED
    for gpu in range(4):
        times = _gpu_times(rec, gpu)
        assert len(times) == len(set(times)), "a sample was delivered twice"
        steps = [(b - a).total_seconds() for a, b in zip(times, times[1:], strict=False)]
        assert all(s > 0 for s in steps)
        # exactly one gap, the one spanning the cut; every other step is the 200 ms cadence
        # (with slack for a loaded machine): nothing lost or repeated beyond the gap
        gaps = [
            i for i, (a, b) in enumerate(zip(times, times[1:], strict=False)) if a <= cut_at < b
        ]
        assert len(gaps) == 1, (cut_at, times)
        regular = steps[: gaps[0]] + steps[gaps[0] + 1 :]
        assert all(0.1 < s < 1.0 for s in regular), steps
    t = [s.t for e in rec.of(SamplesEvent) for s in e.samples if s.sample.index == 0]
    assert t == sorted(t)


@pytest.mark.parametrize(
    ("mode", "state", "words"),
    [("gpu_lost", HostState.GPU_LOST, "is lost"), ("no_driver", HostState.NO_DRIVER, "driver")],
)
def test_dead_gpu_and_missing_driver_are_states(
    sshd, standin, harness_client_factory, mode, state, words
):
    standin.configure(gpu_count=2, mode=mode)
    rec = Recorder()
    collector = _start(harness_client_factory, rec)
    try:
        rec.wait(lambda: collector.status.state == state, what=state)
        assert words in collector.status.message
        assert collector.status.hint
    finally:
        collector.stop()


def test_gpu_lost_while_streaming(sshd, standin, harness_client_factory):
    standin.configure(gpu_count=2)
    rec = Recorder()
    collector = _start(harness_client_factory, rec)
    try:
        rec.wait(lambda: len(rec.of(SamplesEvent)) >= 2)
        standin.configure(gpu_count=2, mode="gpu_lost")
        rec.wait(lambda: collector.status.state == HostState.GPU_LOST, what="GPU lost")
        assert "0000:03:00.0" in collector.status.message
    finally:
        collector.stop()


def test_garbage_lines_are_counted_not_fatal(sshd, standin, harness_client_factory):
    standin.configure(gpu_count=2, garbage_every=3)
    rec = Recorder()
    collector = _start(harness_client_factory, rec)
    try:
        rec.wait(lambda: len(rec.of(SamplesEvent)) >= 6 and collector.status.bad_lines >= 2)
        assert collector.status.state == HostState.LIVE
        assert "garbage" in collector.status.last_bad_line
    finally:
        collector.stop()


def test_fields_the_driver_lacks_are_left_out(sshd, standin, harness_client_factory):
    known = ["timestamp", "index", "uuid", "name", "utilization.gpu", "memory.used",
             "memory.total", "temperature.gpu", "power.draw",
             "clocks_throttle_reasons.active"]  # fmt: skip
    standin.configure(gpu_count=1, known_fields=known)
    rec = Recorder()
    collector = _start(harness_client_factory, rec)
    try:
        rec.wait(lambda: len(rec.of(SamplesEvent)) >= 2)
    finally:
        collector.stop()
    assert "fan.speed" not in collector.fields and "power.limit" not in collector.fields
    assert "clocks_throttle_reasons.active" in collector.fields  # the old spelling
    sample = rec.of(SamplesEvent)[-1].samples[0].sample
    assert sample.power_limit_w is None and sample.utilization_memory is None
    assert sample.memory_total_mib == 81559
    assert sample.extra["clocks_event_reasons.active"] == "0x0000000000000000"


def test_unknown_and_changed_host_keys_and_refused_keys_wait_for_the_user(
    sshd, standin, harness_client_factory
):
    standin.configure(gpu_count=1)
    kh = harness_client_factory.known_hosts
    good = kh.read_text()
    kh.write_text("")
    rec = Recorder()
    collector = _start(harness_client_factory, rec)
    try:
        rec.wait(lambda: collector.status.state == HostState.HOST_KEY_UNKNOWN)
        kh.write_text(good.replace(sshd.host_public_key(), _other_key()))
        collector.reconnect()
        rec.wait(lambda: collector.status.state == HostState.HOST_KEY_CHANGED)
        kh.write_text(good)
        sshd.authorized_keys.write_text("")
        collector.reconnect()
        rec.wait(lambda: collector.status.state == HostState.AUTH_FAILED)
        starts = standin.starts()
        assert starts == 0
    finally:
        collector.stop()


def _other_key() -> str:
    from tests.conftest import make_ed25519

    return make_ed25519().get_base64()


def test_errors_with_a_kind_map_to_states():
    class ConnectionProblem(Exception):
        def __init__(self, kind: str) -> None:
            super().__init__("")
            self.kind = kind

    from gpu_companion.core.monitor.collector_errors import classify_failure

    cases = {
        "auth_failed": (HostState.AUTH_FAILED, False),
        "no_key": (HostState.AUTH_FAILED, False),
        "keyring": (HostState.AUTH_FAILED, False),
        "host_key_changed": (HostState.HOST_KEY_CHANGED, False),
        "host_key_unknown": (HostState.HOST_KEY_UNKNOWN, False),
        "refused": (HostState.RECONNECTING, True),
        "timeout": (HostState.RECONNECTING, True),
        "dns": (HostState.RECONNECTING, True),
    }
    for kind, (state, retry) in cases.items():
        failure = classify_failure(ConnectionProblem(kind))
        assert (failure.state, failure.retry) == (state, retry), kind
        assert failure.message and failure.hint


def test_processes_and_host_counters_arrive_at_the_slower_pace(
    sshd, standin, harness_client_factory, tmp_path
):
    standin.configure(gpu_count=2, processes=[{"gpu": 1, "pid": 777, "name": "python train.py",
                                               "used_mib": 2048}])  # fmt: skip
    rec = Recorder()
    config = replace(FAST, poll_every_s=0.5)
    collector = _start(harness_client_factory, rec, config)
    try:
        rec.wait(lambda: len(rec.of(PollEvent)) >= 2, what="two polls")
    finally:
        collector.stop()
    poll = rec.of(PollEvent)[-1]
    (app,) = poll.apps
    assert (app.pid, app.process_name, app.used_memory_mib) == (777, "python train.py", 2048)
    assert poll.counters.load1 is not None and poll.counters.cpu_busy_pct is not None
    assert poll.counters.read_bytes_per_s is not None
    assert poll.counters.disk_free_bytes and poll.counters.disk_total_bytes
    assert poll.owners  # ps ran on the host
    assert len(rec.of(SamplesEvent)) > 2 * len(rec.of(PollEvent))


def test_this_computer_without_nvidia_smi_says_so_plainly(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi anywhere
    rec = Recorder()
    collector = HostCollector(LOCAL_HOST, None, rec, FAST).start()
    try:
        rec.wait(lambda: collector.status.state == HostState.NO_DRIVER)
        assert collector.status.message == "nvidia-smi is not installed on this computer."
    finally:
        collector.stop()


def test_this_computer_streams_through_a_subprocess(standin, monkeypatch):
    for key, value in standin.env.items():
        monkeypatch.setenv(key, value)
    standin.configure(gpu_count=2)
    rec = Recorder()
    collector = HostCollector(
        LOCAL_HOST, None, rec, replace(FAST, poll_every_s=0.3),
        local_nvidia_smi=str(standin.bin_dir / "nvidia-smi"),
    )  # fmt: skip
    collector.start()
    try:
        rec.wait(lambda: len(rec.of(SamplesEvent)) >= 3 and rec.of(PollEvent))
    finally:
        collector.stop()
    assert rec.states()[0] == "live"
    assert rec.of(PollEvent)[-1].counters.load1 is not None
    assert standin.starts() >= 3  # help, stream, compute-apps polls
