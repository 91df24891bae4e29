"""Import a ledger CSV of any size in bounded memory: rows are read, checked and stored a batch at
a time (`BATCH`), all of them in one transaction (all land or none), duplicates found by index
look-ups in the ledger rather than by sets of everything in it.

The rules are `parse_csv`'s + `apply_import`'s (tests compare the two): a row already in the
ledger (its `ref`, the ref this ledger's export gives a row, or for a row without one the same
content as a stored row) or earlier in the file is skipped; a refused row is reported by line
and not imported; a platform is created for the first good row that names a new one. What stays
in memory grows only with the refused lines kept for the report (`MAX_ERRORS`) and, for a file
without refs, 16 bytes per distinct row (to number equal rows, as `_content_ref` does).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu_companion.core.common.clock import to_iso
from gpu_companion.core.common.i18n import _
from gpu_companion.core.spend.csv_export import store_ref_prefix
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.ledger_csv import (
    STORED_CHARGES,
    STORED_RENTALS,
    CsvInfo,
    ImportResult,
    ImportRow,
    content_counts,
    content_key,
    new_platform,
    scan_csv,
    store_rows,
)

BATCH = 5000  # rows checked and stored at a time
MAX_ERRORS = 1000  # refused lines kept for the report (the count is always whole)
IMPORT_CACHE_KIB = 64 * 1024  # SQLite's page cache while importing: index pages stay in memory


@dataclass
class StreamedImport:
    """What `import_csv` did: the ledger's counts, and what it says about the file."""

    info: CsvInfo
    result: ImportResult
    errors: list[tuple[int, str]] = field(default_factory=list)  # the first MAX_ERRORS

    @property
    def understood(self) -> str:
        from gpu_companion.core.spend.csv_dialect import describe

        i = self.info
        return describe(i.delimiter, i.decimal, i.columns) if i.columns else ""

    def error_lines(self) -> list[str]:
        lines = self.info.file_errors + [
            _("line {n}: {error}").format(n=n, error=e) for n, e in self.errors
        ]
        more = self.result.refused - len({n for n, _e in self.errors})
        if more > 0:
            lines.append(_("… and {n} more refused lines").format(n=more))
        return lines


class _Duplicates:
    """Which rows of a batch are in the ledger already (or earlier in the file), by index
    look-ups: a row stored by this import is in the ledger too, so the file's earlier batches
    need no memory of their own."""

    _OWN = re.compile(r"(.+)-([rc])([0-9]+)")

    def __init__(self, ledger: SpendLedger, prefix: str) -> None:
        self.db = ledger.store.db
        self.prefix = prefix
        # rows stored before this import: only those count for a row without a ref
        self.last_rental = self._max("rentals")
        self.last_charge = self._max("charges")
        self.used: dict[str, int] = {}  # stored rows already matched by content, per key

    def _max(self, table: str) -> int:
        return int(self.db.execute(f"SELECT coalesce(MAX(id), 0) FROM {table}").fetchone()[0])

    def _stored_refs(self, refs: list[str]) -> set[str]:
        found = {
            str(r[0])
            for r in self.db.execute(
                "SELECT ref FROM rentals WHERE ref IN (SELECT value FROM json_each(:refs)) UNION "
                "SELECT ref FROM charges WHERE ref IN (SELECT value FROM json_each(:refs))",
                {"refs": json.dumps(refs)},
            )
        }
        own: dict[str, list[int]] = {"r": [], "c": []}  # the refs this ledger's export gives
        for ref in refs:
            m = self._OWN.fullmatch(ref)
            if m and m[1] == self.prefix:
                own[m[2]].append(int(m[3]))
        for kind, table in (("r", "rentals"), ("c", "charges")):
            if own[kind]:
                found |= {
                    f"{self.prefix}-{kind}{r[0]}"
                    for r in self.db.execute(
                        f"SELECT id FROM {table} WHERE ref IS NULL AND id IN "
                        "(SELECT value FROM json_each(?))",
                        [json.dumps(own[kind])],
                    )
                }
        return found

    def _stored_content(self, items: list[ImportRow]) -> dict[str, int]:
        """How many rows stored before this import say each content key of `items`, looked up
        by their instants (the start of a rental, the date of a charge: indexed)."""
        starts = sorted({to_iso(i.rental.started_at) for i in items if i.rental})
        dates = sorted({to_iso(i.charge.at) for i in items if i.charge})
        rows: list[Any] = []
        if starts:
            rows += self.db.execute(
                f"{STORED_RENTALS} WHERE r.started_at IN (SELECT value FROM json_each(?)) "
                "AND r.id <= ?",
                [json.dumps(starts), self.last_rental],
            ).fetchall()
        if dates:
            rows += self.db.execute(
                f"{STORED_CHARGES} WHERE c.at IN (SELECT value FROM json_each(?)) AND c.id <= ?",
                [json.dumps(dates), self.last_charge],
            ).fetchall()
        return content_counts(rows)

    def mark(self, batch: list[ImportRow]) -> None:
        """Set `duplicate` on each row of the batch (in file order) that the ledger has."""
        refs = [e.ref for i in batch if (e := i.rental or i.charge) is not None]
        known = self._stored_refs(refs)
        by_content = [i for i in batch if i.by_content]
        stored = self._stored_content(by_content) if by_content else {}
        seen: set[str] = set()
        for item in batch:
            entry = item.rental or item.charge
            assert entry is not None
            if entry.ref in known or entry.ref in seen:
                item.duplicate = True
            elif item.by_content:
                key = content_key(entry, item.kind, item.platform)
                if stored.get(key, 0) - self.used.get(key, 0) > 0:
                    self.used[key] = self.used.get(key, 0) + 1
                    item.duplicate = True
            seen.add(entry.ref)


