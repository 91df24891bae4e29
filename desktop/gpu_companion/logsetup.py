"""Logging to a rotating file in the platform log dir; bugs land there with a traceback."""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path


def setup_logging(log_file: Path, level: int = logging.INFO) -> logging.Handler:
    log_file.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.handlers.RotatingFileHandler(
        log_file, maxBytes=2_000_000, backupCount=5, encoding="utf-8"
    )
    handler.setFormatter(
        logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s")
    )
    root = logging.getLogger()
    root.setLevel(level)
    root.addHandler(handler)
    return handler
