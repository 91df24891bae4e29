"""`gpu-companion ledger report | export | import` as a user runs them (a real process)."""

import os
import subprocess
import sys
from pathlib import Path

from gpu_companion.core.spend.ledger_import import ELSEWHERE_BYTES
from tests.harness.bills import write_bill


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
    assert "Missing columns: platform, currency, started_at" in out.stderr
    assert "Nothing was imported." in out.stderr
    missing = _cli("import", str(tmp_path / "nope.csv"), home=tmp_path / "app")
    assert missing.returncode == 2 and "could not read" in missing.stderr
    wrong_date = _cli("report", "--at", "soon", home=tmp_path / "app")
    assert wrong_date.returncode == 2 and "not a date" in wrong_date.stderr


def test_a_semicolon_file_with_decimal_commas_imports_at_the_right_amounts(tmp_path):
    home = tmp_path / "app"
    bills = tmp_path / "rechnung.csv"
    bills.write_text(
        "type;platform;currency;started_at;hours;rate;amount;gpu_model\n"
        "rental;vast.ai;EUR;2025-01-02T10:00:00Z;3;0,39;;A100\n"
        "storage;vast.ai;EUR;2025-01-04;;;1.234,50;\n"
    )
    out = _cli("import", str(bills), home=home)
    assert out.returncode == 0, out.stderr
    assert "Columns separated by semicolons; decimal comma (0,39 is read as 0.39)" in out.stdout
    assert "Imported 1 rentals and 1 charges" in out.stdout
    rep = _cli("report", "--at", "2025-01-10", home=home)
    # 3 h x 0.39 = 1.17 (not 3 x 39 = 117), plus 1,234.50 of storage
    assert "Total: €1,235.67" in rep.stdout, rep.stdout


def test_a_provider_bill_is_read_by_its_own_column_names(tmp_path):
    home = tmp_path / "app"
    bill = tmp_path / "bill.csv"
    bill.write_text(
        "Instance\tGPU\tGPUs\tStart\tEnd\tPrice ($/h)\tCost\tRegion\n"
        "c-81\tH100 SXM\t8\t2025-02-01 08:00\t2025-02-01 10:00\t21,20\t42,40\teu\n"
    )
    out = _cli("import", str(bill), "--platform", "lambda", "--currency", "USD", home=home)
    assert out.returncode == 0, out.stderr
    assert "Columns separated by tabs" in out.stdout
    assert "Instance → host, GPU → gpu_model, GPUs → gpu_count, Start → started_at" in out.stdout
    assert "ignored: Region" in out.stdout
    assert "Imported 1 rentals and 0 charges" in out.stdout
    again = _cli("import", str(bill), "--platform", "lambda", "--currency", "USD", home=home)
    assert "0 rentals and 0 charges; 1 already in the ledger" in again.stdout
    rep = _cli("report", "--at", "2025-02-10", home=home)
    assert "lambda" in rep.stdout and "Total: $42.40" in rep.stdout, rep.stdout


def test_a_bill_of_100000_rows_imports_through_the_installed_command_and_python_m(tmp_path):
    """A file this big is parsed by a second process (`ledger_import._parsed_elsewhere`, on a
    machine of two cores or more): it starts from either way the app is run (the reader runs
    the main module again: each guards its code) and imports every row once."""
    home, bill = tmp_path / "app", write_bill(tmp_path / "bill.csv", 100_000)
    assert bill.stat().st_size >= ELSEWHERE_BYTES
    installed = Path(sys.executable).with_name("gpu-companion")
    assert installed.exists(), "the package is not installed in this environment (pip install -e .)"
    env = {**os.environ, "GPU_COMPANION_HOME": str(home)}
    first = subprocess.run([str(installed), "ledger", "import", str(bill)], env=env,
                           capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert "Imported 100000 rentals and 0 charges; 0 already" in first.stdout
    again = _cli("import", str(bill), home=home)
    assert again.returncode == 0, again.stderr
    assert "0 rentals and 0 charges; 100000 already in the ledger; 0 refused" in again.stdout


def _on_a_terminal(args: list[str], home: Path, stop_at: str | None = None) -> tuple[int, str]:
    """(exit code, what it wrote to its terminal) of `gpu-companion ledger ...` whose stderr is a
    terminal (a pty); with `stop_at`, Ctrl+C (SIGINT) once that text appears."""
    import pty
    import select
    import signal

    main, side = pty.openpty()
    env = {**os.environ, "GPU_COMPANION_HOME": str(home)}
    proc = subprocess.Popen([sys.executable, "-m", "gpu_companion", "ledger", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=side)  # fmt: skip
    os.close(side)
    seen = b""
    try:
        while True:
            ready, _w, _x = select.select([main], [], [], 60)
            assert ready, seen.decode(errors="replace")
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the other end closed: it ended
                break
            if not chunk:
                break
            seen += chunk
            if stop_at is not None and stop_at.encode() in seen:
                proc.send_signal(signal.SIGINT)
                stop_at = None
    finally:
        os.close(main)
    return proc.wait(60), seen.decode(errors="replace")


def test_on_a_terminal_a_big_import_shows_its_progress_and_ctrl_c_stores_nothing(tmp_path):
    home, bill = tmp_path / "app", write_bill(tmp_path / "bill.csv", 100_000)
    code, said = _on_a_terminal(["import", str(bill), "--dry-run"], home)
    assert code == 0, said
    assert "\rImporting: line 5001 of about 100002…" in said
    assert "\rSaving the imported rows…" in said
    code, said = _on_a_terminal(["import", str(bill)], home, stop_at="Importing: line")
    assert code == 130 and "The import was cancelled: nothing was stored." in said, said
    check = _cli("report", "--at", "2025-03-31", home=home)
    assert check.returncode == 0 and "nothing recorded" in check.stdout, check.stdout
