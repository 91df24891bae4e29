"""A command whose reader stops early (`gpu-companion ledger report | head -1`) ends quietly,
without a BrokenPipeError traceback."""

from __future__ import annotations

import subprocess
import sys


def test_a_closed_pipe_ends_the_command_without_a_traceback(app_paths) -> None:  # type: ignore[no-untyped-def]
    code = "import sys; from gpu_companion.cli import main; sys.exit(main())"
    proc = subprocess.Popen([sys.executable, "-c", code, "ledger", "report"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line is written
    err = proc.stderr.read().decode()
    proc.wait(30)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
