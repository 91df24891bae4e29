"""CSV import of the ledger (export is `csv_export`): all columns, ISO dates, amounts as decimals.

Import parses the file into a preview first (`parse_csv`; `ledger_import.import_csv` streams a
big one in bounded memory instead); rows with errors are reported by line number and never
imported, the others are imported together in one transaction. Rows already in the
ledger (same `ref`, or for a row without one the same content) are skipped, so importing the same
file twice changes nothing. A provider's bill is read as written (`csv_dialect`): its delimiter,
its decimal comma and its own column names.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import itertools
import operator
import unicodedata
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common.clock import from_iso, to_iso
from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.common.money import (
    check_currency,
    decimal_text,
    parse_decimal,
    to_minor,
)
from gpu_companion.core.common.validation import validate_name
from gpu_companion.core.hosts.registry import GRANULARITIES
from gpu_companion.core.spend.csv_dialect import (
    ColumnMap,
    describe,
    detect_decimal,
    detect_delimiter,
    map_columns,
    numeric_cells,
    restore,
)
from gpu_companion.core.spend.csv_export import COLUMNS as COLUMNS  # re-exported
from gpu_companion.core.spend.csv_export import export_csv as export_csv  # re-exported
from gpu_companion.core.spend.csv_export import store_ref_prefix
from gpu_companion.core.spend.csv_source import CsvSource
from gpu_companion.core.spend.ledger import (
    SpendLedger,
    charge_row,
    rental_row,
    validate_rental,
)
from gpu_companion.core.spend.metering import (
    BILLING_MODES,
    CHARGE_KINDS,
    OUTCOMES,
    Charge,
    Rental,
    accrued_minor,
)

if TYPE_CHECKING:
    import sqlite_utils

REQUIRED = ("platform", "currency", "started_at")  # a row without a type is a rental
FORMAT_HINT = N_(
    "The first line must name the columns; `gpu-companion ledger export` shows the format."
)
# Dates a rental can have: anything outside is a typo or a broken file, refused by line.
EARLIEST = datetime(2000, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(2100, 1, 1, tzinfo=timezone.utc)
MAX_HOURS = Decimal(24 * 366 * 10)
# The most a rental can cost per hour or in all, in the currency's units: far above any real
# rental (the indonesian rupiah included), far below what overflows the store's 64-bit integers.
MAX_RATE = Decimal(10) ** 8
MAX_COST = Decimal(10) ** 11
_MAX_SECONDS = int(MAX_HOURS) * 3600


@functools.cache
def _max_cost_minor(currency: str) -> int:
    return to_minor(MAX_COST, currency)


# The records whose numbers vote for the decimal separator: the first pass over a file reads no
# further (a bill of a million rows is read once more to import it, not twice).
DECIMAL_SAMPLE = 10_000


# --- import -----------------------------------------------------------------------------------


@dataclass(slots=True)
class ImportRow:
    line: int
    kind: str
    errors: list[str] = field(default_factory=list)
    rental: Rental | None = None
    charge: Charge | None = None
    platform: str = ""
    duplicate: bool = False
    summary: str = ""
    by_content: bool = False  # its ref was made from what it says (the file gave none)
    ref: str = ""  # the ref it is stored under (the file's, or made from what it says)
    # a row checked by an import's fast path: its stored values (`RENTAL_COLUMNS` or
    # `CHARGE_COLUMNS` after the platform id), with no `rental` or `charge`
    stored: tuple[Any, ...] | None = None

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass
class ImportPreview:
    rows: list[ImportRow] = field(default_factory=list)
    file_errors: list[str] = field(default_factory=list)
    new_platforms: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> cur, gran
    delimiter: str = ","
    decimal: str = "."
    columns: ColumnMap | None = None

    @classmethod
    def of(cls, info: CsvInfo, rows: list[ImportRow]) -> ImportPreview:
        """The preview of `rows`, read from a file `scan_csv` found to be `info`."""
        return cls(rows, info.file_errors, info.new_platforms, info.delimiter, info.decimal,
                   info.columns)  # fmt: skip

    @property
    def understood(self) -> str:
        """How the file was read (delimiter, decimal separator, renamed columns)."""
        return describe(self.delimiter, self.decimal, self.columns) if self.columns else ""

    @property
    def good(self) -> list[ImportRow]:
        return [r for r in self.rows if r.ok and not r.duplicate]

    @property
    def bad(self) -> list[ImportRow]:
        return [r for r in self.rows if not r.ok]

    def error_lines(self) -> list[str]:
        return self.file_errors + [
            _("line {n}: {error}").format(n=r.line, error=e) for r in self.bad for e in r.errors
        ]


@dataclass(frozen=True)
class ImportResult:
    rentals: int
    charges: int
    duplicates: int
    refused: int
    platforms_created: tuple[str, ...]


def _date(value: str, name: str) -> datetime:
    text = value.strip()
    try:
        if len(text) == 10:  # a bare date: midnight UTC
            text += "T00:00:00"
        when = from_iso(text.replace(" ", "T", 1).replace("Z", "+00:00"))
    except (ValueError, OverflowError):
        raise ValueError(
            _("{name} {value} is not a date (use ISO 8601, e.g. 2024-05-01T14:30:00Z)").format(
                name=name, value=repr(value)
            )
        ) from None
    return _in_range(when, name, value)


def _in_range(when: datetime, name: str, value: str) -> datetime:
    if not EARLIEST <= when < LATEST:
        raise ValueError(
            _("{name} {value} is out of range: a rental lies between {first} and {last}").format(
                name=name, value=value, first=EARLIEST.year, last=LATEST.year - 1
            )
        )
    return when


@functools.lru_cache(maxsize=256)  # a bill names a few platforms a million times
def _platform(value: str) -> str:
    """A platform name from a file: a display name, and never one a spreadsheet would run."""
    try:
        name = validate_name("platform", value, N_("the platform name"))
    except ValidationError as exc:
        raise ValueError(exc.message.rstrip(".")) from None
    if name.startswith(("=", "+", "-", "@")) or any(
        unicodedata.category(c) in ("Cf", "Zl", "Zp") for c in name
    ):
        raise ValueError(
            _("the platform name {name} has characters a name cannot have").format(name=repr(name))
        )
    return name


def _choice(value: str, name: str, allowed: Iterable[str], default: str) -> str:
    v = value.strip() or default
    if v not in allowed:
        raise ValueError(
            _("{name} {value} is not one of: {choices}").format(
                name=name, value=repr(value), choices=", ".join(a for a in allowed if a)
            )
        )
    return v


def _parse_row(
    row: dict[str, str],
    item: ImportRow,
    platforms: Mapping[str, int],
    dec: str = ".",
    summaries: bool = True,
) -> None:
    """`row`: every ledger column's cell, stripped and restored ('' for a column the file
    lacks); `summaries`: say in words what the row is (a preview shows it; an import of a
    million rows does without)."""
    get = row.__getitem__

    def number(name: str) -> Decimal | None:
        value = row[name]
        return parse_decimal(value, name, dec) if value else None

    kind = get("type").lower() or "rental"
    item.kind = kind
    if kind != "rental" and kind not in CHARGE_KINDS:
        raise ValueError(
            _("type {kind} is not rental or one of: {kinds}").format(
                kind=repr(kind), kinds=", ".join(CHARGE_KINDS)
            )
        )
    item.platform = get("platform")
    if not item.platform:
        raise ValueError(_("the platform is empty"))
    item.platform = _platform(item.platform)
    currency = check_currency(get("currency") or "?")
    started = _date(get("started_at"), "started_at")
    amount = number("amount")
    pid = platforms.get(item.platform.lower(), 0)
    if kind != "rental":
        if amount is None:
            raise ValueError(_("a charge needs an amount"))
        minor = to_minor(amount, currency)
        if kind == "credit":
            minor = -abs(minor)
        elif minor < 0:
            raise ValueError(
                _("amount {amount} is negative; only a credit can be").format(amount=get("amount"))
            )
        item.charge = Charge(pid, kind, minor, currency, started, get("notes"), None, get("ref"))
        if summaries:
            item.summary = f"{kind} {decimal_text(minor, currency)} {currency}"
        return
    if amount is not None and amount > MAX_COST:
        raise ValueError(
            _("amount {amount} is out of range (the most is {most})").format(
                amount=get("amount"), most=f"{MAX_COST:,}"
            )
        )
    hours = number("hours")
    if hours is not None and hours < 0:
        raise ValueError(_("hours {hours} is negative").format(hours=get("hours")))
    if hours is not None and hours > MAX_HOURS:
        raise ValueError(
            _("hours {hours} is out of range (the most is {most})").format(
                hours=get("hours"), most=f"{MAX_HOURS:,}"
            )
        )
    ended = _date(get("ended_at"), "ended_at") if get("ended_at") else None
    if ended is None and hours is not None:
        end = started + timedelta(seconds=int(hours * 3600))
        ended = _in_range(end, "started_at + hours", f"{end:%Y-%m-%d %H:%M}")
    elif ended is not None and hours is not None:
        if abs((ended - started).total_seconds() - float(hours) * 3600) > 60:
            raise ValueError(
                _("hours {hours} does not match started_at and ended_at").format(hours=get("hours"))
            )
    if ended is not None and (ended - started).total_seconds() > _MAX_SECONDS:
        raise ValueError(
            _("the rental lasts more than {most} hours; check its dates").format(
                most=f"{MAX_HOURS:,}"
            )
        )
    rate = number("rate") or Decimal(0)
    if rate > MAX_RATE:
        raise ValueError(
            _("rate {rate} is out of range (the most is {most} an hour)").format(
                rate=get("rate"), most=f"{MAX_RATE:,}"
            )
        )
    if amount is not None and amount < 0:
        raise ValueError(_("amount {amount} is negative").format(amount=get("amount")))
    if amount and ended is None and not rate:  # never a rental running at zero, amount lost
        raise ValueError(
            _(
                "amount {amount} is given but the rental has neither an end nor a rate: add "
                "ended_at or hours (or a rate, to import it as still running)"
            ).format(amount=get("amount"))
        )
    count = get("gpu_count") or "1"
    if not count.isdigit():
        raise ValueError(_("gpu_count {count} is not a whole number").format(count=repr(count)))
    billing_mode = _choice(get("billing_mode"), "billing_mode", BILLING_MODES, "on-demand")
    granularity = _choice(get("granularity"), "granularity", GRANULARITIES, "second")
    cost = None
    if ended is not None:
        cost = (
            to_minor(amount, currency)
            if amount is not None
            else accrued_minor(rate, currency, billing_mode, granularity, started, ended)
        )
        if cost > _max_cost_minor(currency):
            shown = decimal_text(cost, currency)
            raise ValueError(
                _("the cost {cost} {currency} is out of range (the most is {most})").format(
                    cost=shown, currency=currency, most=f"{MAX_COST:,}"
                )
            )
    rental = Rental(
        platform_id=pid,
        rate=rate,
        currency=currency,
        started_at=started,
        billing_mode=billing_mode,
        granularity=granularity,
        host_alias=get("host"),
        gpu_model=get("gpu_model"),
        gpu_count=int(count),
        planned_end=_date(get("planned_end"), "planned_end") if get("planned_end") else None,
        ended_at=ended,
        tag=get("tag"),
        outcome=_choice(get("outcome"), "outcome", OUTCOMES, ""),
        notes=get("notes"),
        end_reason=get("end_reason") or ("imported" if ended else ""),
        ref=get("ref"),
        cost_minor=cost,
    )
    try:
        item.rental = validate_rental(rental)
    except ValidationError as exc:
        raise ValueError(exc.message[0].lower() + exc.message[1:].rstrip(".")) from None
    if not summaries:
        return
    if ended:
        span = f"{started:%Y-%m-%d %H:%M} → {ended:%Y-%m-%d %H:%M}"
    else:
        span = _("{start} (running)").format(start=f"{started:%Y-%m-%d %H:%M}")
    model = rental.gpu_model or _("rental")
    item.summary = f"{model} {span}"


def _number_key(value: Decimal | int | None) -> str:
    """One spelling per value: 0.5, 0.50 and 5E-1 are the same rate."""
    if value is None:
        return ""
    d = Decimal(value).normalize()
    return format(d if d else Decimal(0), "f")


def content_key(entry: Rental | Charge, kind: str, platform: str) -> str:
    """What a row says, as parsed values (instants, minor units, normalised rates), never as the
    file's text: the same bill saved again with 0.5 for 0.50 or another date spelling is equal."""
    if isinstance(entry, Rental):
        ended = to_iso(entry.ended_at) if entry.ended_at else ""
        at, parts = entry.started_at, [entry.host_alias, entry.gpu_model, str(entry.gpu_count)]
        parts += [_number_key(entry.rate), ended, _number_key(entry.cost_minor)]
    else:
        at, parts = entry.at, [str(entry.amount_minor), entry.description]
    return "\x1f".join([kind, platform.lower(), entry.currency, to_iso(at), *parts])


