"""CSV export of the ledger: every rental and charge, ISO dates, amounts as decimals, formatted by
SQLite in batches; a text cell a spreadsheet would run as a formula starts with an apostrophe."""

from __future__ import annotations

import csv
import uuid
from collections.abc import Iterator, Sequence
from typing import IO, Any

from gpu_companion.core.common.money import MINOR_DIGITS, decimal_text
from gpu_companion.core.spend.ledger import SpendLedger

COLUMNS = (
    "type", "ref", "platform", "host", "gpu_model", "gpu_count", "billing_mode", "rate",
    "rate_unit", "granularity", "currency", "started_at", "planned_end", "ended_at", "hours",
    "amount", "tag", "outcome", "notes", "end_reason",
)  # fmt: skip
BATCH = 2000


def store_ref_prefix(ledger: SpendLedger) -> str:
    """A short id of this ledger, so exported refs never collide with another ledger's."""
    prefix = ledger.store.get_setting("ledger.store_id")
    if not prefix:
        prefix = uuid.uuid4().hex[:8]
        ledger.store.set_setting("ledger.store_id", prefix)
    return prefix


def _amount_sql(column: str, currency: str) -> str:
    """SQL that writes integer minor units as the currency's decimal text (as decimal_text)."""
    sign = f"CASE WHEN {column} < 0 THEN '-' ELSE '' END"
    cases = []
    for d in sorted(set(MINOR_DIGITS.values()) | {2}):
        codes = ", ".join(f"'{c}'" for c, n in MINOR_DIGITS.items() if n == d)
        text = (
            f"CAST({column} AS TEXT)"
            if d == 0
            else f"printf('%s%d.%0{d}d', {sign}, abs({column}) / {10**d}, abs({column}) % {10**d})"
        )
        cases.append((codes, text))
    whens = " ".join(f"WHEN {currency} IN ({codes}) THEN {text}" for codes, text in cases if codes)
    default = next(text for codes, text in cases if not codes)
    return f"CASE {whens} ELSE {default} END"


def _safe(column: str) -> str:
    """SQL for a free-text cell a spreadsheet must not run as a formula: one starting with
    = + - @ tab or CR gets a leading apostrophe (`csv_dialect.restore` takes it off again)."""
    return (
        f"CASE WHEN substr({column}, 1, 1) IN ('=', '+', '-', '@', char(9), char(13)) "
        f"THEN char(39) || {column} ELSE {column} END"
    )


_RENTAL_EXPORT = (
    "SELECT 'rental', "
    + ", ".join(
        _safe(c)
        for c in (
            "coalesce(r.ref, :prefix || '-r' || r.id)",
            "p.name",
            "r.host_alias",
            "r.gpu_model",
        )
    )
    + ", r.gpu_count, r.billing_mode, r.rate, "
    "CASE r.billing_mode WHEN 'weekly' THEN 'week' WHEN 'monthly' THEN 'month' ELSE 'hour' END, "
    "r.granularity, r.currency, r.started_at, coalesce(r.planned_end, ''), "
    f"coalesce(r.ended_at, ''), {{hours}}, {{amount}}, {_safe('r.tag')}, r.outcome, "
    f"{_safe('r.notes')}, {_safe('r.end_reason')}, r.id "
    "FROM rentals r JOIN platforms p ON p.id = r.platform_id WHERE r.ended_at IS {cond} NULL "
    "ORDER BY r.id"
)


CHARGE_REF = "coalesce(c.ref, :prefix || '-c' || c.id)"


def _rows(ledger: SpendLedger) -> Iterator[Sequence[Any]]:
    """Export rows formatted by SQLite and fetched in batches: no Python object per row,
    except for running meters, whose cost so far is computed now."""
    db = ledger.store.db
    prefix = {"prefix": store_ref_prefix(ledger)}
    ended = _RENTAL_EXPORT.format(
        hours="printf('%.4f', r.span_s / 3600.0)",
        amount=_amount_sql("r.cost_minor", "r.currency"),
        cond="NOT",
    )
    cur = db.execute(ended, prefix)
    while batch := cur.fetchmany(BATCH):
        yield from (row[:-1] for row in batch)
    now = ledger.now()
    for row in db.execute(_RENTAL_EXPORT.format(hours="''", amount="''", cond=""), prefix):
        cost = ledger.rental(row[-1]).cost_at(now)
        yield (*row[:15], decimal_text(cost, row[10]), *row[16:-1])
    cur = db.execute(
        f"SELECT c.kind, {_safe(CHARGE_REF)}, {_safe('p.name')}, '', '', '', '', '', '', '', "
        f"c.currency, c.at, '', '', '', {_amount_sql('c.amount_minor', 'c.currency')}, '', '', "
        f"{_safe('c.description')}, '' FROM charges c JOIN platforms p ON p.id = c.platform_id "
        "ORDER BY c.id",
        prefix,
    )
    while batch := cur.fetchmany(BATCH):
        yield from batch


def export_csv(ledger: SpendLedger, out: IO[str]) -> int:
    """Write every rental and charge; returns the number of data rows. A text cell that a
    spreadsheet would run as a formula is written with a leading apostrophe (`_safe`)."""
    writer = csv.writer(out, lineterminator="\r\n")  # RFC 4180; also quotes a cell with a CR
    writer.writerow(COLUMNS)
    count = 0
    batch: list[Sequence[Any]] = []
    for row in _rows(ledger):
        batch.append(row)
        if len(batch) >= BATCH:
            writer.writerows(batch)
            count += len(batch)
            batch.clear()
    writer.writerows(batch)
    return count + len(batch)
