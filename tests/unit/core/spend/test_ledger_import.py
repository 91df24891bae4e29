"""The streamed ledger import (issue 30: a 1M-row bill took 85 s and 2.2 GB): the same rows land
as with the preview's parse + apply, duplicates are found in the ledger by index look-ups, a dry
run changes nothing, and memory does not grow with the file."""

from __future__ import annotations

import csv
import io
import multiprocessing
import os
import random
import signal
import sqlite3
import threading
import tracemalloc
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from gpu_companion.core.common import i18n
from gpu_companion.core.common.clock import to_iso
from gpu_companion.core.spend import csv_source, ledger_import, rollup
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.ledger_csv import (
    COLUMNS,
    CsvInfo,
    ImportRow,
    _parse_row,
    apply_import,
    export_csv,
    parse_csv,
    scan_csv,
    stored_values,
)
from gpu_companion.core.spend.ledger_import import fast_row, import_csv, preview_csv
from gpu_companion.core.storage.store import Store

HEADER = "type,platform,currency,started_at,ended_at,amount,gpu_model,notes,ref\n"


def _bill(rows: int, with_refs: bool = True) -> str:
    lines = [HEADER]
    for i in range(rows):
        ref = f"bill-{i}" if with_refs else ""
        day, hour = 1 + i % 28, i % 20
        lines.append(
            f"rental,Lambda,USD,2025-03-{day:02d}T{hour:02d}:00:00Z,"
            f"2025-03-{day:02d}T{hour + 2:02d}:00:00Z,{1 + i % 9}.50,H100,run {i},{ref}\n"
        )
    return "".join(lines)


MIXED = (
    HEADER
    + "rental,Lambda,USD,2025-03-01T10:00:00Z,2025-03-01T12:00:00Z,3.00,H100,a,r1\n"
    + "rental,Lambda,USD,2025-03-01T10:00:00Z,2025-03-01T12:00:00Z,3.00,H100,a,r1\n"  # again
    + "rental,Lambda,USD,2025-03-02T10:00:00Z,2025-03-02T12:00:00Z,3.00,H100,b,\n"
    + "rental,Lambda,USD,2025-03-02T10:00:00Z,2025-03-02T12:00:00Z,3.00,H100,b,\n"  # 2 equal
    + "storage,RunPod,EUR,2025-03-03,,1.20,,disk,\n"
    + "rental,Lambda,USD,not a date,,3.00,H100,c,\n"  # refused
    + "rental,Lambda,USD,2025-03-04T10:00:00Z,2025-03-04T11:00:00Z,1.00,H100,d,r2\n"
)


def _contents(ledger: SpendLedger) -> list[tuple[object, ...]]:
    db = ledger.store.db
    rentals = db.execute(
        "SELECT p.name, r.currency, r.started_at, r.ended_at, r.cost_minor, r.notes, r.ref "
        "FROM rentals r JOIN platforms p ON p.id = r.platform_id ORDER BY r.id"
    ).fetchall()
    charges = db.execute(
        "SELECT p.name, c.kind, c.currency, c.at, c.amount_minor, c.description, c.ref "
        "FROM charges c JOIN platforms p ON p.id = c.platform_id ORDER BY c.id"
    ).fetchall()
    return rentals + charges


def _ledger(path: Path, ledger: SpendLedger) -> SpendLedger:
    return SpendLedger(Store(path), ledger.clock, tz=timezone.utc)


def test_streamed_import_lands_what_the_preview_would(ledger, tmp_path):  # type: ignore[no-untyped-def]
    bill = tmp_path / "bill.csv"
    bill.write_text(MIXED)
    one, two = _ledger(tmp_path / "a.sqlite3", ledger), _ledger(tmp_path / "b.sqlite3", ledger)
    try:
        preview = parse_csv(one, bill.read_bytes())
        expected = apply_import(one, preview)
        done = import_csv(two, bill, batch=2)  # batches of two: duplicates across batches too
        assert done.result == expected
        assert (expected.rentals, expected.charges, expected.duplicates) == (4, 1, 1)
        assert done.error_lines() == preview.error_lines()
        assert done.errors[0][0] == 7  # the refused line, by number
        assert _contents(two) == _contents(one)

        again = import_csv(two, bill)  # the same bill twice changes nothing
        assert (again.result.rentals, again.result.charges) == (0, 0)
        assert again.result.duplicates == 6
        assert _contents(two) == _contents(one)
    finally:
        one.store.close()
        two.store.close()


