"""How a ledger CSV from the real world is written: its delimiter, its decimal separator, and the
provider's own column names, each detected so the import preview can say what it understood.

Also the inverse of the export's spreadsheet rule (a cell a spreadsheet would run as a formula is
written with a leading apostrophe).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from gpu_companion.core.common.i18n import N_, _

DELIMITERS = {",": N_("commas"), ";": N_("semicolons"), "\t": N_("tabs")}
# A provider bill's own names for the ledger's columns, after `normalise_header`.
ALIASES: dict[str, tuple[str, ...]] = {
    "type": ("kind", "record_type", "line_type"),
    "ref": ("id", "reference", "line_id", "invoice_line", "transaction_id", "charge_id"),
    "platform": ("provider", "cloud", "vendor", "service"),
    "host": ("instance", "instance_name", "machine", "hostname", "host_alias", "pod", "pod_name"),
    "gpu_model": ("gpu", "gpu_type", "gpu_name", "card", "accelerator"),
    "gpu_count": ("gpus", "num_gpus", "n_gpus", "gpu_num", "number_of_gpus", "gpu_qty"),
    "billing_mode": ("billing", "pricing", "pricing_model", "billing_type"),
    "rate": ("price", "hourly_rate", "price_per_hour", "rate_per_hour", "cost_per_hour",
             "hourly_price", "usd_per_hour", "per_hour", "price_h", "price_hr", "rate_h",
             "rate_hr", "usd_h", "usd_hr", "hourly", "dph", "dph_total"),
    "currency": ("cur", "currency_code"),
    "started_at": ("start", "started", "start_time", "start_date", "begin", "from",
                   "start_at", "starttime", "created", "created_at"),
    "ended_at": ("end", "ended", "end_time", "end_date", "stop", "stopped", "stop_time",
                 "to", "finish", "finished", "end_at", "endtime", "terminated_at"),
    "hours": ("duration_h", "duration_hours", "usage_hours", "runtime_h", "hours_used"),
    "amount": ("cost", "total", "total_cost", "charge", "charged", "amount_due", "subtotal"),
    "notes": ("description", "note", "comment", "details"),
}  # fmt: skip
_NUMERIC = ("amount", "rate", "hours")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def normalise_header(name: str) -> str:
    """'Start Time (UTC)' -> 'start_time': case, units in brackets and punctuation dropped."""
    text = re.sub(r"\(.*?\)|\[.*?\]", "", name.strip().lstrip("\ufeff").lower())
    return re.sub(r"[^a-z0-9]+", "_", text).strip("_")


def detect_delimiter(header_line: str) -> str:
    """The candidate that splits the header line into the most fields (outside quotes)."""
    unquoted = re.sub(r'"[^"]*"', "", header_line)
    counts = {d: unquoted.count(d) for d in DELIMITERS}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


@dataclass
class ColumnMap:
    """Each source column's ledger name ('' when ignored), and what was renamed or ignored."""

    names: list[str]
    renamed: dict[str, str] = field(default_factory=dict)  # source header -> ledger column
    ignored: list[str] = field(default_factory=list)


def map_columns(header: Sequence[str], known: Iterable[str]) -> ColumnMap:
    """Ledger names first, then the provider names in ALIASES; a ledger column is taken once."""
    known = tuple(known)
    keys = [normalise_header(h) for h in header]
    names = [""] * len(header)
    taken: set[str] = set()
    for i, key in enumerate(keys):  # exact names win over aliases anywhere in the header
        if key in known and key not in taken:
            names[i] = key
            taken.add(key)
    result = ColumnMap(names)
    for i, key in enumerate(keys):
        if names[i]:
            continue
        target = next((c for c, al in ALIASES.items() if key in al and c not in taken), "")
        if target:
            names[i] = target
            taken.add(target)
            result.renamed[header[i].strip()] = target
        elif header[i].strip():
            result.ignored.append(header[i].strip())
    return result


def detect_decimal(values: Iterable[str], delimiter: str) -> str:
    """',' or '.': the separator the file's numbers use for decimals.

    A number with both separators, or one separator not followed by exactly three digits, is
    evidence; the majority wins. With no evidence, a ';' or tab file is taken as written by a
    decimal-comma locale (that is why it is not comma-separated), any other as '.'."""
    votes = {",": 0, ".": 0}
    for raw in values:
        v = raw.strip().lstrip("+-")
        if "," in v and "." in v:
            votes["," if v.rfind(",") > v.rfind(".") else "."] += 1
            continue
        for sep in votes:
            if v.count(sep) == 1 and len(v.split(sep)[1]) != 3:
                votes[sep] += 1
    if votes[","] != votes["."]:
        return "," if votes[","] > votes["."] else "."
    return "," if delimiter in (";", "\t") else "."


def numeric_cells(rows: Iterable[Sequence[str]], names: Sequence[str]) -> Iterator[str]:
    """The cells of the amount, rate and hours columns (what `detect_decimal` reads)."""
    idx = [i for i, n in enumerate(names) if n in _NUMERIC]
    for row in rows:
        yield from (row[i] for i in idx if i < len(row) and row[i].strip())


def restore(cell: str) -> str:
    """Undo the export's apostrophe before a formula-like cell, so an export imports back
    unchanged."""
    if cell.startswith("'") and cell[1:].startswith(_FORMULA_START):
        return cell[1:]
    return cell


def describe(delimiter: str, decimal: str, columns: ColumnMap) -> str:
    """What the preview says it understood, in one paragraph."""
    parts = [
        _("Columns separated by {delimiter}").format(delimiter=_(DELIMITERS[delimiter])),
        _("decimal comma (0,39 is read as 0.39)") if decimal == "," else _("decimal point"),
    ]
    if columns.renamed:
        renamed = ", ".join(f"{s} → {t}" for s, t in columns.renamed.items())
        parts.append(_("read as the ledger's: {columns}").format(columns=renamed))
    if columns.ignored:
        parts.append(_("ignored: {columns}").format(columns=", ".join(columns.ignored)))
    return _("{parts}.").format(parts="; ".join(parts))
