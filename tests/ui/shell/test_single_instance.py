"""One app per data dir: a second launch brings the first forward and exits, also while the
first is still starting; a lock left by a crash, or held by an instance that never answers, is
taken over. The last test launches `gpu-companion` itself, as a user does."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from gpu_companion.core.ssh.agent import RuntimePaths
from gpu_companion.ui.shell import single_instance
from gpu_companion.ui.shell.single_instance import SingleInstance, server_name

HOLD = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from PySide6.QtCore import QCoreApplication\n"
    "from gpu_companion.ui.shell.single_instance import SingleInstance\n"
    "app = QCoreApplication([])\n"
    "instance = SingleInstance(sys.argv[1], Path(sys.argv[2]))\n"
    "print(instance.claim(), flush=True)\n"
    "time.sleep(float(sys.argv[3]))\n"
)


def _claim_in_a_process(name: str, lock: Path, hold_s: float = 0.0) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", HOLD, name, str(lock), str(hold_s)],
        stdout=subprocess.PIPE,
        text=True,
    )


def test_a_second_instance_brings_the_first_forward(qapp, qtbot, tmp_path):
    name, lock = server_name(str(tmp_path)), tmp_path / "app.lock"
    first = SingleInstance(name, lock)
    assert first.claim()
    first.listen()  # the app listens right after its first paint
    with qtbot.waitSignal(first.raise_requested, timeout=10000):
        proc = _claim_in_a_process(name, lock)
        qtbot.waitUntil(lambda: proc.poll() is not None, timeout=10000)
    assert proc.stdout is not None and proc.stdout.read().strip() == "False"
    first.release()
    again = SingleInstance(name, lock)
    assert again.claim()  # after the first one leaves, a new one can claim
    again.release()


def test_a_launch_while_the_first_is_still_starting_waits_for_it(qapp, qtbot, tmp_path):
    name, lock = server_name(str(tmp_path)), tmp_path / "app.lock"
    first = SingleInstance(name, lock)
    assert first.claim()  # not listening yet: its window has not painted
    with qtbot.waitSignal(first.raise_requested, timeout=10000):
        proc = _claim_in_a_process(name, lock)
        qtbot.wait(1500)
        assert proc.poll() is None  # still asking, not a second app
        first.listen()
        qtbot.waitUntil(lambda: proc.poll() is not None, timeout=10000)
    assert proc.stdout is not None and proc.stdout.read().strip() == "False"
    first.release()


def test_a_launch_runs_when_the_first_ends_before_it_listened(qapp, qtbot, tmp_path):
    """The first window was closed while it started: the waiting launch takes the lock."""
    name, lock = server_name(str(tmp_path)), tmp_path / "app.lock"
    first = SingleInstance(name, lock)
    assert first.claim()
    proc = _claim_in_a_process(name, lock)
    qtbot.wait(1000)
    assert proc.poll() is None  # still asking
    started = time.monotonic()
    first.release()
    qtbot.waitUntil(lambda: proc.poll() is not None, timeout=10000)
    assert time.monotonic() - started < 3.0  # not the whole wait for an answer
    assert proc.stdout is not None and proc.stdout.read().strip() == "True"


def test_no_lock_file_possible_means_running_unprotected(qapp, tmp_path):
    mine = SingleInstance(server_name(str(tmp_path)), tmp_path / "no-such-dir" / "app.lock")
    started = time.monotonic()
    assert mine.claim() and time.monotonic() - started < 1.0


def test_the_lock_of_a_crashed_instance_is_taken_over(qapp, tmp_path):
    name, lock = server_name(str(tmp_path)), tmp_path / "app.lock"
    crashed = _claim_in_a_process(name, lock, hold_s=60)
    assert crashed.stdout is not None and crashed.stdout.readline().strip() == "True"
    crashed.kill()
    crashed.wait()
    assert lock.exists()  # left behind, naming a process that is gone
    started = time.monotonic()
    again = SingleInstance(name, lock)
    assert again.claim()
    assert time.monotonic() - started < 1.0  # no waiting for an answer from the dead
    again.release()


def test_a_running_instance_that_never_answers_keeps_its_lock(qapp, tmp_path, monkeypatch):
    name, lock = server_name(str(tmp_path)), tmp_path / "app.lock"
    hung = _claim_in_a_process(name, lock, hold_s=60)  # holds the lock, never listens
    try:
        assert hung.stdout is not None and hung.stdout.readline().strip() == "True"
        monkeypatch.setattr(single_instance, "ANSWER_WITHIN_S", 1.0)
        started = time.monotonic()
        mine = SingleInstance(name, lock)
        assert not mine.claim() and not mine.answered  # the app says so and exits 1
        assert 1.0 <= time.monotonic() - started < 5.0
    finally:
        hung.kill()
        hung.wait()


def test_a_lock_naming_a_reused_pid_is_taken_over_after_asking(qapp, tmp_path, monkeypatch):
    """The pid in the lock file is alive and runs the same program, but holds no lock."""
    name, lock = server_name(str(tmp_path)), tmp_path / "app.lock"
    holder = _claim_in_a_process(name, lock, hold_s=60)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "True"
    written = lock.read_text()
    holder.kill()
    holder.wait()
    pid = written.split("\n", 1)[0]
    lock.write_text(written.replace(pid, str(os.getpid()), 1))  # this test's python now
    monkeypatch.setattr(single_instance, "ANSWER_WITHIN_S", 1.0)
    started = time.monotonic()
    mine = SingleInstance(name, lock)
    assert mine.claim()
    assert time.monotonic() - started >= 1.0  # it asked first: the pid looked alive
    mine.release()


def test_gpu_companion_launched_twice_brings_the_first_forward(tmp_path):
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "GPU_COMPANION_HOME": str(tmp_path),
    }
    env.pop("GPU_COMPANION_EXIT_AFTER_FIRST_PAINT", None)
    launch = [sys.executable, "-m", "gpu_companion"]
    first = subprocess.Popen(launch, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        lock = tmp_path / "data" / "app.lock"
        deadline = time.monotonic() + 30
        while not lock.exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lock.exists(), first.stderr.read() if first.poll() is not None else "no lock"
        second = subprocess.run(launch, env=env, capture_output=True, text=True, timeout=60)
        assert second.returncode == 0, second.stderr
        assert "already running" in second.stdout
        assert first.poll() is None  # the first one runs on
    finally:
        first.kill()  # a crash: its lock stays behind (and its agent, ended below)
        first.wait()
    third = subprocess.run(
        launch,
        env={**env, "GPU_COMPANION_EXIT_AFTER_FIRST_PAINT": "1"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert third.returncode == 0, third.stderr
    assert "first-paint" in third.stdout  # the crashed one's lock did not stop it
    agent = RuntimePaths.for_data_dir(tmp_path / "data").socket
    subprocess.run(["pkill", "-f", f"ssh-agent -D -a {agent}"], check=False)  # the crash's