def test_own_export_and_rows_stored_without_ref_are_found_in_the_ledger(ledger, tmp_path):  # type: ignore[no-untyped-def]
    pid = ledger.store.db.execute("SELECT id FROM platforms").fetchone()[0]
    r = ledger.start_rental(pid, "2.00")
    ledger.clock.advance(hours=3)  # type: ignore[attr-defined]
    ledger.end_rental(r.id)
    ledger.add_charge(pid, "storage", "1.00")
    out = io.StringIO()
    export_csv(ledger, out)
    exported = import_csv(ledger, out.getvalue().encode())
    assert (exported.result.rentals, exported.result.charges) == (0, 0)
    assert exported.result.duplicates == 2

    bill = tmp_path / "no_refs.csv"
    bill.write_text(_bill(3, with_refs=False))
    assert import_csv(ledger, bill).result.rentals == 3
    # stored again by an older build whose refs were different: found by what the rows say
    ledger.store.db.execute("UPDATE rentals SET ref = 'old-' || id WHERE ref LIKE 'csv-%'")
    assert import_csv(ledger, bill).result.duplicates == 3


def test_a_dry_run_counts_and_changes_nothing(ledger, tmp_path):  # type: ignore[no-untyped-def]
    bill = tmp_path / "bill.csv"
    bill.write_text(MIXED)
    before = _contents(ledger)
    platforms = ledger.store.db.execute("SELECT COUNT(*) FROM platforms").fetchone()[0]
    done = import_csv(ledger, bill, dry_run=True)
    assert (done.result.rentals, done.result.charges, done.result.refused) == (4, 1, 1)
    assert _contents(ledger) == before
    assert ledger.store.db.execute("SELECT COUNT(*) FROM platforms").fetchone()[0] == platforms


def test_rows_are_read_as_the_file_is_read(ledger, tmp_path):  # type: ignore[no-untyped-def]
    """A generator: the first row comes before the file's end is read (a row past the first
    pass's sample is broken, and nothing says so until it is reached)."""
    bill = tmp_path / "bill.csv"
    bill.write_text(_bill(12_000) + "rental,Lambda,USD,broken\n")
    rows = scan_csv(ledger, bill, info=CsvInfo())
    first = next(rows)
    assert first.line == 2 and first.ok
    rest = list(rows)
    assert len(rest) == 12_000 and rest[-1].errors


