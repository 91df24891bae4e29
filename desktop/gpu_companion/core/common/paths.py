"""Where the app keeps its files: the platform's data, config and log dirs (platformdirs)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "gpu-companion"


@dataclass(frozen=True)
class AppPaths:
    data_dir: Path
    config_dir: Path
    log_dir: Path

    @classmethod
    def default(cls) -> AppPaths:
        """Platform dirs, or everything under $GPU_COMPANION_HOME when set (portable, tests)."""
        home = os.environ.get("GPU_COMPANION_HOME")
        if home:
            root = Path(home)
            return cls(root / "data", root / "config", root / "logs")
        return cls(
            Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
            Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
            Path(platformdirs.user_log_dir(APP_NAME, appauthor=False)),
        )

    def ensure(self) -> AppPaths:
        for d in (self.data_dir, self.config_dir, self.log_dir):
            d.mkdir(parents=True, exist_ok=True, mode=0o700)
        return self

    @property
    def database(self) -> Path:
        return self.data_dir / "companion.sqlite3"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "gpu-companion.log"
