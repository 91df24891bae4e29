"""Import a ledger CSV of any size in bounded memory: rows are read, checked and stored a batch at
a time (`BATCH`), all of them in one transaction (all land or none), duplicates found by index
look-ups in the ledger rather than by sets of everything in it.

The rules are `parse_csv`'s + `apply_import`'s (tests compare the two): a row already in the
ledger (its `ref`, the ref this ledger's export gives a row, or for a row without one the same
content as a stored row) or earlier in the file is skipped; a refused row is reported by line
and not imported; a platform is created for the first good row that names a new one. What stays
in memory grows only with the refused lines kept for the report (`MAX_ERRORS`) and, for a file
without refs, 16 bytes per distinct row (to number equal rows, as `_content_ref` does).

Quick for a million rows (issue 30: 62 s before, about 16 s on two cores): a well-formed
row (the app's own export: ISO instants in UTC, plain decimals, a ref) is checked by `fast_row`
straight into its stored values, every other row by `_parse_row` (tests hold the two equal);
rows are inserted many to a statement; a file longer than a table already is indexes that table
once at the end (`_Reindex`) instead of a row at a time, and marks what it wrote stale for the
spend rollup once instead of a row at a time, inside the same transaction; no savepoint is held
open but a dry run's; and a big file is parsed by a process of its own while SQLite writes
(`_parsed_elsewhere`).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import json
import multiprocessing
import os
import pickle
import re
import threading
import traceback
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common import i18n
from gpu_companion.core.common.clock import to_iso
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.money import CURRENCIES, MINOR_DIGITS, to_minor
from gpu_companion.core.hosts.registry import GRANULARITIES
from gpu_companion.core.spend import rollup
from gpu_companion.core.spend.csv_export import store_ref_prefix
from gpu_companion.core.spend.csv_source import CsvSource
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.ledger_csv import (
    _MAX_SECONDS,
    COLUMNS,
    LATEST,
    MAX_RATE,
    STORED_CHARGES,
    STORED_RENTALS,
    CsvInfo,
    ImportPreview,
    ImportResult,
    ImportRow,
    _max_cost_minor,
    _platform,
    _platform_ids,
    _records,
    content_counts,
    content_key,
    new_platform,
    scan_csv,
    store_rows,
)
from gpu_companion.core.spend.metering import BILLING_MODES, CHARGE_KINDS, OUTCOMES, accrued_minor

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    import sqlite_utils

BATCH = 5000  # rows checked and stored at a time
MAX_ERRORS = 1000  # refused lines kept for the report (the count is always whole)
IMPORT_CACHE_KIB = 64 * 1024  # SQLite's page cache while importing: index pages stay in memory
BULK_ROWS = 50_000  # a file this long, and longer than a table is, re-indexes it once at the end
ELSEWHERE_BYTES = 16 << 20  # a file this big (~100,000 rows) is parsed by a process of its own


# --- the fast path ----------------------------------------------------------------------------

# An instant as the ledger stores (and exports) it, in the years a rental may have (2000-2099)
_STAMP = re.compile(r"20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\+00:00").fullmatch
# A decimal that reads the same in every locale and is far inside every range check
_PLAIN = re.compile(r"(?:0|[1-9][0-9]{0,10})(?:\.[0-9]{1,12})?").fullmatch
_HOURS = re.compile(r"(?:0|[1-9][0-9]{0,3})(?:\.[0-9]{1,12})?").fullmatch  # < 10,000 hours
_ZERO = Decimal(0)
_KINDS = frozenset(CHARGE_KINDS)
_CURRENCIES = frozenset(CURRENCIES)
_MODES = frozenset(BILLING_MODES)
_STEPS = frozenset(GRANULARITIES)
_OUTCOMES = frozenset(OUTCOMES)
assert COLUMNS == (
    "type", "ref", "platform", "host", "gpu_model", "gpu_count", "billing_mode", "rate",
    "rate_unit", "granularity", "currency", "started_at", "planned_end", "ended_at", "hours",
    "amount", "tag", "outcome", "notes", "end_reason",
)  # fmt: skip  # the order `fast_row` unpacks


def _minor(amount: str, currency: str) -> int:
    """`to_minor(Decimal(amount), currency)` for a `_PLAIN` amount, in integers when no
    rounding is needed."""
    whole, _dot, frac = amount.partition(".")
    places = MINOR_DIGITS.get(currency, 2)
    if len(frac) > places:
        return to_minor(Decimal(amount), currency)
    return int(whole + frac.ljust(places, "0"))  # "79.6" in cents: 7960


@functools.lru_cache(maxsize=1024)  # a bill has a few rates, a million times
def _rate(text: str) -> tuple[Decimal, str] | None:
    """A rate cell's value and stored text, as `_parse_row` reads a plain one; None for one
    it must judge."""
    if not text:
        return _ZERO, "0"
    if _PLAIN(text) is None:
        return None
    rate = Decimal(text) or _ZERO
    return None if rate > MAX_RATE else (rate, str(rate))


@functools.lru_cache(maxsize=1024)
def _terms(count: str, mode: str, granularity: str, outcome: str) -> tuple[int, str, str] | None:
    """(GPUs, billing mode, granularity) of a rental's cells with the defaults filled in;
    None for any `_parse_row` must judge."""
    count = count or "1"
    if not (count.isascii() and count.isdigit()) or int(count) > 64:
        return None
    mode = mode or "on-demand"
    granularity = granularity or "second"
    if mode not in _MODES or granularity not in _STEPS or outcome not in _OUTCOMES:
        return None
    return int(count), mode, granularity


def fast_row(cells: tuple[str, ...], dec: str) -> tuple[str, str, str, str, tuple[Any, ...]] | None:
    """A well-formed row's (kind, platform, currency, granularity, stored values), exactly as
    `_parse_row` + `rental_row`/`charge_row` would make them; None for any row it is not sure
    of (no ref, another date spelling, a signed or grouped number, anything out of range or
    refused), which `_parse_row` then reads. A `ledger_csv.FastRow`."""
    (kind, ref, platform, host, model, count, mode, rate_text, _unit, granularity, currency,
     started_at, planned_end, ended_at, hours_text, amount_text, tag, outcome, notes,
     end_reason) = cells  # fmt: skip
    if (
        dec != "."
        or not ref
        or currency not in _CURRENCIES
        or not platform
        or _STAMP(started_at) is None
        or (amount_text and _PLAIN(amount_text) is None)
    ):
        return None
    try:
        started = datetime.fromisoformat(started_at)  # ValueError: a day that does not exist
        name = _platform(platform)  # ValueError: not a name
        if kind in _KINDS:
            if not amount_text:
                return None
            minor = _minor(amount_text, currency)
            values = (None, kind, -minor if kind == "credit" else minor, currency, started_at,
                      notes, ref)  # fmt: skip
            return kind, name, currency, "second", values
        if kind and kind != "rental":
            return None
        # as _parse_row, in its order: anything it would refuse or read otherwise is None
        span = None
        if ended_at:
            if _STAMP(ended_at) is None:
                return None
            span = int((datetime.fromisoformat(ended_at) - started).total_seconds())
            if hours_text and (
                _HOURS(hours_text) is None or abs(span - float(hours_text) * 3600) > 60
            ):
                return None
        elif hours_text:
            if _HOURS(hours_text) is None:
                return None
            ended = started + timedelta(seconds=int(Decimal(hours_text) * 3600))
            if ended >= LATEST:
                return None
            ended_at = to_iso(ended)
            span = int((ended - started).total_seconds())
        if span is not None and not 0 <= span <= _MAX_SECONDS:
            return None
        rated = _rate(rate_text)
        if rated is None:
            return None
        rate, rate_stored = rated
        if amount_text and span is None and not rate and Decimal(amount_text):
            return None
        terms = _terms(count, mode, granularity, outcome)
        if terms is None:
            return None
        gpus, mode, granularity = terms
        cost = None
        if span is not None:
            if amount_text:
                cost = _minor(amount_text, currency)
            else:
                cost = accrued_minor(rate, currency, mode, granularity, started,
                                     datetime.fromisoformat(ended_at))  # fmt: skip
            if cost > _max_cost_minor(currency):
                return None
        if planned_end and (
            _STAMP(planned_end) is None or datetime.fromisoformat(planned_end) <= started
        ):
            return None
    except (ValueError, ArithmeticError):
        return None
    return "rental", name, currency, granularity, (
        None, host, model.strip(), gpus, mode, rate_stored, currency, granularity,
        started_at, planned_end or None, ended_at or None, span, cost, tag.strip(), outcome,
        notes, end_reason or ("imported" if span is not None else ""), "{}", ref,
    )  # fmt: skip


# --- the import -------------------------------------------------------------------------------


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
        self.unindexed: set[str] = set()  # tables whose instants' index `_Reindex` dropped
        self.temp: list[str] = []  # the TEMP tables that index them instead

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
        mine = self.prefix + "-"
        for ref in refs:
            m = self._OWN.fullmatch(ref) if ref.startswith(mine) else None
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
        if starts and self.last_rental:
            rows += self.db.execute(
                f"{STORED_RENTALS} WHERE {self._at('rentals', 'r', 'started_at')}",
                [json.dumps(starts), self.last_rental],
            ).fetchall()
        if dates and self.last_charge:
            rows += self.db.execute(
                f"{STORED_CHARGES} WHERE {self._at('charges', 'c', 'at')}",
                [json.dumps(dates), self.last_charge],
            ).fetchall()
        return content_counts(rows)

    def _at(self, table: str, alias: str, column: str) -> str:
        """SQL for the rows stored before this import at the instants of a JSON list: by the
        table's index, or while `_Reindex` has dropped it, by a TEMP copy of its instants."""
        if table not in self.unindexed:
            return f"{alias}.{column} IN (SELECT value FROM json_each(?)) AND {alias}.id <= ?"
        temp = f"import_{table}_at"
        if temp not in self.temp:  # made once, when a row first needs it
            self.db.execute(f"DROP TABLE IF EXISTS temp.{temp}")
            self.db.execute(
                f"CREATE TEMP TABLE {temp} AS SELECT {column} AS at, id FROM {table} WHERE id <= ?",
                [self.last_rental if table == "rentals" else self.last_charge],
            )
            self.db.execute(f"CREATE INDEX temp.{temp}_at ON {temp} (at, id)")
            self.temp.append(temp)
        return (
            f"{alias}.id IN (SELECT id FROM temp.{temp} WHERE at IN "
            "(SELECT value FROM json_each(?)) AND id <= ?)"
        )

    def close(self) -> None:
        for temp in self.temp:
            self.db.execute(f"DROP TABLE temp.{temp}")

    def mark(self, batch: list[ImportRow]) -> None:
        """Set `duplicate` on each row of the batch (in file order) that the ledger has."""
        known = self._stored_refs([i.ref for i in batch])
        by_content = [i for i in batch if i.by_content]
        stored = self._stored_content(by_content) if by_content else {}
        seen: set[str] = set()
        for item in batch:
            if item.ref in known or item.ref in seen:
                item.duplicate = True
            elif item.by_content:
                entry = item.rental or item.charge
                assert entry is not None
                key = content_key(entry, item.kind, item.platform)
                if stored.get(key, 0) - self.used.get(key, 0) > 0:
                    self.used[key] = self.used.get(key, 0) + 1
                    item.duplicate = True
            seen.add(item.ref)


