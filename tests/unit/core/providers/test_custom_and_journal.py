"""A custom platform's commands as data (the dry run runs only the read-only verify call), what
its verify output is taken to mean, and the journal's idea of a dead owner."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_companion.core.providers.custom import (
    CommandResult,
    CustomCommands,
    CustomProvider,
    Target,
    dry_run,
    run_local,
)
from gpu_companion.core.providers.model import ProviderError
from gpu_companion.core.release.journal import owner_alive, this_owner

TARGET = Target("box7", "203.0.113.7", 41022, "root", "4242")


def test_the_dry_run_runs_only_the_verify_call(tmp_path: Path) -> None:
    log = tmp_path / "argv"
    cli = tmp_path / "mycloud"
    cli.write_text(f"#!{sys.executable}\nimport sys\nopen({str(log)!r}, 'a').write("
                   "' '.join(sys.argv[1:]) + '\\n')\nprint('4242 running')\n")  # fmt: skip
    cli.chmod(0o755)
    commands = CustomCommands(f"{cli} destroy {{instance_id}}", f"{cli} show {{instance_id}}",
                              "not found", "running")  # fmt: skip
    result = dry_run(commands, TARGET)
    assert result.argv == [str(cli), "destroy", "4242"]
    assert (result.check_code, result.check_output) == (0, "4242 running\n")
    assert log.read_text() == "show 4242\n"  # nothing destroyed
    missing = dry_run(CustomCommands("x", str(tmp_path / "nope"), "gone"), TARGET)
    assert missing.check_code == 127 and "not found on this computer" in missing.check_output


@pytest.mark.parametrize(
    "result, gone_when, running_when, state",
    [
        (CommandResult(1, "Error: instance 4242 not found"), "not found", "running", "gone"),
        (CommandResult(0, "4242 running 1x A100"), "not found", "running", "running"),
        (CommandResult(0, "4242 exited"), "", "running", "gone"),  # no longer says it runs
        (CommandResult(0, "4242 exited"), "not found", "running", "other"),  # unsure: not gone
    ],
)
def test_what_the_verify_output_means(result, gone_when, running_when, state) -> None:  # type: ignore[no-untyped-def]
    commands = CustomCommands("mycloud rm {instance_id}", "mycloud show {instance_id}",
                              gone_when, running_when)  # fmt: skip
    provider = CustomProvider("mycloud", commands, TARGET, run=lambda argv: result)
    assert provider.read("4242").state == state


def test_a_failing_verify_without_a_known_word_is_an_error_not_gone() -> None:
    commands = CustomCommands("mycloud rm {instance_id}", "mycloud show {instance_id}", "gone")
    provider = CustomProvider("mycloud", commands, TARGET,
                              run=lambda argv: CommandResult(2, "login expired"))  # fmt: skip
    with pytest.raises(ProviderError, match="exited 2"):
        provider.read("4242")


def test_a_command_that_asks_a_question_reads_end_of_file_at_once() -> None:
    code = "import sys; a = input('Are you sure? [y/N] '); print('answer', repr(a))"
    result = run_local([sys.executable, "-c", code], timeout=5)
    assert result.code == 1 and "EOFError" in result.output  # no terminal, no waiting


def test_an_owner_is_alive_only_while_its_process_runs() -> None:
    assert owner_alive(this_owner())
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        boot, pid, started = this_owner().split(":")
        stat = Path(f"/proc/{child.pid}/stat").read_text().rsplit(")", 1)[-1].split()[19]
        theirs = f"{boot}:{child.pid}:{stat}"
        assert owner_alive(theirs)
        assert not owner_alive(f"{boot}:{child.pid}:{int(stat) + 1}")  # a reused pid
        assert not owner_alive(f"another-boot:{os.getpid()}:{started}")
    finally:
        child.kill()
        child.wait()
    assert not owner_alive(theirs)