def _content_ref(entry: Rental | Charge, kind: str, platform: str, seen: dict[bytes, int]) -> str:
    """A ref for a row that has none, from what it says (and how often the file said it before),
    so importing the same bill again finds it; two equal rows in one file stay two rows."""
    key = content_key(entry, kind, platform)
    digest = hashlib.blake2b(key.encode(), digest_size=16).digest()  # a bill of a million rows
    seen[digest] = seen.get(digest, 0) + 1
    return "csv-" + hashlib.sha256(f"{key}\x1f{seen[digest]}".encode()).hexdigest()[:20]


def _stored_content(ledger: SpendLedger) -> dict[str, int]:
    """How many stored rows say each content key: a bill imported before (by an older version,
    whose refs hashed the file's text) is still recognised by its values."""
    rows = ledger.store.db.execute(STORED_RENTALS).fetchall()
    rows += ledger.store.db.execute(STORED_CHARGES).fetchall()
    return content_counts(rows)


# What `content_counts` reads (a caller may add a WHERE clause)
STORED_RENTALS = (
    "SELECT 'rental', p.name, r.currency, r.started_at, r.host_alias, r.gpu_model, "
    "r.gpu_count, r.rate, r.ended_at, r.cost_minor FROM rentals r "
    "JOIN platforms p ON p.id = r.platform_id"
)
STORED_CHARGES = (
    "SELECT c.kind, p.name, c.currency, c.at, c.amount_minor, c.description "
    "FROM charges c JOIN platforms p ON p.id = c.platform_id"
)