class _Reindex:
    """A big import into a smaller table: its secondary indexes (not unique: the refs' stays,
    for the duplicate look-ups) and its spend rollup triggers are dropped before the first row
    and made again after the last, in the import's transaction (a rollback, a dry run's
    included, restores them). SQLite then sorts each index once instead of inserting a million
    random keys into it, and the rows written are marked stale for the rollup as one range
    instead of one stale row each."""

    def __init__(self, db: sqlite_utils.Database) -> None:
        self.db = db
        self.dropped: list[str] = []  # their CREATE INDEX and CREATE TRIGGER statements
        self.written: list[tuple[str, int]] = []  # (table, its last id before the import)

    def drop(self, table: str, last_id: int) -> None:
        unique = {str(r[1]) for r in self.db.execute(f"PRAGMA index_list({table})") if r[2]}
        for name, sql in self.db.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? "
            "AND sql IS NOT NULL ORDER BY name",
            [table],
        ).fetchall():
            if name not in unique:
                self.db.execute(f'DROP INDEX "{name}"')
                self.dropped.append(str(sql))
        self.dropped += rollup.drop_triggers(self.db, table)
        self.written.append((table, last_id))

    def restore(self) -> None:
        for table, last_id in self.written:
            rollup.mark_written(self.db, table, last_id)
        for sql in self.dropped:
            self.db.execute(sql)
        self.dropped.clear()
        self.written.clear()


