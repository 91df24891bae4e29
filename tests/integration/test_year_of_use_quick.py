"""benchmarks/year_of_use.py --quick runs in CI: the data dir a year of use leaves is built
through the app's own store and migrations, every measure runs, and the table prints each
target with its verdict (timings are read by people, not asserted: see the closing notes)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO

MEASURES = (
    "first paint, year's data dir", "Hosts page first show", "Monitor page first show",
    "Transfers page first show", "Runs page first show", "Spend page first show",
    "Release page first show", "longest GUI stall, 100 hosts x 8 GPUs",
    "open one host's 8-GPU plots", "SQL statements on the GUI thread", "month report",
    "year chart", "CSV import",
)  # fmt: skip


def test_the_year_of_use_table_runs_at_quick_size(tmp_path) -> None:
    env = {**os.environ, "GPU_COMPANION_HOME": str(tmp_path / "home")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measured with .pyc writing on
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "year_of_use.py"), "--quick"],
        capture_output=True, text=True, env=env, timeout=420, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.splitlines()
    for measure in MEASURES:
        row = next((line for line in lines if line.startswith(measure)), None)
        assert row is not None, f"no row for {measure!r}:\n{done.stdout}"
        assert row.split()[-1] in ("yes", "NO"), row  # each target with its verdict