def content_counts(rows: Iterable[Sequence[Any]]) -> dict[str, int]:
    """How many of the stored rows (`STORED_RENTALS`, `STORED_CHARGES`) say each content key."""
    counts: dict[str, int] = {}
    for row in rows:
        try:
            if row[0] == "rental":
                _kind, platform, cur, at, alias, model, count, rate, ended, cost = row
                parts = [alias or "", model or "", str(count), _number_key(Decimal(rate))]
                parts += [to_iso(from_iso(ended)) if ended else "", _number_key(cost)]
            else:
                _kind, platform, cur, at, amount, description = row
                parts = [str(amount), description or ""]
            key = "\x1f".join([row[0], platform.lower(), cur, to_iso(from_iso(at)), *parts])
        except (ValueError, ArithmeticError, TypeError):
            continue  # a row this version cannot read is never equal to a parsed one
        counts[key] = counts.get(key, 0) + 1
    return counts


@dataclass
class CsvInfo:
    """What reading a file found out about it as a whole (`scan_csv` fills it in)."""

    file_errors: list[str] = field(default_factory=list)
    new_platforms: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> cur, gran
    delimiter: str = ","
    decimal: str = "."
    columns: ColumnMap | None = None
    lines: int = 0  # about how many lines the file has (its line ends, counted on the first pass)