def _batches(rows: Iterable[ImportRow], size: int) -> Generator[list[ImportRow], None, None]:
    batch: list[ImportRow] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _parsed_elsewhere(
    source: Path,
    defaults: Mapping[str, str] | None,
    info: CsvInfo,
    platforms: Mapping[str, int],
    size: int,
) -> Generator[list[ImportRow], None, None]:
    """`_batches(scan_csv(...))` of a file, read and checked by a process of its own while the
    caller stores the batches before: the parse (Python, about half an import's time) and
    SQLite's writing then run on two cores at once, which two threads cannot (the sqlite3
    module binds every value holding the GIL). `info` is brought up to date with each batch;
    the reader speaks the caller's language. The reader's error is raised here (its traceback
    as the cause); closing this generator stops the reader and reaps it.

    The reader is `spawn`ed (no fork of a process with Qt's threads): Python runs the main
    module of the program again in it, so a script calling this guards its own code with
    `if __name__ == "__main__"` (the app's entry points do; the bundle's launcher calls
    `multiprocessing.freeze_support()` first). The first spawn also starts multiprocessing's
    resource tracker, an idle process (about 13 MB) that stays until the app quits."""
    ctx = multiprocessing.get_context("spawn")
    inbox, outbox = ctx.Pipe(duplex=False)
    reader = ctx.Process(
        target=_read_to_pipe,
        args=(outbox, source, dict(defaults or {}), dict(platforms), size, i18n.current()),
        name="ledger-import-reader",
        daemon=True,
    )
    done = False
    try:
        reader.start()
        outbox.close()
        while True:
            try:
                what, payload, state = pickle.loads(inbox.recv_bytes())
            except EOFError:
                reader.join(5)
                raise OSError(
                    _("The file's reader stopped (exit code {code}).").format(code=reader.exitcode)
                ) from None
            for name, value in vars(state).items():
                setattr(info, name, value)
            if what == "failed":
                error, trace = payload
                raise error from _ReaderTraceback(trace)
            if what == "done":
                done = True
                return
            yield [_from_wire(r) for r in payload]
    finally:
        inbox.close()
        outbox.close()
        if reader.pid is not None:  # started
            if done:  # it ends by itself once its last word is read
                reader.join(5)
            if reader.is_alive():
                reader.terminate()
            reader.join()


