"""Logging to a rotating file in the platform log dir; bugs land there with a traceback."""

from __future__ import annotations

import logging
from pathlib import Path

MAX_BYTES = 2_000_000
BACKUPS = 5
FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"


def setup_logging(
    log_file: Path, level: int = logging.INFO, rotating: bool = True
) -> logging.Handler:
    """Log to `log_file`, rotated at 2 MB with 5 old files kept. With `rotating=False` (the window,
    before its first paint) records go to the same file through a plain handler until
    `rotate_logs` swaps the rotating one in: `logging.handlers` loads socket, pickle and queue."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    handler: logging.Handler
    if rotating:
        from logging.handlers import RotatingFileHandler

        handler = RotatingFileHandler(
            log_file, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8"
        )
    else:
        handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setFormatter(logging.Formatter(FORMAT))
    root = logging.getLogger()
    root.setLevel(level)
    root.addHandler(handler)
    return handler


def rotate_logs(plain: logging.Handler, log_file: Path) -> logging.Handler:
    """Replace the plain handler `setup_logging(rotating=False)` returned by the rotating one."""
    rotating = setup_logging(log_file, logging.getLogger().level)
    logging.getLogger().removeHandler(plain)
    plain.close()
    return rotating