# An import's fast path for a well-formed row (`ledger_import.fast_row`): the row's cells in
# `COLUMNS` order (as `_parse_row` gets them) and the file's decimal separator -> (kind,
# platform, currency, granularity, stored values), or None for a row only `_parse_row` judges.
FastRow = Callable[[tuple[str, ...], str], tuple[str, str, str, str, tuple[Any, ...]] | None]


def _platform_ids(db: sqlite_utils.Database) -> dict[str, int]:
    """The ledger's platforms: lower-case name -> id."""
    return {name.lower(): pid for pid, name in db.execute("SELECT id, name FROM platforms")}


def _records(
    lines: Iterator[str], delimiter: str, errors: list[ImportRow]
) -> Iterator[tuple[int, list[str]]]:
    """Every record with its line; a record the csv module cannot read goes to `errors`."""
    reader = csv.reader(lines, delimiter=delimiter)
    while True:
        try:
            for fields in reader:  # the loop in C, until a record the csv module refuses
                yield reader.line_num, fields
            return
        except csv.Error as exc:
            why = _("not readable as CSV: {error}").format(error=exc)
            errors.append(ImportRow(reader.line_num, "?", [why]))


def _header(
    source: CsvSource, info: CsvInfo, defaults: Mapping[str, str]
) -> tuple[int, list[str]] | None:
    """First pass: the header, the column map and the decimal separator of the numbers (every
    number of the file votes); None, with `info.file_errors` saying why, for a file that cannot
    be imported."""
    if source.blank:
        info.file_errors.append(_("The file is empty."))
        return None
    lines = source.lines()
    first = next(lines, "\n")

    def unreadable() -> list[str]:
        reason = next(iter(source.bad.values()), _("empty"))
        return [_("Line 1: {reason}. Nothing was imported.").format(reason=reason)]

    if 1 in source.bad:
        info.file_errors = unreadable()
        return None
    info.delimiter = detect_delimiter(first.rstrip("\r\n"))
    records = _records(itertools.chain([first], lines), info.delimiter, [])
    head = next(records, None)
    if head is not None and not any(f.strip() for f in head[1]):
        rest = list(itertools.islice(records, 1))  # a blank first line: is there any text?
        if not rest and not any(line.strip() for line in lines):
            info.file_errors = unreadable()  # every line that is not blank is not text
            return None
        records = itertools.chain(rest, records)
    if head is None:
        info.file_errors.append(
            _("The first line cannot be read as CSV. {hint}").format(hint=_(FORMAT_HINT))
        )
        return None
    info.columns = columns = map_columns(head[1], COLUMNS)
    present = set(columns.names) | {k for k, v in defaults.items() if v and k in COLUMNS}
    missing = [c for c in REQUIRED if c not in present]
    if not ({"amount", "rate"} & present):
        missing.append(_("amount (or rate)"))
    if missing:
        info.file_errors.append(
            _("Missing columns: {columns}. {hint}").format(
                columns=", ".join(missing), hint=_(FORMAT_HINT)
            )
        )
        return None
    sample = itertools.islice(records, DECIMAL_SAMPLE)
    info.decimal = detect_decimal(numeric_cells((f for _n, f in sample), columns.names),
                                  info.delimiter)  # fmt: skip
    return head


