"""A hostile or broken bill, and a database damaged mid-file, as `gpu-companion ledger` meets
them in a real process: refused by line or in one sentence, never a traceback, never a wrong sum."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HEADER = "type,platform,currency,started_at,ended_at,hours,rate,amount,gpu_model,notes\n"


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpu_companion", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "GPU_COMPANION_HOME": str(home)},
        check=False,
    )


def _bill(tmp_path: Path, name: str, *rows: str) -> str:
    path = tmp_path / name
    path.write_text(HEADER + "".join(r + "\n" for r in rows))
    return str(path)


def test_an_amount_without_an_end_is_refused_not_imported_as_running_at_zero(tmp_path):
    home = tmp_path / "app"
    bill = _bill(tmp_path, "a.csv", "rental,vast.ai,USD,2025-01-02T10:00:00Z,,,,3.00,A100,")
    out = _cli(home, "ledger", "import", bill)
    assert out.returncode == 1
    assert (
        f"{bill}: line 2: amount 3.00 is given but the rental has neither an end nor a rate"
        in out.stderr
    )
    assert "Imported 0 rentals" in out.stdout
    rep = _cli(home, "ledger", "report", "--at", "2025-01-10")
    assert "running" not in rep.stdout.lower() or "$0" not in rep.stdout


def test_a_huge_rate_or_span_is_refused_by_line_without_a_traceback(tmp_path):
    home = tmp_path / "app"
    bill = _bill(
        tmp_path,
        "b.csv",
        "rental,vast.ai,USD,2025-01-02T10:00:00Z,2099-01-01T00:00:00Z,,999999999999,,A100,",
        "rental,vast.ai,USD,2025-01-02T10:00:00Z,2025-03-01T00:00:00Z,,99999999,,A100,",
        "rental,vast.ai,USD,2025-01-02T10:00:00Z,,,999999999999,,A100,",
        "rental,vast.ai,USD,2025-01-02T10:00:00Z,2025-01-03T00:00:00Z,,,123456789012.00,A100,",
        "rental,vast.ai,USD,2025-01-02T10:00:00Z,2025-01-02T12:00:00Z,,1.50,,A100,ok",
    )
    out = _cli(home, "ledger", "import", bill)
    assert "Traceback" not in out.stderr and out.returncode == 1, out.stderr
    assert f"{bill}: line 2: the rental lasts more than 87,840 hours" in out.stderr
    assert f"{bill}: line 3: the cost" in out.stderr and "is out of range" in out.stderr
    assert f"{bill}: line 4: rate 999999999999 is out of range" in out.stderr
    assert f"{bill}: line 5: amount 123456789012.00 is out of range" in out.stderr
    assert "Imported 1 rentals and 0 charges; 0 already in the ledger; 4 refused." in out.stdout


def test_the_same_bill_saved_again_with_other_spellings_is_not_imported_twice(tmp_path):
    home = tmp_path / "app"
    first = _bill(
        tmp_path,
        "c.csv",
        "rental,runpod,USD,2025-02-02T10:00:00Z,2025-02-02T12:00:00Z,,0.50,,H100,",
        "rental,runpod,USD,2025-02-03,,2,1.20,,H100,",
        "storage,runpod,USD,2025-02-04T00:00:00Z,,,,4.20,,",
    )
    resaved = _bill(
        tmp_path,
        "d.csv",
        "rental,runpod,USD,2025-02-02 10:00:00,2025-02-02T12:00:00+00:00,,0.5,,H100,",
        "rental,runpod,USD,2025-02-03T00:00:00Z,,2.0,1.2,,H100,",
        "storage,runpod,USD,2025-02-04,,,,4.2,,",
    )
    assert "Imported 2 rentals and 1 charges" in _cli(home, "ledger", "import", first).stdout
    again = _cli(home, "ledger", "import", resaved)
    assert again.returncode == 0, again.stderr
    assert "Imported 0 rentals and 0 charges; 3 already in the ledger" in again.stdout
    rep = _cli(home, "ledger", "report", "--at", "2025-02-10")
    assert "Total: $7.60" in rep.stdout, rep.stdout  # 1.00 + 2.40 + 4.20, once


def test_a_database_damaged_mid_file_is_one_line_in_every_command(tmp_path):
    home = tmp_path / "app"
    rows = [
        f"rental,vast.ai,USD,2025-01-{1 + i % 28:02d}T{i % 24:02d}:00:00Z,,2,1.5,,A100,"
        f"{'x' * 200} {i}"
        for i in range(600)
    ]
    assert _cli(home, "ledger", "import", _bill(tmp_path, "many.csv", *rows)).returncode == 0
    db = home / "data" / "companion.sqlite3"
    size = db.stat().st_size
    assert size > 200_000
    with open(db, "r+b") as f:  # the header and the schema stay readable: it opens fine
        f.seek(size // 2)
        f.write(b"\xff" * 8192)
    for args in (
        ("ledger", "report", "--at", "2025-01-10"),
        ("ledger", "export", str(tmp_path / "out.csv")),
        ("ledger", "import", _bill(tmp_path, "one.csv", rows[0].replace("2025", "2024"))),
    ):
        out = _cli(home, *args)
        assert "Traceback" not in out.stderr
        if args[1] != "export" and out.returncode == 0:
            # the report sums covering indexes and the import looks duplicates up in them
            # (issue 30): they may never read the damaged pages; the export reads every row
            continue
        assert out.returncode == 2, (args, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert lines[-1] == (
            f"error: The database {db} is not a readable SQLite file (database disk image is "
            "malformed). Move it aside and start again, or restore one of the *.bak copies "
            "beside it."
        ), out.stderr
