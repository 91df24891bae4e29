"""Ledger CSV from the real world: other delimiters and decimal commas, a provider's own column
names, values out of range refused by line, rows without a ref, spreadsheet formulas, and
platform names from a file."""

import csv
import io
from datetime import datetime, timezone

import pytest

from gpu_companion.core.spend.ledger_csv import apply_import, export_csv, parse_csv
from gpu_companion.core.spend.reports import report

ALL = (datetime(2000, 1, 1, tzinfo=timezone.utc), datetime(2100, 1, 1, tzinfo=timezone.utc))
HEADER = ["type", "platform", "currency", "started_at", "hours", "rate", "amount", "gpu_model"]


def _file(rows, delimiter=","):
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="\n").writerows([HEADER, *rows])
    return out.getvalue().encode()


def _total(ledger):
    return sum(ln.total_minor for ln in report(ledger, *ALL).lines)


@pytest.mark.parametrize(
    ("delimiter", "rate", "storage", "understood"),
    [
        (",", "0.39", "1,234.50", "Columns separated by commas; decimal point."),
        (";", "0,39", "1.234,50", "Columns separated by semicolons; decimal comma"),
        ("\t", "0,39", "1234,50", "Columns separated by tabs; decimal comma"),
        (",", "0,39", "1234,50", "Columns separated by commas; decimal comma"),  # quoted
    ],
)
def test_delimiter_and_decimal_separator_are_detected(ledger, delimiter, rate, storage, understood):
    data = _file(
        [
            ["rental", "vast.ai", "USD", "2025-01-02T10:00:00Z", "3", rate, "", "A100"],
            ["storage", "vast.ai", "USD", "2025-01-04", "", "", storage, ""],
        ],
        delimiter,
    )
    preview = parse_csv(ledger, data)
    assert understood in preview.understood
    assert not preview.error_lines() and len(preview.good) == 2
    apply_import(ledger, preview)
    assert _total(ledger) == 117 + 123450  # 3 h x 0.39, never 3 h x 39


def test_a_providers_column_names_are_mapped_and_shown(ledger):
    data = (
        b"Start Time (UTC);End Time (UTC);GPU;Num GPUs;Price/h;Cost;Provider;Currency;Zone\n"
        b"2025-03-01 08:00;2025-03-01 10:30;H100 SXM;8;21,20;53,00;RunPod;USD;eu-2\n"
    )
    preview = parse_csv(ledger, data)
    assert not preview.error_lines()
    text = preview.understood
    assert "Start Time (UTC) → started_at" in text and "End Time (UTC) → ended_at" in text
    assert "GPU → gpu_model" in text and "Num GPUs → gpu_count" in text
    assert "Cost → amount" in text and "Provider → platform" in text and "ignored: Zone" in text
    (row,) = preview.good
    assert row.rental is not None
    assert (row.rental.gpu_count, row.rental.cost_minor, row.platform) == (8, 5300, "RunPod")


def test_defaults_fill_what_a_bill_lacks_and_missing_columns_are_named(ledger):
    data = b"start,end,rate\n2025-03-01T08:00:00Z,2025-03-01T09:00:00Z,2.65\n"
    assert parse_csv(ledger, data).file_errors == [
        "Missing columns: platform, currency. The first line must name the columns; "
        "`gpu-companion ledger export` shows the format."
    ]
    preview = parse_csv(ledger, data, {"platform": "lambda", "currency": "USD"})
    assert [r.summary for r in preview.good] == ["rental 2025-03-01 08:00 → 2025-03-01 09:00"]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (["storage", "vast.ai", "USD", "2025-01-04", "", "", "1e30", ""], "amount '1e30' is out"),
        (["rental", "vast.ai", "USD", "2025-01-04", "2", "1e30", "", ""], "rate '1e30' is out"),
        (["rental", "vast.ai", "USD", "9999-12-31T23:00:00Z", "5", "1", "", ""], "out of range"),
        (["rental", "vast.ai", "USD", "2025-01-04", "1e30", "1", "", ""], "hours '1e30' is out"),
        (["rental", "vast.ai", "USD", "2099-12-31", "48", "1", "", ""], "started_at + hours"),
        (["rental", "vast.ai", "USD", "1970-01-01", "1", "1", "", ""], "out of range"),
        (["rental", "vast.ai", "USD", "2025-01-04", "99999", "1", "", ""], "hours 99999 is out"),
    ],
)
def test_values_out_of_range_are_refused_by_line(ledger, row, message):
    good = ["rental", "vast.ai", "USD", "2025-01-02", "1", "1", "", ""]
    preview = parse_csv(ledger, _file([good, row]))
    (line,) = preview.error_lines()
    assert line.startswith("line 3: ") and message in line
    assert apply_import(ledger, preview).rentals == 1