def scan_csv(
    ledger: SpendLedger | None,
    data: bytes | Path,
    defaults: Mapping[str, str] | None = None,
    info: CsvInfo | None = None,
    summaries: bool = True,
    fast: FastRow | None = None,
    platforms: Mapping[str, int] | None = None,
) -> Generator[ImportRow, None, None]:
    """Each row of a CSV file, parsed and checked, as it is read (nothing stored, no duplicate
    looked for): the file is read twice, a line at a time, never held. A row without a ref
    gets one from what it says (`_content_ref`). `info` receives what the file as a whole is:
    with a file error, no row comes. Rows come in line order, except lines that are not text
    inside a quoted cell, which come at the end. `fast` checks a well-formed row without
    `_parse_row` (and its row then has `stored` values instead of a `rental` or `charge`).
    `platforms` (lower-case name -> id) saves reading them from the ledger (from another
    process, say: then `ledger` may be None)."""
    info = info if info is not None else CsvInfo()
    source = CsvSource(data)
    info.lines = source.line_count
    given = {k: v for k, v in (defaults or {}).items() if v and k in COLUMNS}
    head = _header(source, info, given)
    if head is None or info.columns is None:
        return
    header_line, header = head
    names = info.columns.names
    blank = dict.fromkeys(COLUMNS, "") | {k: restore(v.strip()) for k, v in given.items()}
    # each ledger column's cell, picked in C: from the file's stripped fields, or `blank`'s
    where = {n: i for i, n in enumerate(names) if n}
    order = [where.get(c, len(header) + k) for k, c in enumerate(COLUMNS)]
    pick = operator.itemgetter(*order)
    extra = list(blank.values())
    as_is = order == list(range(len(COLUMNS))) and len(header) == len(COLUMNS)  # the export's
    # a default cell starting with ' is restored only when one of the file's cells has a '
    own = (
        operator.itemgetter(*where.values() or [0])
        if any(v.startswith("'") for v in extra)
        else None
    )
    if platforms is None:
        assert ledger is not None
        platforms = _platform_ids(ledger.store.db)
    seen_content: dict[bytes, int] = {}
    errors: list[ImportRow] = []
    lines = source.lines()
    bad = source.bad  # filled as the lines are read
    width = len(header)
    for line, fields in _records(lines, info.delimiter, errors):
        if errors:
            yield from errors
            errors.clear()
        if line <= header_line:
            continue
        if bad and line in bad:
            yield ImportRow(line, "?", [bad.pop(line)])
            continue
        joined = "".join(fields)
        if not joined.strip():
            continue
        if len(fields) != width:
            why = _("{n} fields where the header names {columns}").format(
                n=len(fields), columns=width
            )
            yield ImportRow(line, "?", [why])
            continue
        cells: tuple[str, ...] = (
            tuple(map(str.strip, fields)) if as_is else pick([*map(str.strip, fields), *extra])
        )
        if "'" in joined and (own is None or "'" in "".join(own(fields))):
            cells = tuple(restore(v) if v.startswith("'") else v for v in cells)  # rare: an
            # exported cell a spreadsheet would have run
        quick = fast(cells, info.decimal) if fast is not None else None
        if quick is not None:
            kind, name, currency, granularity, stored = quick
            if name.lower() not in platforms and name not in info.new_platforms:
                info.new_platforms[name] = (currency, granularity)
            yield ImportRow(line, kind, platform=name, ref=cells[1], stored=stored)
            continue
        item = ImportRow(line, "?")
        row = dict(zip(COLUMNS, cells, strict=True))
        try:
            _parse_row(row, item, platforms, info.decimal, summaries)
        except (ValueError, ArithmeticError) as exc:
            item.errors.append(str(exc))
            yield item
            continue
        entry: Rental | Charge | None = item.rental or item.charge
        assert entry is not None
        if not entry.ref:  # a file's own refs are authoritative; else its values
            ref = _content_ref(entry, item.kind, item.platform, seen_content)
            if item.rental is not None:
                item.rental = entry = replace(item.rental, ref=ref)
            elif item.charge is not None:
                item.charge = entry = replace(item.charge, ref=ref)
            item.by_content = True
        item.ref = entry.ref
        if item.platform.lower() not in platforms and item.platform not in info.new_platforms:
            gran = item.rental.granularity if item.rental else "second"
            info.new_platforms[item.platform] = (entry.currency, gran)
        yield item
    yield from errors
    for line, message in sorted(source.bad.items()):  # undecodable lines the reader skipped
        yield ImportRow(line, "?", [message])


