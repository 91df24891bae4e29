"""Control of the nvidia-smi stand-in (tests/harness/bin/nvidia-smi) through its scenario file."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STANDIN = Path(__file__).parent / "bin" / "nvidia-smi"


@dataclass
class NvidiaSmiStandIn:
    """A bin dir holding the stand-in, plus the scenario and start-log files it reads and writes."""

    root: Path

    def __post_init__(self) -> None:
        self.bin_dir.mkdir(parents=True, exist_ok=True)
        target = self.bin_dir / "nvidia-smi"
        if not target.exists():
            shutil.copy2(STANDIN, target)
            target.chmod(0o755)
        self.configure()

    @property
    def bin_dir(self) -> Path:
        return self.root / "bin"

    @property
    def scenario_path(self) -> Path:
        return self.root / "scenario.json"

    @property
    def log_path(self) -> Path:
        return self.root / "starts.log"

    @property
    def env(self) -> dict[str, str]:
        return {
            "NVSMI_STANDIN_SCENARIO": str(self.scenario_path),
            "NVSMI_STANDIN_LOG": str(self.log_path),
        }

    def configure(self, **scenario: Any) -> None:
        """Replace the scenario; written atomically so a running stream never reads half a file.

        `bad_gpus={"3": "reset"}` gives GPU 3 a row of `[GPU requires reset]` values, `"lost"` the
        driver's "GPU is lost" line in place of its row, while the other GPUs stream."""
        tmp = self.scenario_path.with_name(".scenario.tmp")
        tmp.write_text(json.dumps(scenario))
        os.replace(tmp, self.scenario_path)

    def starts(self) -> int:
        """How many times the stand-in was started (remote process starts)."""
        return len(self.log_path.read_text().splitlines()) if self.log_path.exists() else 0
