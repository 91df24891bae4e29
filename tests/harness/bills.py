"""A bill in the app's export columns, as big as a test needs (a ledger import of a year)."""

from __future__ import annotations

from pathlib import Path

from gpu_companion.core.spend.ledger_csv import COLUMNS


def write_bill(path: Path, rows: int) -> Path:
    """`rows` one-hour rentals on vast.ai, each with its own ref; ~180 bytes a row."""
    with path.open("w", encoding="utf-8") as f:
        f.write(",".join(COLUMNS) + "\n")
        for n in range(rows):
            day, hour = 1 + n % 28, n % 20
            f.write(
                f"rental,bill-r{n},vast.ai,gpu-{n % 100:03d},RTX 4090,1,on-demand,0.39,hour,"
                f"second,USD,2025-03-{day:02d}T{hour:02d}:00:00+00:00,,"
                f"2025-03-{day:02d}T{hour + 1:02d}:00:00+00:00,1,0.39,exp{n % 7},success,"
                f"a run of a bill of {rows} rows: number {n},released\n"
            )
    return path
