"""Start-up cost control for third-party imports (measured by benchmarks/startup.py).

sqlite-utils imports numpy at module level (0.1-0.2 s here) only to map numpy scalar types to
column types. The app never stores numpy values (money is integer minor units or Decimal,
samples are plain floats), so sqlite-utils is imported with numpy hidden; numpy itself stays
importable for pyqtgraph, which loads it when the Monitor page first draws a graph.
Called by the store when a caller first uses a sqlite-utils helper (after the first paint).
"""

from __future__ import annotations

import sys


def import_sqlite_utils_without_numpy() -> None:
    if "sqlite_utils" in sys.modules or "numpy" in sys.modules:
        return  # too late to matter, or numpy is already paid for: import as usual
    sys.modules["numpy"] = None  # type: ignore[assignment]  # makes `import numpy` fail fast
    try:
        import sqlite_utils  # noqa: F401
    finally:
        del sys.modules["numpy"]
