"""One GPU of eight needs a reset (or is lost) while the other seven stream: the monitor keeps
the host live and names the GPU; `inspect` says so on every run, whichever line comes first."""

from __future__ import annotations

import json

import pytest

from gpu_companion.cli import build_parser
from gpu_companion.commands import inspect
from gpu_companion.core.hosts.registry import Host, HostRegistry
from gpu_companion.core.monitor.collector import CollectorConfig, HostState, SamplesEvent
from gpu_companion.core.monitor.live import Monitor
from gpu_companion.core.storage.store import Store
from tests.integration.recorder import Recorder

HOST = Host(alias="gpu8", hostname="127.0.0.1", user="root")


def test_the_other_gpus_stream_and_the_bad_one_is_named(sshd, standin, harness_client_factory):
    standin.configure(gpu_count=8, bad_gpus={"5": "reset"})
    config = CollectorConfig(interval_ms=100, poll_every_s=0.3)
    monitor = Monitor(harness_client_factory, config=config)
    rec = Recorder()
    monitor.subscribe(rec)
    monitor.watch(HOST)
    try:
        rec.wait(lambda: len(rec.of(SamplesEvent)) >= 3)
        standin.configure(gpu_count=8, bad_gpus={"5": "reset", "6": "lost"})
        rec.wait(lambda: len(rec.of(SamplesEvent)[-1].faults) == 2)
        assert monitor.status("gpu8").state == HostState.LIVE
    finally:
        monitor.stop()
    first = rec.of(SamplesEvent)[0]
    assert sorted(s.sample.index for s in first.samples) == [0, 1, 2, 3, 4, 6, 7]
    (reset,) = first.faults
    assert (reset.index, reset.short) == (5, "needs a reset")
    assert reset.message == "GPU 5 has stopped working and needs a reset."
    last = rec.of(SamplesEvent)[-1]
    assert sorted(s.sample.index for s in last.samples) == [0, 1, 2, 3, 4, 7]
    lost = next(f for f in last.faults if f.short == "lost")
    assert lost.index == 6  # named by the bus id its earlier rows carried
    assert lost.message.startswith("GPU 6 (0000:1E:00.0) is lost")
    assert [f.index for f in monitor.faults("gpu8")] == [5, 6]


def test_every_gpu_lost_is_still_the_hosts_gpu_problem(sshd, standin, harness_client_factory):
    standin.configure(gpu_count=2, bad_gpus={"0": "lost", "1": "lost"})
    config = CollectorConfig(interval_ms=100, backoff_initial_s=5)
    monitor = Monitor(harness_client_factory, config=config)
    rec = Recorder()
    monitor.subscribe(rec)
    monitor.watch(HOST)
    try:
        rec.wait(lambda: monitor.status("gpu8").state == HostState.GPU_LOST)
    finally:
        monitor.stop()
    assert not rec.of(SamplesEvent)


def _inspect(capsys, factory, *argv):  # type: ignore[no-untyped-def]
    code = inspect.run(build_parser().parse_args(["inspect", "gpu8", *argv]), factory=factory)
    return code, capsys.readouterr().out


@pytest.fixture
def eight_gpus(app_paths, sshd, standin):  # type: ignore[no-untyped-def]
    store = Store(app_paths.database)
    HostRegistry(store).save_host(Host("gpu8", "127.0.0.1", sshd.port, sshd.user))
    store.close()
    standin.configure(gpu_count=8, bad_gpus={"3": "reset"})


def test_inspect_reports_the_gpu_needing_a_reset_ten_times_in_ten(
    eight_gpus, harness_client_factory, capsys
):
    verdicts = []
    for _ in range(10):
        code, out = _inspect(capsys, harness_client_factory, "--json")
        (host,) = json.loads(out)
        states = [(g["index"], g["state"]) for g in host["gpus"]]
        verdicts.append((code, host["state"], host["ok"], host["message"], states))
    expected_states = [(i, "needs a reset" if i == 3 else "ok") for i in range(8)]
    expected = (1, "live", False, "GPU 3 has stopped working and needs a reset.", expected_states)
    assert verdicts == [expected] * 10


def test_inspect_text_names_the_bad_gpu_between_the_good_ones(
    eight_gpus, harness_client_factory, capsys
):
    code, out = _inspect(capsys, harness_client_factory)
    lines = out.splitlines()
    assert code == 1 and len(lines) == 8
    assert [ln.split("\t")[1] for ln in lines] == [str(i) for i in range(8)]
    assert lines[3].split("\t")[3].startswith("needs a reset: GPU 3 has stopped working")
    assert all("util" in ln for i, ln in enumerate(lines) if i != 3)