def parse_csv(
    ledger: SpendLedger, data: bytes | Path, defaults: Mapping[str, str] | None = None
) -> ImportPreview:
    """Read a CSV into a preview: each row parsed and checked, nothing stored yet. `defaults`
    fill columns a provider's bill lacks (its platform, its currency). The preview holds every
    row: `ledger_import.import_csv` imports a big file without."""
    info = CsvInfo()
    rows = list(scan_csv(ledger, data, defaults, info))
    preview = ImportPreview.of(info, rows)
    if info.file_errors:
        return preview  # with the rows a broken file still named (none)
    prefix = store_ref_prefix(ledger)
    known_refs = {  # the refs this ledger's own export gives its rows
        r[0]
        for r in ledger.store.db.execute(
            "SELECT coalesce(ref, ? || '-r' || id) FROM rentals "
            "UNION SELECT coalesce(ref, ? || '-c' || id) FROM charges",
            [prefix, prefix],
        )
    }
    seen_refs: set[str] = set()
    stored_content = _stored_content(ledger)
    for item in rows:
        entry: Rental | Charge | None = item.rental or item.charge
        if entry is None or item.errors:
            continue
        if entry.ref in known_refs or entry.ref in seen_refs:
            item.duplicate = True
        elif item.by_content:  # once per stored row that says it
            key = content_key(entry, item.kind, item.platform)
            if stored_content.get(key, 0) > 0:
                stored_content[key] -= 1
                item.duplicate = True
        seen_refs.add(entry.ref)
    rows.sort(key=lambda r: r.line)  # the preview's own list, in place
    return preview