def test_a_cr_only_file_is_read_line_by_line(ledger):
    data = _file(
        [
            ["rental", "vast.ai", "USD", "2025-01-02", "1", "1.5", "", ""],
            ["rental", "vast.ai", "USD", "2025-01-03", "-1", "1.5", "", ""],
        ]
    ).replace(b"\n", b"\r")
    preview = parse_csv(ledger, data)
    assert preview.error_lines() == ["line 3: hours -1 is negative"]
    assert apply_import(ledger, preview).rentals == 1


def test_rows_without_a_ref_are_not_imported_twice(ledger):
    row = ["rental", "vast.ai", "USD", "2025-01-02T10:00:00Z", "2", "1.5", "", "A100"]
    data = _file([row, row, ["fee", "vast.ai", "USD", "2025-01-05", "", "", "3", ""]])
    first = apply_import(ledger, parse_csv(ledger, data))
    assert (first.rentals, first.charges) == (2, 1)  # two equal rows in one file are two rentals
    again = parse_csv(ledger, data)
    assert [r.duplicate for r in again.rows] == [True, True, True]
    assert apply_import(ledger, again).duplicates == 3
    assert _total(ledger) == 300 + 300 + 300


def test_exported_cells_are_safe_in_a_spreadsheet_and_import_back(ledger, store, tmp_path):
    pid = ledger.store.db.execute("SELECT id FROM platforms").fetchone()[0]
    notes = ['=HYPERLINK("http://x")', "+1+2", "-2+3", "@SUM(A1)", "\tcmd", "\rcmd"]
    for i, note in enumerate(notes):
        r = ledger.start_rental(pid, "1", tag=f"t{i}", notes=note)
        ledger.end_rental(r.id)
    ledger.add_charge(pid, "credit", "12.50", description="=1+1")
    out = io.StringIO()
    export_csv(ledger, out)
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    cells = [c for row in rows[1:] for c in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")]
    assert [c for c in cells if c.startswith("-")] == ["-12.50"]  # a number stays a number
    assert {row[18] for row in rows[1:] if row[0] == "rental"} == {"'" + n for n in notes}

    from gpu_companion.core.spend.ledger import SpendLedger
    from gpu_companion.core.storage.store import Store

    other = SpendLedger(Store(tmp_path / "other.sqlite3"), ledger.clock, tz=timezone.utc)
    try:
        apply_import(other, parse_csv(other, out.getvalue().encode()))
        assert sorted(r.notes for r in other.history()) == sorted(notes)
        assert [c.description for c in other.charges()] == ["=1+1"]
    finally:
        other.store.close()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("=cmd|' /C calc'!A0", "has characters a name cannot have"),
        ("vast\u202eia.", "has characters a name cannot have"),
        ("vast\x07ai", "control characters"),
        ("x" * 65, "longer than 64 characters"),
    ],
)
def test_imported_platform_names_are_validated(ledger, name, message):
    data = _file([["rental", name, "USD", "2025-01-02", "1", "1", "", ""]])
    preview = parse_csv(ledger, data)
    (line,) = preview.error_lines()
    assert message in line and not preview.new_platforms


def test_three_digit_currencies_export_and_import_exactly(ledger, tmp_path):
    from gpu_companion.core.hosts.registry import HostRegistry, Platform

    p = HostRegistry(ledger.store).save_platform(Platform("gulf-gpu", "", "second", "KWD"))
    ledger.add_charge(p.id, "fee", "1.235", currency="KWD")  # 1.235 KWD: three decimals
    out = io.StringIO()
    export_csv(ledger, out)
    [row] = [r for r in csv.reader(io.StringIO(out.getvalue())) if r[2] == "gulf-gpu"]
    assert row[15] == "1.235"
    preview = parse_csv(ledger, out.getvalue().encode())
    assert [r.duplicate for r in preview.rows] == [True]
