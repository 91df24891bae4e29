"""Stand-ins for the programs the app launches (`x-terminal-emulator`, `code`, ...): each records
its argv, one JSON list per line, in a file, and exits (the argv is what the app decides)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from tests.harness.util import wait_for

SCRIPT = """#!{python}
import json, os, sys
with open(os.environ["LAUNCH_RECORD"], "a") as f:
    f.write(json.dumps(sys.argv) + "\\n")
"""


class RecordingLaunchers:
    """A bin dir of recording stand-ins; put `bin_dir` first on PATH and set `env`."""

    def __init__(self, root: Path, names: tuple[str, ...] = ("x-terminal-emulator", "code")):
        self.bin_dir = root / "bin"
        self.bin_dir.mkdir(parents=True, exist_ok=True)
        self.record = root / "launches.jsonl"
        for name in names:
            self.add(name)

    def add(self, name: str) -> Path:
        path = self.bin_dir / name
        path.write_text(SCRIPT.format(python=sys.executable))
        path.chmod(0o755)
        return path

    def remove(self, name: str) -> None:
        (self.bin_dir / name).unlink()

    @property
    def env(self) -> dict[str, str]:
        return {
            "PATH": f"{self.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "LAUNCH_RECORD": str(self.record),
        }

    def launches(self) -> list[list[str]]:
        if not self.record.exists():
            return []
        return [json.loads(line) for line in self.record.read_text().splitlines() if line]

    def wait(self, count: int = 1) -> list[list[str]]:
        """The argv lists recorded once `count` launches have written theirs."""
        wait_for(lambda: len(self.launches()) >= count, 15, f"{count} launch(es)")
        return self.launches()