def _peak(ledger: SpendLedger, path: Path) -> int:
    tracemalloc.start()
    try:
        done = import_csv(ledger, path, batch=500)
        assert done.result.refused == 0
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_file(ledger, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(csv_source, "CHUNK", 16 * 1024)  # both files are many chunks long
    small, big = tmp_path / "small.csv", tmp_path / "big.csv"
    small.write_text(_bill(2_000))
    big.write_text(_bill(16_000).replace("bill-", "big-"))
    one, two = _ledger(tmp_path / "a.sqlite3", ledger), _ledger(tmp_path / "b.sqlite3", ledger)
    try:
        peak_small, peak_big = _peak(one, small), _peak(two, big)
    finally:
        one.store.close()
        two.store.close()
    # eight times the rows, about the same memory (the preview's way held every row)
    assert peak_big < 1.5 * peak_small, (peak_small, peak_big)


# --- issue 30: a million rows in under 20 s ----------------------------------------------------

_GOOD_DATES = (
    "2024-04-03T19:16:14+00:00",
    "2023-02-13T14:32:28+00:00",
    "2099-12-31T23:00:00+00:00",
)


def _good_row(rnd: random.Random, n: int) -> list[str]:
    """A row as the ledger's own export writes it (every cell in COLUMNS order)."""
    start = datetime(2023, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=rnd.randrange(10**8))
    span = rnd.randrange(0, 90 * 3600)
    end = start + timedelta(seconds=span)
    currency = rnd.choice(["USD", "EUR", "JPY", "KWD", "CNY"])
    kind = rnd.choice(["rental", "rental", "rental", "", "storage", "credit", "fee"])
    amount = rnd.choice(["0.19", "79.60", "1234.5", "0", "3", "0.125", "2.675", "99999.999"])
    rate = rnd.choice(["0.39", "1.50", "0.00", "", "2", "0.0000001", "12.3456"])
    row = {c: "" for c in COLUMNS}
    row.update(
        type=kind, ref=f"abc-r{n}", platform=rnd.choice(["vast.ai", "friend's box", "RunPod"]),
        host=rnd.choice(["gpu-001", "", "a b"]), gpu_model=rnd.choice(["RTX 4090", "", "H100"]),
        gpu_count=rnd.choice(["1", "8", "", "0", "64"]), billing_mode=rnd.choice(
            ["on-demand", "spot", "weekly", "monthly", "bought", "stopped", ""]),
        rate=rate, granularity=rnd.choice(["second", "minute", "hour", ""]), currency=currency,
        started_at=to_iso(start), tag=rnd.choice(["", "exp1"]),
        outcome=rnd.choice(["", "success", "failure"]), notes=rnd.choice(["", "x, y"]),
        end_reason=rnd.choice(["", "released"]),
    )  # fmt: skip
    shape = rnd.randrange(4)
    if shape == 0:  # ended, with hours and amount as the export writes them
        row.update(ended_at=to_iso(end), hours=f"{span / 3600:.4f}", amount=amount)
    elif shape == 1:  # ended, metered from the rate
        row.update(ended_at=to_iso(end))
    elif shape == 2:  # hours only
        row.update(hours=rnd.choice(["0.5", "3", "20.0000", "1.2345"]), amount=amount)
    else:  # running
        row.update(rate=rnd.choice(["0.39", "2"]), planned_end=to_iso(end + timedelta(hours=1)))
    return [row[c] for c in COLUMNS]


# Each changes one cell of a good row into something only the full parser may judge (or refuse)
_ODD = [
    ("started_at", "2024-04-03T19:16:14Z"), ("started_at", "2024-04-03 19:16:14"),
    ("started_at", "2024-04-03"), ("started_at", "2024-02-30T10:00:00+00:00"),
    ("started_at", "1999-12-31T23:00:00+00:00"), ("started_at", "2024-04-03T19:16:14+02:00"),
    ("ended_at", "2024-04-03T18:00:00+00:00"), ("ended_at", "2124-04-03T18:00:00+00:00"),
    ("amount", "1,5"), ("amount", "-3.00"), ("amount", "+3"), ("amount", "1,234.50"),
    ("amount", "007"), ("amount", "1e3"), ("amount", "$3"), ("amount", "100000000000"),
    ("amount", "0.1234567890123"), ("rate", "0,39"), ("rate", "-1"), ("rate", "200000000"),
    ("rate", "1E-7"), ("hours", "-1"), ("hours", "99999"), ("hours", "0,5"), ("hours", "3"),
    ("gpu_count", "65"), ("gpu_count", "²"), ("gpu_count", "two"), ("gpu_count", "-1"),
    ("currency", "usd"), ("currency", "XYZ"), ("currency", ""), ("type", "Rental"),
    ("type", "STORAGE"), ("type", "refund"), ("ref", ""), ("platform", ""),
    ("platform", "=cmd()"), ("platform", "a\u200bb"), ("billing_mode", "hourly"),
    ("granularity", "day"), ("outcome", "ok"), ("planned_end", "2023-01-01T00:00:00+00:00"),
    ("planned_end", "soon"),
]  # fmt: skip


_CHARGE_CELLS = ("type", "ref", "platform", "currency", "started_at", "amount")


def _slow(cells: list[str]) -> ImportRow:
    item = ImportRow(2, "?")
    try:
        _parse_row(dict(zip(COLUMNS, cells, strict=True)), item, {}, ".", summaries=False)
    except (ValueError, ArithmeticError) as exc:
        item.errors.append(str(exc))
    return item


def test_the_fast_path_stores_what_the_full_parser_would(ledger):  # type: ignore[no-untyped-def]
    rnd = random.Random(30)
    rows = [_good_row(rnd, n) for n in range(3000)]
    odd = []
    for n, (column, value) in enumerate(_ODD * 3):
        cells = _good_row(rnd, 10_000 + n)
        cells[COLUMNS.index(column)] = value
        odd.append(cells)
    fast_count = 0
    for cells in rows + odd:
        quick, slow = fast_row(tuple(cells), "."), _slow(cells)
        if quick is None:
            continue
        fast_count += 1
        kind, platform, currency, granularity, stored = quick
        assert slow.ok, (cells, slow.errors)  # the fast path never takes a refused row
        assert stored == stored_values(slow), cells
        assert (kind, platform) == (slow.kind, slow.platform)
        entry = slow.rental or slow.charge
        assert entry is not None and currency == entry.currency
        assert granularity == (slow.rental.granularity if slow.rental else "second")
    # the export's own rows take the fast path; what only the full parser may read does not
    well_formed = [c for c in rows if _slow(c).ok]
    assert len(well_formed) > 2000 and fast_count >= len(well_formed)
    assert all(fast_row(tuple(c), ".") is not None for c in well_formed)
    for cells in odd:
        column = next(c for c, v in _ODD if cells[COLUMNS.index(c)] == v)
        charge = cells[0] in ("storage", "credit", "fee")
        if column in ("hours", "ended_at") or (charge and column not in _CHARGE_CELLS):
            continue  # well-formed still, or a cell a charge does not read
        assert fast_row(tuple(cells), ".") is None, cells
    assert fast_row(tuple(rows[0]), ",") is None  # a decimal-comma file: the full parser


def test_a_file_of_own_exports_imports_the_same_by_either_path(ledger, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    rnd = random.Random(7)
    lines = [_good_row(rnd, n) for n in range(1500)]
    for n, (column, value) in enumerate(_ODD):
        cells = _good_row(rnd, 5000 + n)
        cells[COLUMNS.index(column)] = value
        lines.insert(rnd.randrange(len(lines)), cells)
    out = io.StringIO()
    csv.writer(out).writerows([COLUMNS, *lines])
    bill = tmp_path / "bill.csv"
    bill.write_text(out.getvalue())
    one, two = _ledger(tmp_path / "a.sqlite3", ledger), _ledger(tmp_path / "b.sqlite3", ledger)
    try:
        fast = import_csv(one, bill, batch=400, elsewhere=True)  # parsed by another process
        assert not multiprocessing.active_children()  # reaped
        monkeypatch.setattr(ledger_import, "fast_row", lambda cells, dec: None)
        slow = import_csv(two, bill, batch=400, elsewhere=False)
        assert fast.result == slow.result and fast.errors == slow.errors
        assert fast.result.refused > 10 and fast.result.rentals > 500 and fast.result.charges > 100
        assert _stored(one) == _stored(two)
        assert not one.store.db.execute("SELECT name FROM temp.sqlite_master").fetchall()
    finally:
        one.store.close()
        two.store.close()


def _stored(ledger: SpendLedger) -> list[tuple[object, ...]]:
    db = ledger.store.db
    rentals = db.execute("SELECT * FROM rentals ORDER BY id").fetchall()
    return rentals + db.execute("SELECT * FROM charges ORDER BY id").fetchall()


def _indexes(ledger: SpendLedger) -> list[tuple[str, str]]:
    """Its indexes and triggers (the spend rollup's)."""
    return ledger.store.db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type IN ('index', 'trigger') "
        "AND sql IS NOT NULL ORDER BY name"
    ).fetchall()


def test_a_big_import_indexes_once_at_the_end_and_lands_the_same(ledger, tmp_path):  # type: ignore[no-untyped-def]
    bill = tmp_path / "bill.csv"
    bill.write_text(MIXED)
    no_refs = tmp_path / "no_refs.csv"
    no_refs.write_text(_bill(40, with_refs=False))
    one, two = _ledger(tmp_path / "a.sqlite3", ledger), _ledger(tmp_path / "b.sqlite3", ledger)
    try:
        before = _indexes(one)
        names = {name for name, _sql in before}
        assert {"rentals_started_covering", "rentals_rollup_insert"} <= names
        for target, bulk in ((one, 1), (two, 10**9)):  # re-indexed, and row by row
            target.store.db.execute("DELETE FROM spend_stale")
            import_csv(target, no_refs, batch=7, bulk=bulk)
            # without its triggers a bulk import marks the time it wrote stale once per
            # table; row by row, the triggers mark each rental's
            stale = target.store.db.execute("SELECT COUNT(*) FROM spend_stale").fetchone()[0]
            assert stale == (1 if bulk == 1 else 40)
            dry = import_csv(target, bill, dry_run=True, bulk=bulk)
            assert dry.result.rentals == 4 and _indexes(target) == before
            # the same bills again: found by index look-ups, or (while the indexes are dropped)
            # by the TEMP copy of the stored rows' instants
            again = import_csv(target, no_refs, batch=7, bulk=bulk)
            assert again.result.duplicates == 40 and again.result.rentals == 0
            import_csv(target, bill, batch=2, bulk=bulk)
            assert _indexes(target) == before  # made again, as they were
        assert _stored(one) == _stored(two)
        # and the spend rollup derived from what each marked stale is the same, and right
        hours = []
        for target in (one, two):
            assert rollup.catch_up(target.store)
            hours.append(
                target.store.db.execute("SELECT * FROM spend_hours ORDER BY 1, 2, 3").fetchall()
            )
        assert hours[0] and hours[0] == hours[1]
        plan = one.store.db.execute(
            "EXPLAIN QUERY PLAN SELECT id FROM rentals WHERE started_at = ?", ["x"]
        ).fetchall()
        assert "rentals_started_covering" in str(plan)
    finally:
        one.store.close()
        two.store.close()


def test_a_big_file_is_parsed_by_a_process_of_its_own(ledger, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    bill = tmp_path / "bill.csv"
    bill.write_text(_bill(3000) + "rental,Lambda,USD,broken,,1,H100,x,bad-1\n")

    def here(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed in the importing process")

    monkeypatch.setattr(ledger_import, "scan_csv", here)  # this process's, not the reader's
    monkeypatch.setattr(ledger_import, "ELSEWHERE_BYTES", bill.stat().st_size)
    monkeypatch.setattr(ledger_import, "_cores", lambda: 2)  # as here; a 1-core runner: in-process
    done = import_csv(ledger, bill, batch=100)  # by default: the file is big enough
    assert done.result.rentals == 3000 and done.result.refused == 1
    assert done.errors == [(3002, done.errors[0][1])] and "broken" in done.errors[0][1]
    assert done.info.lines == 3003 and done.info.columns is not None  # the reader's CsvInfo
    assert done.result.platforms_created == ("Lambda",)
    assert not multiprocessing.active_children()
    monkeypatch.setattr(ledger_import, "ELSEWHERE_BYTES", bill.stat().st_size + 1)
    with pytest.raises(AssertionError, match="importing process"):  # a smaller one is not
        import_csv(ledger, bill)
    monkeypatch.setattr(ledger_import, "ELSEWHERE_BYTES", 0)
    monkeypatch.setattr(ledger_import, "_cores", lambda: 1)  # nor on one core: nothing to gain
    with pytest.raises(AssertionError, match="importing process"):
        import_csv(ledger, bill)


def test_the_reader_speaks_the_users_language(ledger, tmp_path):  # type: ignore[no-untyped-def]
    bill = tmp_path / "bill.csv"
    bill.write_text(MIXED + "rental,Lambda,USD\n" + "rental,Lambda,USD,2025-13-01,,1,H100,x,\n")
    i18n.install("zh_CN")
    try:
        here = import_csv(ledger, bill, dry_run=True, elsewhere=False)
        there = import_csv(ledger, bill, dry_run=True, elsewhere=True)
    finally:
        i18n.install("en")
    assert there.errors == here.errors and there.result == here.result
    assert len(here.errors) == 3 and "个字段" in str(here.errors)  # "N fields where ...", in zh


def test_a_readers_failure_or_death_stores_nothing_and_leaves_no_process(  # type: ignore[no-untyped-def]
    ledger, tmp_path, monkeypatch
):
    bill = tmp_path / "bill.csv"
    bill.write_text(_bill(20_000))
    # its error, raised here as itself, with where the reader was as its cause
    with pytest.raises(IsADirectoryError) as raised:
        import_csv(ledger, tmp_path, elsewhere=True)
    assert "_read_to_pipe" in str(raised.value.__cause__)
    # killed half way (out of memory, say): the import says so and rolls back
    stored = ledger_import._Import.store

    def kill_reader(self, chunk):  # type: ignore[no-untyped-def]
        for child in multiprocessing.active_children():
            assert child.pid is not None
            os.kill(child.pid, signal.SIGKILL)
        stored(self, chunk)

    monkeypatch.setattr(ledger_import._Import, "store", kill_reader)
    with pytest.raises(OSError, match="reader stopped"):
        import_csv(ledger, bill, batch=10, elsewhere=True)
    assert not multiprocessing.active_children()
    assert ledger.store.db.execute("SELECT COUNT(*) FROM rentals").fetchone()[0] == 0

    # the import itself fails: the reader is stopped and reaped
    def fail(self, chunk):  # type: ignore[no-untyped-def]
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(ledger_import._Import, "store", fail)
    with pytest.raises(sqlite3.OperationalError, match="disk is full"):
        import_csv(ledger, bill, batch=10, elsewhere=True)
    assert not multiprocessing.active_children()
    assert ledger.store.db.execute("SELECT COUNT(*) FROM rentals").fetchone()[0] == 0


def test_a_preview_checks_the_first_rows_and_counts_the_rest(ledger, tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    bill = tmp_path / "bill.csv"
    bill.write_text(_bill(3000) + "\n\nrental,Lambda,USD,broken\n")
    preview, total = preview_csv(ledger, bill, rows=100)
    assert [r.line for r in preview.rows] == list(range(2, 102))
    assert total == 3001 and not any(r.duplicate for r in preview.rows)
    import_csv(ledger, bill)
    again, total = preview_csv(ledger, bill, rows=100)
    assert total == 3001 and all(r.duplicate for r in again.rows)  # found in the ledger

    monkeypatch.setattr(csv_source, "CHUNK", 16 * 1024)
    small, big = tmp_path / "small.csv", tmp_path / "big.csv"
    small.write_text(_bill(2_000))
    big.write_text(_bill(16_000))

    def peak(path: Path) -> int:
        tracemalloc.start()
        try:
            preview_csv(ledger, path, rows=500)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    assert peak(big) < 1.5 * peak(small)  # eight times the rows, the same memory


@pytest.mark.parametrize("elsewhere", [False, True])
def test_an_import_reports_its_progress_and_stops_at_a_word_storing_nothing(  # type: ignore[no-untyped-def]
    ledger, tmp_path, elsewhere
):
    bill = tmp_path / "bill.csv"
    bill.write_text(_bill(1000))
    seen: list[tuple[int, int]] = []
    import_csv(ledger, bill, batch=100, elsewhere=elsewhere, progress=lambda *p: seen.append(p))
    # a batch's last line (of 1,002: the header and the last line end), then all of them
    assert len(seen) == 11 and seen == sorted(seen) and seen[-2:] == [(1001, 1002), (1002, 1002)]
    assert {total for _line, total in seen} == {1002}
    other = _ledger(tmp_path / "other.sqlite3", ledger)
    try:
        stop = threading.Event()

        def stop_at_300(line: int, lines: int) -> None:
            if line >= 300:
                stop.set()

        with pytest.raises(ledger_import.ImportCancelled, match="nothing was stored"):
            import_csv(other, bill, batch=100, elsewhere=elsewhere, progress=stop_at_300,
                       cancel_event=stop)  # fmt: skip
        assert other.store.db.execute("SELECT COUNT(*) FROM rentals").fetchone()[0] == 0
        assert not multiprocessing.active_children()
        assert import_csv(other, bill).result.rentals == 1000  # and it can be imported again
    finally:
        other.store.close()
