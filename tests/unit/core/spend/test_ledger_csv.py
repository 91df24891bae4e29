"""CSV export -> import reproduces the totals; malformed files report each bad row and import
nothing wrong."""

import io
from datetime import datetime, timedelta, timezone

import pytest

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.ledger_csv import COLUMNS, apply_import, export_csv, parse_csv
from gpu_companion.core.spend.reports import report
from gpu_companion.core.storage.store import Store

ALL = (datetime(2000, 1, 1, tzinfo=timezone.utc), datetime(2100, 1, 1, tzinfo=timezone.utc))


def _fill(ledger, clock):
    pid = ledger.store.db.execute("SELECT id FROM platforms").fetchone()[0]
    hid = ledger.store.db.execute("SELECT id FROM hosts").fetchone()[0]
    for i in range(5):
        r = ledger.start_rental(pid, f"{1 + i}.37", gpu_model="RTX 4090", tag=f"t{i % 2}")
        clock.advance(hours=2, minutes=7 * i, seconds=13)
        ledger.end_rental(r.id)
        ledger.update_rental(r.id, outcome="success" if i % 2 else "failure")
    ledger.start_rental(pid, "300", billing_mode="weekly", currency="JPY", gpu_model="A100")
    ledger.add_charge(pid, "storage", "4.20", description="200 GB, January")
    ledger.add_charge(pid, "credit", "10", description="promo")
    ledger.start_rental(pid, "2.5", host_id=hid, max_runtime=timedelta(hours=3))
    clock.advance(minutes=95)


def _export(ledger) -> bytes:
    out = io.StringIO()
    export_csv(ledger, out)
    return out.getvalue().encode()


def test_export_then_import_into_an_empty_store_gives_the_same_totals(
    ledger, manual_clock, tmp_path
):
    _fill(ledger, manual_clock)
    data = _export(ledger)
    lines = data.decode().splitlines()
    assert lines[0] == ",".join(COLUMNS) and len(lines) == 1 + 7 + 2
    assert ",2025-01-15T09:00:00+00:00,," in lines[1]  # ISO dates; amounts as decimals
    before = report(ledger, *ALL)

    other = SpendLedger(Store(tmp_path / "other.sqlite3"), manual_clock, tz=timezone.utc)
    try:
        preview = parse_csv(other, data)
        assert preview.error_lines() == []
        assert preview.new_platforms == {"vast.ai": ("USD", "second")}
        result = apply_import(other, preview)
        assert (result.rentals, result.charges, result.refused) == (7, 2, 0)
        after = report(other, *ALL)
        assert after.totals == before.totals
        assert [(ln.rentals, ln.charges_minor) for ln in after.lines] == [
            (ln.rentals, ln.charges_minor) for ln in before.lines
        ]
        assert len(other.running()) == 2  # the running meters go on metering
        manual_clock.advance(hours=1)
        assert report(other, *ALL).totals == report(ledger, *ALL).totals
        # importing the same file again changes nothing
        again = apply_import(other, parse_csv(other, data))
        assert (again.rentals, again.charges, again.duplicates) == (0, 0, 9)
    finally:
        other.store.close()


HEADER = "type,platform,currency,started_at,ended_at,hours,rate,amount,gpu_model\n"


def test_each_bad_row_is_reported_by_line_and_the_good_ones_imported(ledger):
    rows = (
        HEADER
        + "rental,vast.ai,USD,2025-01-02T10:00:00Z,,3,1.5,,A100\n"  # 2: good (4.50)
        + "rental,vast.ai,USD,2025-13-40T10:00:00Z,,3,1.5,,A100\n"  # 3: bad date
        + "rental,vast.ai,USD,2025-01-03,,-2,1.5,,A100\n"  # 4: negative hours
        + "rental,vast.ai,XYZ,2025-01-03,,2,1.5,,A100\n"  # 5: unknown currency
        + "storage,RunPod,EUR,2025-01-04,,,,3.10,\n"  # 6: good, new platform
        + "rental,vast.ai,USD,2025-01-05 08:00,2025-01-05 06:00,,1,,\n"  # 7: ends before start
        + "rental,vast.ai,USD,2025-01-05,,1\n"  # 8: too few fields
        + "fee,vast.ai,USD,2025-01-06,,,,-4,\n"  # 9: negative fee
        + "lease,vast.ai,USD,2025-01-06,,,,4,\n"  # 10: unknown type
    ).encode() + b"rental,caf\xe9,USD,2025-01-07,,1,1,,\n"  # 11: not UTF-8
    preview = parse_csv(ledger, rows)
    errors = preview.error_lines()
    assert [e.split(":")[0] for e in errors] == [f"line {n}" for n in (3, 4, 5, 7, 8, 9, 10, 11)]
    assert "started_at '2025-13-40T10:00:00Z' is not a date" in errors[0]
    assert "hours -2 is negative" in errors[1]
    assert "unknown currency 'XYZ'" in errors[2]
    assert "cannot end before it starts" in errors[3]
    assert "not UTF-8 text (byte 0xe9" in errors[7]
    result = apply_import(ledger, preview)
    assert (result.rentals, result.charges, result.refused) == (1, 1, 8)
    assert result.platforms_created == ("RunPod",)
    assert report(ledger, *ALL).totals == {"USD": 450, "EUR": 310}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "The file is empty."),
        (b"type,platform,started_at,amount\nrental,x,2025-01-01,1\n", "Missing columns: currency"),
        (b"platform;currency;started_at\n", "Missing columns: amount (or rate)"),
        (b"\xff\xfe\x00t\x00", "starts as UTF-16 but is not"),
        (b"typ\xe9,platform\n", "Line 1: not UTF-8 text (byte 0xe9 at column 4)"),
    ],
)
def test_a_file_that_is_not_a_ledger_csv_imports_nothing(ledger, data, message):
    preview = parse_csv(ledger, data)
    assert message in preview.file_errors[0]
    with pytest.raises(UserError):
        apply_import(ledger, preview)
    assert ledger.history() == [] and ledger.charges() == []


def test_utf16_and_bom_files_are_read(ledger):
    text = HEADER + "rental,vast.ai,USD,2025-01-02T10:00:00Z,,3,1.5,,A100\n"
    for data in (text.encode("utf-16"), b"\xef\xbb\xbf" + text.encode()):
        assert parse_csv(ledger, data).error_lines() == []