def _batches(rows: Iterable[ImportRow], size: int) -> Iterable[list[ImportRow]]:
    batch: list[ImportRow] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def import_csv(
    ledger: SpendLedger,
    source: Path | bytes,
    defaults: Mapping[str, str] | None = None,
    *,
    dry_run: bool = False,
    batch: int = BATCH,
) -> StreamedImport:
    """Import a ledger CSV (a path, read twice a line at a time; or bytes) in one transaction,
    `batch` rows at a time. With `dry_run` everything is checked and counted, then rolled back.
    A file error (no header, a missing column, not text) imports nothing: `info.file_errors`."""
    info = CsvInfo()
    errors: list[tuple[int, str]] = []
    counts = {"rentals": 0, "charges": 0, "duplicates": 0, "refused": 0}
    created: list[str] = []
    store = ledger.store
    prefix = store_ref_prefix(ledger)  # saved on first use: before the import's transaction
    with store.transaction() as db:
        cache = db.execute("PRAGMA cache_size").fetchone()[0]
        db.execute(f"PRAGMA cache_size = -{IMPORT_CACHE_KIB}")
        db.execute("SAVEPOINT import_csv")  # a dry run rolls back to here
        try:
            ids = {name.lower(): pid for pid, name in db.execute("SELECT id, name FROM platforms")}
            duplicates = _Duplicates(ledger, prefix)
            rows = scan_csv(ledger, source, defaults, info, summaries=False)
            for chunk in _batches(rows, batch):
                good = []
                for item in chunk:
                    if item.errors:
                        counts["refused"] += 1
                        if len(errors) < MAX_ERRORS:
                            errors += [(item.line, e) for e in item.errors]
                    else:
                        good.append(item)
                duplicates.mark(good)
                fresh = [item for item in good if not item.duplicate]
                counts["duplicates"] += len(good) - len(fresh)
                for item in fresh:
                    if item.platform.lower() not in ids:
                        cur, gran = info.new_platforms[item.platform]
                        ids[item.platform.lower()] = new_platform(
                            db, ledger, item.platform, cur, gran
                        )
                        created.append(item.platform)
                rentals, charges = store_rows(db, fresh, ids)
                counts["rentals"] += rentals
                counts["charges"] += charges
            if dry_run:
                db.execute("ROLLBACK TO import_csv")
            db.execute("RELEASE import_csv")
        finally:
            db.execute(f"PRAGMA cache_size = {int(cache)}")
    errors.sort()
    result = ImportResult(
        counts["rentals"], counts["charges"], counts["duplicates"], counts["refused"],
        tuple(created),
    )  # fmt: skip
    return StreamedImport(info, result, errors)
