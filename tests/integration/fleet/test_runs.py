"""Sharded runs on GNU parallel against two real sshd hosts, through the app's managed config."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import missing_component


@pytest.fixture(autouse=True)
def _parallel() -> None:
    if shutil.which("parallel") is None:
        missing_component("GNU parallel not installed (Debian: parallel)")


def _spec(fleet, command: str, **kw):  # type: ignore[no-untyped-def]
    from gpu_companion.core.fleet.runs import HostSlots, RunSpec

    hosts = tuple(HostSlots(a, 2) for a in fleet.aliases)
    return RunSpec(hosts=hosts, command=command, **kw)


def test_twenty_shards_complete_on_two_hosts_with_every_output_back(fleet, tmp_path: Path):
    from gpu_companion.core.fleet.runs import split_range

    runs = fleet.services.runs
    inputs = split_range(0, 1000, 20)
    run_id = runs.start(_spec(fleet, "echo sum $(seq -s+ {1} $(({2}-1)) | bc) from $SSH_CONNECTION",
                              inputs=inputs, by_range=True))  # fmt: skip
    status = runs.wait(run_id, timeout=120)
    assert status.count("done") == 20 and status.finished, status.summary()
    total = 0
    for shard in status.shards:
        out = runs.output(run_id, shard.seq).split()
        a, b = map(int, shard.input.split(":"))
        assert int(out[1]) == sum(range(a, b)), shard  # the shard's own output, verified
        total += int(out[1])
    assert total == sum(range(1000))
    ports = {str(s.port) for s in fleet.servers}
    seen = {runs.output(run_id, s.seq).split()[-1] for s in status.shards}  # sshd's local port
    assert seen == ports  # both hosts worked
    assert {s.host for s in status.shards} == set(fleet.aliases)


def test_a_shard_failing_once_is_retried_and_one_failing_always_is_rerun_after_the_fix(
    fleet, tmp_path: Path
):
    runs = fleet.services.runs
    marks = tmp_path / "marks"
    marks.mkdir()
    command = (
        f"m={marks}; if [ {{}} = 3 ] && [ ! -e $m/fixed ]; then echo broken >&2; exit 7; fi; "
        f"if [ {{}} = 2 ] && [ ! -e $m/once ]; then touch $m/once; exit 5; fi; echo ok {{}}"
    )
    run_id = runs.start(_spec(fleet, command, inputs=("1", "2", "3", "4"), retries=2))
    status = runs.wait(run_id, timeout=60)
    states = {s.input: s.state for s in status.shards}
    assert states == {"1": "done", "2": "done", "3": "failed", "4": "done"}  # 2 retried
    failed = next(s for s in status.shards if s.state == "failed")
    assert failed.exit_code == 7 and failed.host in fleet.aliases
    assert "broken" in runs.output(run_id, failed.seq, "stderr")

    (marks / "fixed").touch()
    before = (Path(runs.root) / run_id / "joblog").read_text().count("\n")
    runs.resume_failed(run_id)
    status = runs.wait(run_id, timeout=60)
    assert all(s.state == "done" for s in status.shards)
    assert (Path(runs.root) / run_id / "joblog").read_text().count("\n") == before + 1  # only it
    assert runs.output(run_id, failed.seq).strip() == "ok 3"


def test_the_cli_runs_reports_and_resumes(fleet, tmp_path: Path):
    env = {**os.environ}
    marks = tmp_path / "m"
    marks.mkdir()
    cmd = f"if [ {{1}} = 0 ] && [ ! -e {marks}/fixed ]; then exit 9; fi; echo {{1}}-{{2}}"
    base = [sys.executable, "-m", "gpu_companion", "run"]
    done = subprocess.run(
        [*base, "--hosts", ",".join(fleet.aliases), "--range", "0:10", "--shards", "5",
         "--retries", "1", "--", cmd],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "shard 1 (0:2) failed" in done.stdout and "4 done, 1 failed" in done.stdout
    run_id = done.stdout.split()[1].rstrip(":")
    (marks / "fixed").touch()
    again = subprocess.run([*base, "--resume-failed", run_id], capture_output=True, text=True,
                           env=env, timeout=120)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "5 done" in again.stdout


def test_a_run_killed_with_the_app_shows_its_true_state_after_a_restart(fleet, tmp_path: Path):
    from gpu_companion.core.fleet.runs import Runs

    runs = fleet.services.runs
    run_id = runs.start(_spec(fleet, "sleep {}; echo slept {}", inputs=("0", "0", "4", "4")))
    deadline = time.monotonic() + 30
    while runs.status(run_id).count("done") < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    # the app is gone: a fresh Runs over the same folder, as after a restart
    later = Runs(runs.root, runs.ssh_argv)
    mid = later.status(run_id)
    assert mid.running and mid.count("done") == 2 and mid.count("running") == 2
    final = later.wait(run_id, timeout=60)
    assert final.count("done") == 4 and not final.running


def test_cancel_stops_the_remote_processes(fleet, tmp_path: Path):
    runs = fleet.services.runs
    token = f"77.{os.getpid()}"  # a sleep nobody else runs
    run_id = runs.start(_spec(fleet, f"sleep {token}; echo {{}}", inputs=("a", "b")))
    deadline = time.monotonic() + 30
    while runs.status(run_id).count("running") < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1)
    assert subprocess.run(["pgrep", "-f", f"sleep {token}"], capture_output=True).returncode == 0
    assert runs.cancel(run_id)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if subprocess.run(["pgrep", "-f", f"sleep {token}"], capture_output=True).returncode:
            break
        time.sleep(0.2)
    else:
        pytest.fail("the remote sleep survived the cancel")
    assert not runs.status(run_id).running


def test_missing_parallel_says_how_to_install_it(fleet, monkeypatch):
    from gpu_companion.core.common.errors import UserError
    from gpu_companion.core.fleet.runs import Runs

    runs = Runs(fleet.services.runs.root, fleet.services.runs.ssh_argv, parallel="no-parallel-x")
    with pytest.raises(UserError) as err:
        runs.start(_spec(fleet, "echo {}", inputs=("1",)))
    assert "GNU parallel is not installed" in str(err.value)
    assert "apt-get install parallel" in err.value.hint


def test_local_inputs_go_over_first_and_each_shards_result_file_comes_back(fleet, tmp_path: Path):
    import pwd

    runs = fleet.services.runs
    local = tmp_path / "local inputs"
    local.mkdir()
    sizes = {}
    for i in range(4):
        (local / f"part-{i}.txt").write_text("x" * (100 + i))
        sizes[f"part-{i}.txt"] = 100 + i
    spec = _spec(fleet, "wc -c < {} > {}.n && cat {}.n",
                 inputs=tuple(str(p) for p in sorted(local.iterdir())),
                 transfer_inputs=True, returns=("{}.n",))  # fmt: skip
    run_id = runs.start(spec)
    status = runs.wait(run_id, timeout=60)
    assert status.count("done") == 4, [(s.input, s.state) for s in status.shards]
    back = {p.name.split("-", 1)[1].removesuffix(".n"): int(p.read_text())
            for p in (Path(runs.root) / run_id / "out" / "in").glob("*.n")}  # fmt: skip
    assert back == sizes  # every result returned, each counted on a host
    remote_home = Path(pwd.getpwuid(os.getuid()).pw_dir)  # where ssh lands on the harness host
    assert not list((remote_home / "in").glob("*-part-*")), "--cleanup left files on the host"


def test_the_registry_tells_its_listeners_when_a_run_changes(fleet, tmp_path: Path):
    """Events, not polling: a run started elsewhere (another process's Runs on the same folder)
    is followed from its joblog, and its end is heard."""
    from gpu_companion.core.fleet.runs import Runs
    from tests.harness.util import wait_for

    runs = fleet.services.runs
    runs.follow_every_s = 0.1
    heard: list[tuple[str, bool]] = []
    def listener(run_id: str) -> None:
        heard.append((run_id, runs.status(run_id).running))

    unsubscribe = runs.subscribe(listener)
    try:
        other = Runs(runs.root, runs.ssh_argv, prepare=runs.prepare)  # the `run` command's
        run_id = other.start(_spec(fleet, "sleep 1; echo {}", inputs=("a", "b", "c")))
        wait_for(lambda: (run_id, True) in heard, 10, "an event while the run runs")
        wait_for(lambda: (run_id, False) in heard, 60, "the event of its end")
        assert runs.status(run_id).count("done") == 3
        assert {r for r, _ in heard} == {run_id}
        n = len(heard)
        time.sleep(0.5)
        assert len(heard) == n  # nothing more once it is over
    finally:
        unsubscribe()
    assert runs._follower is None  # the last listener gone: no thread follows


def test_the_cli_passes_the_command_word_for_word(fleet, tmp_path: Path):
    """`run -- printf '[%s]\\n' "two words" …` on a real host through GNU parallel: spaces,
    quotes, backslashes, `$`, backquotes and `{}` inside a word all arrive as typed."""
    inputs = tmp_path / "inputs.txt"
    inputs.write_text("in put\n")  # the shard's input has a space too
    words = ["printf", "[%s]\\n", "two words", 'a"b', "it's", "back\\slash", "$HOME", "`id`",
             "pre-{}-post", "{}"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "gpu_companion", "run", "--hosts", fleet.aliases[0], "--inputs",
         str(inputs), "--retries", "1", "--", *words],
        capture_output=True, text=True, env={**os.environ}, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = done.stdout.split()[1].rstrip(":")
    out = fleet.services.runs.output(run_id, 1)
    assert out.splitlines() == ["[two words]", '[a"b]', "[it's]", "[back\\slash]", "[$HOME]",
                                "[`id`]", "[pre-in put-post]", "[in put]"]  # fmt: skip


def _hide_rsync(server, tmp_path: Path) -> None:
    """The host has no rsync: a stand-in that answers like a shell without it, first on PATH."""
    fake = tmp_path / f"no-rsync-{server.port}"
    fake.mkdir()
    (fake / "rsync").write_text("#!/bin/sh\necho 'bash: rsync: command not found' >&2\nexit 127\n")
    (fake / "rsync").chmod(0o755)
    server.path_prefix.insert(0, fake)
    server.restart()


def test_a_result_that_cannot_come_back_fails_its_shard_and_stays_on_the_host(
    fleet, tmp_path: Path
):
    """GNU parallel's --cleanup runs after --return with `;`: on a host without rsync the shard
    read "done, exit 0", nothing came back and the remote file was deleted. Now the shard fails
    with the reason and its file stays; the host with rsync returns, verified, then cleans."""
    import pwd
    import uuid

    from gpu_companion.core.fleet.runs import HostSlots, RunSpec

    runs = fleet.services.runs
    _hide_rsync(fleet.servers[0], tmp_path)  # box-a has no rsync, box-b has
    home = Path(pwd.getpwuid(os.getuid()).pw_dir)  # where ssh lands on the harness hosts
    tag = f"gpuc-test-{uuid.uuid4().hex[:8]}"
    try:
        results = {}
        for alias in fleet.aliases:
            spec = RunSpec(hosts=(HostSlots(alias, 1),), command="echo result of {} > {}.res",
                           inputs=(f"{tag}-{alias}",), returns=("{}.res",))  # fmt: skip
            run_id = runs.start(spec)
            results[alias] = (run_id, runs.wait(run_id, timeout=60))
        run_a, status_a = results["box-a"]
        (shard,) = status_a.shards
        assert shard.state == "failed" and shard.exit_code == 0, shard
        assert "did not come back from box-a" in shard.reason and "kept on box-a" in shard.reason
        assert not (Path(runs.root) / run_a / "out" / f"{tag}-box-a.res").exists()
        assert (home / f"{tag}-box-a.res").read_text() == f"result of {tag}-box-a\n"  # kept
        assert runs.settle(run_a) == 0 and (home / f"{tag}-box-a.res").exists()
        out = runs.root / run_a / "out" / f"{tag}-box-a.res"
        assert not out.exists()

        server = fleet.servers[0]  # rsync installed on box-a: "Rerun failed shards" fixes it
        server.path_prefix.pop(0)
        server.restart()
        runs.resume_failed(run_a)
        (shard,) = runs.wait(run_a, timeout=60).shards
        assert shard.state == "done" and not shard.reason, shard
        assert out.read_text() == f"result of {tag}-box-a\n"
        assert not (home / f"{tag}-box-a.res").exists()

        run_b, status_b = results["box-b"]
        assert [s.state for s in status_b.shards] == ["done"]
        local = Path(runs.root) / run_b / "out" / f"{tag}-box-b.res"
        assert local.read_text() == f"result of {tag}-box-b\n"  # here, checked
        assert not (home / f"{tag}-box-b.res").exists()  # and only then removed there
        assert not list(home.glob(f".gpu-companion-{run_b}-*"))
    finally:
        for leftover in home.glob(f"{tag}*"):
            leftover.unlink()
        for alias in fleet.aliases:
            for sums in home.glob(f".gpu-companion-{results.get(alias, ('x',))[0]}-*"):
                sums.unlink()


def _run_key_dirs() -> set[Path]:
    import tempfile

    from gpu_companion.core.fleet.runs import _runtime_base

    return set(Path(_runtime_base() or tempfile.gettempdir()).glob("gpuc-run-*"))


def test_a_run_outlives_the_app_that_started_it(fleet, tmp_path: Path):
    """Three shards one after another; the app closes (its agent and keys go) while the first
    runs: the later shards still reach the host, with the run's own agent, which ends with it."""
    from gpu_companion.core.fleet.runs import HostSlots, Runs, RunSpec

    runs = fleet.services.runs
    before = _run_key_dirs()
    spec = RunSpec(hosts=(HostSlots("box-a", 1),), command="sleep 1.5; echo shard {}",
                   inputs=("a", "b", "c"), retries=1)  # fmt: skip
    run_id = runs.start(spec)
    deadline = time.monotonic() + 30
    while runs.status(run_id).count("running") < 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    fleet.services.close()  # the window closes: the app's agent stops, its runtime dir goes
    later = Runs(runs.root, runs.ssh_argv)
    assert later.status(run_id).count("done") == 0  # the later shards start after the close
    final = later.wait(run_id, timeout=60)
    assert [s.state for s in final.shards] == ["done"] * 3, [
        (s.state, later.output(run_id, s.seq, "stderr")) for s in final.shards
    ]
    assert later.output(run_id, 3).strip() == "shard c"
    assert _run_key_dirs() == before  # the run's agent and its folder ended with it


def test_run_detach_with_no_window_open(fleet, tmp_path: Path):
    """`run --detach` from a terminal while no window runs: the command's agent goes when it
    exits; the run's own agent keeps the shards connecting."""
    from gpu_companion.core.fleet.runs import Runs

    runs = fleet.services.runs
    fleet.services.close()  # no window
    before = _run_key_dirs()
    done = subprocess.run(
        [sys.executable, "-m", "gpu_companion", "run", "--hosts", "box-a,box-b", "--range",
         "0:3", "--shards", "3", "--slots", "box-a=1,box-b=1", "--detach", "--",
         "sleep 1; echo {1}"],
        capture_output=True, text=True, env={**os.environ}, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    run_id = done.stdout.split()[1].rstrip(":")
    final = Runs(runs.root, runs.ssh_argv).wait(run_id, timeout=60)
    assert final.count("done") == 3, [(s.state, s.exit_code) for s in final.shards]
    assert _run_key_dirs() == before


def test_each_shard_sees_only_the_gpu_of_its_slot(fleet, tmp_path: Path):
    """Two slots per host: at most two shards run at once on a host, each with its own
    CUDA_VISIBLE_DEVICES (0 or 1), never the same index twice at the same time there; a host
    with one slot leaves the variable alone (a job there may use every GPU)."""
    from gpu_companion.core.fleet.runs import HostSlots, RunSpec

    runs = fleet.services.runs
    command = ('echo "$CUDA_VISIBLE_DEVICES $(date +%s.%N)"; sleep 0.4; '
               'echo "$CUDA_VISIBLE_DEVICES $(date +%s.%N) $SSH_CONNECTION"')  # fmt: skip
    run_id = runs.start(_spec(fleet, command, inputs=tuple(map(str, range(8)))))
    status = runs.wait(run_id, timeout=120)
    assert status.count("done") == 8, status.summary()
    spans: dict[str, list[tuple[str, float, float]]] = {}
    for shard in status.shards:
        first, last = runs.output(run_id, shard.seq).splitlines()
        gpu, start = first.split()
        gpu_again, end, *_where = last.split()
        assert gpu == gpu_again and gpu in ("0", "1"), shard
        spans.setdefault(shard.host, []).append((gpu, float(start), float(end)))
    for host, ran in spans.items():
        for i, (gpu, start, end) in enumerate(ran):
            for other, s2, e2 in ran[i + 1:]:
                assert not (gpu == other and start < e2 and s2 < end), (host, ran)
    assert {g for ran in spans.values() for g, *_t in ran} == {"0", "1"}, spans

    one = RunSpec(hosts=(HostSlots(fleet.aliases[0], 1),), inputs=("a",),
                  command="echo [${CUDA_VISIBLE_DEVICES-unset}]")  # fmt: skip
    status = runs.wait(runs.start(one), timeout=60)
    assert runs.output(status.run_id, status.shards[0].seq).strip() == "[unset] a"