class _ReaderTraceback(Exception):
    """Where the reader process was when its error came (the cause of the error raised)."""

    def __str__(self) -> str:
        return "\n" + str(self.args[0])


def _read_to_pipe(
    outbox: Connection,
    source: Path,
    defaults: dict[str, str],
    platforms: dict[str, int],
    size: int,
    language: str,
) -> None:
    """The reader process of `_parsed_elsewhere`: each batch as ("rows", its rows, the file's
    CsvInfo so far), then ("done", None, info), or ("failed", (the error, its traceback),
    info). Without the cyclic garbage collector: what it reads makes no cycles, and walking
    each batch's objects again and again took a third of the parse."""
    gc.disable()
    i18n.install(language)  # a refused row's reason, as the importing process would say it
    info = CsvInfo()

    def send(what: str, payload: Any) -> None:
        outbox.send_bytes(pickle.dumps((what, payload, info), pickle.HIGHEST_PROTOCOL))

    try:
        rows = scan_csv(None, source, defaults, info, summaries=False, fast=fast_row,
                        platforms=platforms)  # fmt: skip
        for chunk in _batches(rows, size):
            send("rows", [_to_wire(r) for r in chunk])
        send("done", None)
    except (BrokenPipeError, ConnectionResetError):
        return  # the import stopped: nobody reads
    except BaseException as exc:
        trace = traceback.format_exc()
        error: BaseException = exc
        try:
            pickle.loads(pickle.dumps(exc))  # what the other side can make of it
        except Exception:
            error = OSError(f"{type(exc).__name__}: {exc}")
        with contextlib.suppress(OSError):  # the import stopped too
            send("failed", (error, trace))
    finally:
        outbox.close()


