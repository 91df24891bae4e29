"""`gpu-companion ledger report | export | import` as a user runs them (a real process)."""

import os
import subprocess
import sys


def _cli(*args, home):
    env = {**os.environ, "GPU_COMPANION_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "gpu_companion", "ledger", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def test_import_refuses_bad_rows_by_line_then_report_and_export(tmp_path):
    home = tmp_path / "app"
    bills = tmp_path / "bills.csv"
    bills.write_text(
        "type,platform,currency,started_at,hours,rate,amount,gpu_model,tag\n"
        "rental,vast.ai,USD,2025-01-02T10:00:00Z,3,1.5,,A100,lora\n"
        "rental,vast.ai,USD,2025-01-03,-1,1.5,,A100,lora\n"
        "traffic,vast.ai,USD,2025-01-04,,,0.75,,\n"
        "rental,vast.ai,US,2025-01-05,1,1,,,\n"
    )
    out = _cli("import", str(bills), home=home)
    assert out.returncode == 1
    assert f"{bills}: line 3: hours -1 is negative" in out.stderr
    assert f"{bills}: line 5: unknown currency 'US'" in out.stderr
    assert "Imported 1 rentals and 1 charges; 0 already in the ledger; 2 refused." in out.stdout

    rep = _cli("report", "--at", "2025-01-10", home=home)
    assert rep.returncode == 0, rep.stderr
    assert rep.stdout.startswith("Spend 2025-01-01 – 2025-01-31 (month)")
    assert "vast.ai" in rep.stdout and "Total: $5.25" in rep.stdout

    exported = tmp_path / "ledger.csv"
    exp = _cli("export", str(exported), home=home)
    assert exp.returncode == 0 and "Exported 2 rows" in exp.stderr
    assert exported.read_text().count("\n") == 3
    again = _cli("import", str(exported), home=home)
    assert again.returncode == 0
    assert "0 rentals and 0 charges; 2 already in the ledger; 0 refused" in again.stdout


def test_a_file_that_is_not_a_ledger_is_refused_whole(tmp_path):
    bad = tmp_path / "notes.csv"
    bad.write_text("date,what\n2025-01-01,lunch\n")
    out = _cli("import", str(bad), home=tmp_path / "app")
    assert out.returncode == 1
    assert "Missing columns: type, platform, currency, started_at" in out.stderr
    assert "Nothing was imported." in out.stderr
    missing = _cli("import", str(tmp_path / "nope.csv"), home=tmp_path / "app")
    assert missing.returncode == 2 and "could not read" in missing.stderr
    wrong_date = _cli("report", "--at", "soon", home=tmp_path / "app")
    assert wrong_date.returncode == 2 and "not a date" in wrong_date.stderr
