"""The dry run of a provider command: the action stays data, only the read-only call runs, and a
missing or silent CLI is said in words."""

from __future__ import annotations

import sys
from pathlib import Path

from gpu_companion.core.release.providers import PRESETS, Target, dry_run, run_check

TARGET = Target("vast-4090", "203.0.113.7", 41022, "root", "4242")


def test_only_the_read_only_call_runs(tmp_path: Path):
    log = tmp_path / "argv"
    cli = tmp_path / "vastai"
    cli.write_text(f"#!{sys.executable}\nimport sys\nopen({str(log)!r}, 'a').write("
                   "' '.join(sys.argv[1:]) + '\\n')\nprint('4242 running')\n")  # fmt: skip
    cli.chmod(0o755)
    preset = PRESETS["vast.ai"]
    result = dry_run(preset.release, TARGET, lambda argv: run_check([str(cli), *argv[1:]]),
                     preset.show)  # fmt: skip
    assert result.argv == ["vastai", "destroy", "instance", "4242"]
    assert (result.check_code, result.check_output) == (0, "4242 running\n")
    assert log.read_text() == "show instance 4242\n"


def test_a_missing_cli_and_a_silent_one_are_said_in_words(tmp_path: Path):
    preset = PRESETS["runpod"]
    missing = dry_run(preset.release, TARGET,
                      lambda argv: run_check([str(tmp_path / "nope"), *argv[1:]]),
                      preset.show)  # fmt: skip
    assert missing.check_code == 127 and "is not installed on this computer" in missing.check_output
    code, output = run_check([sys.executable, "-c", "import time; time.sleep(5)"], timeout=0.3)
    assert code == 124 and "did not answer within 0.3 s" in output