def _to_wire(row: ImportRow) -> ImportRow | tuple[Any, ...]:
    """A row as the reader sends it: a fast-path row as a tuple of its five values (a sixth
    of the time pickling the object takes), any other whole."""
    if row.stored is None or row.errors:
        return row
    return row.line, row.kind, row.platform, row.ref, row.stored


def _from_wire(row: ImportRow | tuple[Any, ...]) -> ImportRow:
    if isinstance(row, ImportRow):
        return row
    line, kind, platform, ref, stored = row
    return ImportRow(line, kind, platform=platform, ref=ref, stored=stored)


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def import_csv(
    ledger: SpendLedger,
    source: Path | bytes,
    defaults: Mapping[str, str] | None = None,
    *,
    dry_run: bool = False,
    batch: int = BATCH,
    bulk: int = BULK_ROWS,
    elsewhere: bool | None = None,
    progress: Callable[[int, int], object] | None = None,
    cancel_event: threading.Event | None = None,
) -> StreamedImport:
    """Import a ledger CSV (a path, read twice a line at a time; or bytes) in one transaction,
    `batch` rows at a time. With `dry_run` everything is checked and counted, then rolled back.
    `progress(line, lines)` is called after each batch is stored (the file's line reached, and
    about how many it has) and with (lines, lines) once the last is; once `cancel_event` is
    set, the next batch raises `ImportCancelled` and nothing is stored (the indexes rebuilt
    and the commit, after the last batch, run to their end).
    A file error (no header, a missing column, not text) imports nothing: `info.file_errors`.
    With `elsewhere` (by default for a file of `ELSEWHERE_BYTES` on a machine of two cores or
    more; never for bytes) the file is parsed by a process of its own (`_parsed_elsewhere`:
    the caller's main module guards its code, see there); a file of at least
    `bulk` lines re-indexes each table it is longer than (`_Reindex`)."""
    if elsewhere is None:
        elsewhere = (
            isinstance(source, Path) and _cores() > 1 and source.stat().st_size >= ELSEWHERE_BYTES
        )
    info = CsvInfo()
    store = ledger.store
    prefix = store_ref_prefix(ledger)  # saved on first use: before the import's transaction
    with store.transaction() as db:
        cache = db.execute("PRAGMA cache_size").fetchone()[0]
        db.execute(f"PRAGMA cache_size = -{IMPORT_CACHE_KIB}")
        if dry_run:  # rolls back to here (only then: with a savepoint open, every row that
            # fires a trigger copies the pages it changes to a sub-journal, twice the time)
            db.execute("SAVEPOINT import_csv")
        try:
            ids = _platform_ids(db)
            if elsewhere and isinstance(source, Path):
                batches = _parsed_elsewhere(source, defaults, info, ids, batch)
            else:
                rows = scan_csv(ledger, source, defaults, info, summaries=False, fast=fast_row,
                                platforms=dict(ids))  # fmt: skip
                batches = _batches(rows, batch)
            try:
                done = _Import(ledger, db, info, ids, _Duplicates(ledger, prefix))
                for n, chunk in enumerate(batches):
                    if cancel_event is not None and cancel_event.is_set():
                        raise ImportCancelled(_("The import was cancelled: nothing was stored."))
                    if n == 0 and info.lines >= bulk:  # the file's length is known by now
                        done.reindex_bigger()
                    done.store(chunk)
                    if progress is not None:
                        progress(min(max(r.line for r in chunk), info.lines), info.lines)
            finally:
                batches.close()  # and the reader with it
            if progress is not None:  # every line read: what is left is the save
                progress(info.lines, info.lines)
            done.duplicates.close()
            if dry_run:
                db.execute("ROLLBACK TO import_csv")  # the dropped indexes too
                db.execute("RELEASE import_csv")
            else:
                done.reindex.restore()
        finally:
            db.execute(f"PRAGMA cache_size = {int(cache)}")
    done.errors.sort()
    c = done.counts
    result = ImportResult(
        c["rentals"], c["charges"], c["duplicates"], c["refused"], tuple(done.created)
    )
    return StreamedImport(info, result, done.errors)