def apply_import(ledger: SpendLedger, preview: ImportPreview) -> ImportResult:
    """Store the good rows (and the platforms they name) in one transaction."""
    if preview.file_errors:
        raise UserError(preview.file_errors[0])
    good = preview.good
    with ledger.store.transaction() as db:
        ids = _platform_ids(db)
        created = []
        for name, (cur, gran) in preview.new_platforms.items():
            if name.lower() not in ids and any(r.platform == name for r in good):
                ids[name.lower()] = new_platform(db, ledger, name, cur, gran)
                created.append(name)
        rentals, charges = store_rows(db, good, ids)
    return ImportResult(
        rentals,
        charges,
        sum(r.duplicate for r in preview.rows),
        len(preview.bad),
        tuple(created),
    )


def new_platform(
    db: sqlite_utils.Database, ledger: SpendLedger, name: str, currency: str, granularity: str
) -> int:
    """A platform a file names for the first time, inside the import's transaction; its id."""
    cur = db.execute(
        "INSERT INTO platforms (name, currency, billing_granularity, console_url, created_at) "
        "VALUES (?, ?, ?, '', ?)",
        [name, currency, granularity, to_iso(ledger.now())],
    )
    return int(cur.lastrowid or 0)


# The stored columns, in the order `rental_row` and `charge_row` give them (the platform id first)
RENTAL_COLUMNS = tuple(rental_row(Rental(0, Decimal(0), "USD", EARLIEST)))
CHARGE_COLUMNS = tuple(charge_row(Charge(0, "fee", 0, "USD", EARLIEST)))
assert RENTAL_COLUMNS[0] == CHARGE_COLUMNS[0] == "platform_id"


def stored_values(item: ImportRow) -> tuple[Any, ...]:
    """A checked row's stored values after the platform id: the fast path's, or its rental's or
    charge's (`rental_row`, `charge_row`)."""
    if item.stored is not None:
        return item.stored
    if item.rental is not None:
        row = rental_row(item.rental)
        return tuple(row[c] for c in RENTAL_COLUMNS[1:])
    assert item.charge is not None
    row = charge_row(item.charge)
    return tuple(row[c] for c in CHARGE_COLUMNS[1:])


_ROWS_PER_INSERT = 5000  # rows in one INSERT: SQLite works on them without the GIL
_LIMIT_VARIABLE_NUMBER = 9  # sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER (named in Python 3.11)


def _insert(db: sqlite_utils.Database, table: str, columns: Sequence[str], rows: list[Any]) -> None:
    """Insert `rows` (tuples of `columns`' values) in statements of many rows each: one step
    each, so a thread that parses the next rows runs meanwhile (a statement per row takes the
    GIL back after every row, and waits for it)."""
    getlimit = getattr(db.conn, "getlimit", None)  # Python 3.11
    limit = int(getlimit(_LIMIT_VARIABLE_NUMBER)) if getlimit else 999  # the least SQLite's
    per = max(1, min(_ROWS_PER_INSERT, limit // len(columns)))
    one = f"({', '.join('?' * len(columns))})"
    head = f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
    for start in range(0, len(rows), per):
        part = rows[start : start + per]
        db.conn.execute(
            head + ", ".join([one] * len(part)), list(itertools.chain.from_iterable(part))
        )


def store_rows(
    db: sqlite_utils.Database, items: Iterable[ImportRow], ids: Mapping[str, int]
) -> tuple[int, int]:
    """Insert the checked, new rows of `items` under their platforms' ids (`ids`: lower-case
    name -> id); how many rentals and charges."""
    rentals, charges = [], []
    for item in items:
        values = (ids[item.platform.lower()], *stored_values(item))
        if item.rental is not None or (item.stored is not None and item.kind == "rental"):
            rentals.append(values)
        else:
            charges.append(values)
    _insert(db, "rentals", RENTAL_COLUMNS, rentals)
    _insert(db, "charges", CHARGE_COLUMNS, charges)
    return len(rentals), len(charges)
