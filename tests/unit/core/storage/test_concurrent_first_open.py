"""Two processes opening a new data dir at once (two commands started together): one creates the
tables, the other finds them made; neither fails with "table ... already exists"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

OPEN = "import sys; from pathlib import Path; from gpu_companion.core.storage.store import Store; "\
    "s = Store(Path(sys.argv[1])); s.db.execute('SELECT count(*) FROM hosts'); s.close()"


def test_two_processes_create_a_new_database_together(tmp_path: Path) -> None:
    for round_ in range(5):
        db = tmp_path / f"r{round_}" / "companion.sqlite3"
        db.parent.mkdir()
        procs = [subprocess.Popen([sys.executable, "-c", OPEN, str(db)], stderr=subprocess.PIPE,
                                  text=True) for _ in range(3)]  # fmt: skip
        errors = [p.communicate(timeout=60)[1] for p in procs]
        assert [p.returncode for p in procs] == [0, 0, 0], errors