class ImportCancelled(Exception):
    """`import_csv` stopped at the caller's word; its transaction rolled back."""


class _Import:
    """What one import stores and counts, a batch at a time, inside its transaction."""

    def __init__(
        self,
        ledger: SpendLedger,
        db: sqlite_utils.Database,
        info: CsvInfo,
        ids: dict[str, int],
        duplicates: _Duplicates,
    ) -> None:
        self.ledger, self.db, self.info, self.ids = ledger, db, info, ids
        self.duplicates = duplicates
        self.reindex = _Reindex(db)
        self.errors: list[tuple[int, str]] = []
        self.counts = {"rentals": 0, "charges": 0, "duplicates": 0, "refused": 0}
        self.created: list[str] = []

    def reindex_bigger(self) -> None:
        """Drop the secondary indexes of each table the file is longer than: sorting all its
        rows once at the end is then the cheaper way."""
        d = self.duplicates
        for table, last in (("rentals", d.last_rental), ("charges", d.last_charge)):
            if self.info.lines >= last:
                self.reindex.drop(table, last)
                d.unindexed.add(table)

    def store(self, chunk: list[ImportRow]) -> None:
        good = []
        for item in chunk:
            if item.errors:
                self.counts["refused"] += 1
                if len(self.errors) < MAX_ERRORS:
                    self.errors += [(item.line, e) for e in item.errors]
            else:
                good.append(item)
        self.duplicates.mark(good)
        fresh = [item for item in good if not item.duplicate]
        self.counts["duplicates"] += len(good) - len(fresh)
        for item in fresh:
            if item.platform.lower() not in self.ids:
                cur, gran = self.info.new_platforms[item.platform]
                self.ids[item.platform.lower()] = new_platform(
                    self.db, self.ledger, item.platform, cur, gran
                )
                self.created.append(item.platform)
        rentals, charges = store_rows(self.db, fresh, self.ids)
        self.counts["rentals"] += rentals
        self.counts["charges"] += charges


# --- the preview ------------------------------------------------------------------------------

PREVIEW_ROWS = 1000  # rows a preview checks and shows; the rest are counted, then imported


def preview_csv(
    ledger: SpendLedger,
    source: Path | bytes,
    defaults: Mapping[str, str] | None = None,
    rows: int = PREVIEW_ROWS,
) -> tuple[ImportPreview, int]:
    """The file's first `rows` rows, checked and marked as `import_csv` would mark them (a
    duplicate by index look-ups), and how many rows it has in all: the rest are counted as
    they are read, never held, so a bill of a million rows previews in bounded memory."""
    info = CsvInfo()
    scan = scan_csv(ledger, source, defaults, info)
    try:
        head = list(itertools.islice(scan, rows))
    finally:
        scan.close()
    preview = ImportPreview.of(info, head)
    if info.file_errors:
        return preview, len(head)
    _Duplicates(ledger, store_ref_prefix(ledger)).mark([r for r in head if r.ok])
    head.sort(key=lambda r: r.line)
    return preview, len(head) + (
        count_rows(source, info, head[-1].line) if len(head) == rows else 0
    )


def count_rows(source: Path | bytes, info: CsvInfo, after: int) -> int:
    """How many records the file has after line `after` that are not blank (or cannot be
    read), counted by the csv module alone."""
    errors: list[ImportRow] = []
    count = 0
    for line, fields in _records(CsvSource(source).lines(), info.delimiter, errors):
        if line > after and "".join(fields).strip():
            count += 1
    return count + sum(1 for e in errors if e.line > after)
