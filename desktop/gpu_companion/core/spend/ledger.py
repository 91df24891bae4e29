"""The spend ledger: rentals and charges in the store, each change one transaction.

Nothing here keeps a running total: a rental's cost is always recomputed from its timestamps
(`metering`), so the ledger is right after a restart, a sleep or a crash.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, tzinfo
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common.clock import Clock, SystemClock, from_iso, local_offset, to_iso
from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.common.listeners import Listeners
from gpu_companion.core.common.money import check_currency, parse_decimal, to_minor
from gpu_companion.core.hosts.registry import GRANULARITIES
from gpu_companion.core.spend import rollup
from gpu_companion.core.spend.metering import (
    BILLING_MODES,
    CHARGE_KINDS,
    OUTCOMES,
    Charge,
    Rental,
)
from gpu_companion.core.storage.store import Store

if TYPE_CHECKING:
    import sqlite_utils

# A rental shows its host's alias of now (the one stored at its start once the host is deleted):
# the tray, alerts and reports name a renamed host by its new name.
RENTAL_COLUMNS = (
    "r.id, r.platform_id, r.host_id, COALESCE(h.alias, r.host_alias), r.gpu_model, r.gpu_count, "
    "r.billing_mode, "
    "r.rate, r.currency, r.granularity, r.started_at, r.planned_end, r.ended_at, r.cost_minor, "
    "r.tag, r.outcome, r.notes, r.end_reason, r.evidence, r.ref, p.name"
)
RENTAL_FROM = (
    "rentals r JOIN platforms p ON p.id = r.platform_id LEFT JOIN hosts h ON h.id = r.host_id"
)

# The sorted non-empty values of one rentals column, one index seek each (a loose index scan).
DISTINCT_SQL = (
    "WITH RECURSIVE v(x) AS (SELECT MIN({column}) FROM rentals WHERE {column} > '' "
    "UNION ALL SELECT (SELECT MIN({column}) FROM rentals WHERE {column} > v.x) FROM v "
    "WHERE v.x IS NOT NULL) SELECT x FROM v WHERE x IS NOT NULL"
)


def rental_from_row(r: Sequence[Any]) -> Rental:
    return Rental(
        id=r[0],
        platform_id=r[1],
        host_id=r[2],
        host_alias=r[3] or "",
        gpu_model=r[4] or "",
        gpu_count=r[5] if r[5] is not None else 1,
        billing_mode=r[6],
        rate=Decimal(r[7]),
        currency=r[8],
        granularity=r[9],
        started_at=from_iso(r[10]),
        planned_end=from_iso(r[11]) if r[11] else None,
        ended_at=from_iso(r[12]) if r[12] else None,
        cost_minor=r[13],
        tag=r[14] or "",
        outcome=r[15] or "",
        notes=r[16] or "",
        end_reason=r[17] or "",
        evidence=json.loads(r[18]) if r[18] and r[18] != "{}" else {},
        ref=r[19] or "",
        platform_name=r[20],
    )


def rental_row(r: Rental) -> dict[str, Any]:
    """The stored form of a rental (without its id)."""
    return {
        "platform_id": r.platform_id,
        "host_id": r.host_id,
        "host_alias": r.host_alias,
        "gpu_model": r.gpu_model,
        "gpu_count": r.gpu_count,
        "billing_mode": r.billing_mode,
        "rate": str(r.rate),
        "currency": r.currency,
        "granularity": r.granularity,
        "started_at": to_iso(r.started_at),
        "planned_end": to_iso(r.planned_end) if r.planned_end else None,
        "ended_at": to_iso(r.ended_at) if r.ended_at else None,
        "span_s": _span(r.started_at, r.ended_at) if r.ended_at else None,
        "cost_minor": r.cost_minor,
        "tag": r.tag,
        "outcome": r.outcome,
        "notes": r.notes,
        "end_reason": r.end_reason,
        "evidence": json.dumps(r.evidence, sort_keys=True) if r.evidence else "{}",
        "ref": r.ref or None,
    }


def charge_row(c: Charge) -> dict[str, Any]:
    return {
        "platform_id": c.platform_id,
        "rental_id": c.rental_id,
        "kind": c.kind,
        "amount_minor": c.amount_minor,
        "currency": c.currency,
        "at": to_iso(c.at),
        "description": c.description,
        "ref": c.ref or None,
    }


def insert_rows(db: sqlite_utils.Database, table: str, rows: list[dict[str, Any]]) -> None:
    """Many rows of the same shape in one statement (inside the caller's transaction)."""
    if not rows:
        return
    cols = list(rows[0])
    db.conn.executemany(
        f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
        [[r[c] for c in cols] for r in rows],
    )


def _span(start: datetime, end: datetime) -> int:
    """Seconds between two instants as stored (whole seconds: `to_iso`), so that the span the
    rollup and the reports spread a cost over is the stored rental's."""
    return int((end.replace(microsecond=0) - start.replace(microsecond=0)).total_seconds())


def _keep_rollup(db: sqlite_utils.Database) -> None:
    """Re-derive the hours of the rollup this write made stale, in its transaction (a few
    milliseconds; the reports then stay on their quick path). Left alone when much is stale
    (an import not yet caught up): `rollup.catch_up` does that off the GUI thread."""
    rollup.refresh(db, limit_hours=rollup.INLINE_HOURS, collapse=False)


@dataclass(frozen=True)
class HistoryFilter:
    """What the Spend page and the CLI filter the history by (all optional)."""

    since: datetime | None = None
    until: datetime | None = None
    platform_id: int | None = None
    gpu_model: str = ""
    tag: str = ""


def validate_rental(r: Rental) -> Rental:
    """Checks a rental before it is stored; ValidationError names the field."""
    if r.billing_mode not in BILLING_MODES:
        raise ValidationError(
            "billing_mode",
            _("Billing mode must be one of: {modes}.").format(modes=", ".join(BILLING_MODES)),
        )
    if r.granularity not in GRANULARITIES:
        raise ValidationError(
            "granularity",
            _("Billing granularity must be one of: {steps}.").format(
                steps=", ".join(GRANULARITIES)
            ),
        )
    try:
        currency = check_currency(r.currency)
    except ValueError as exc:
        raise ValidationError("currency", f"{str(exc).capitalize()}.") from None
    if r.rate < 0:
        raise ValidationError("rate", _("The rate cannot be negative."))
    if not 0 <= r.gpu_count <= 64:
        raise ValidationError("gpu_count", _("The GPU count must be between 0 and 64."))
    if r.ended_at is not None and r.ended_at < r.started_at:
        raise ValidationError("ended_at", _("A rental cannot end before it starts."))
    if r.planned_end is not None and r.planned_end <= r.started_at:
        raise ValidationError("planned_end", _("The planned end must be after the start."))
    if r.outcome not in OUTCOMES:
        raise ValidationError("outcome", _("The outcome is 'success', 'failure' or empty."))
    tag, gpu_model = r.tag.strip(), r.gpu_model.strip()
    if (currency, tag, gpu_model) == (r.currency, r.tag, r.gpu_model):
        return r  # already clean (an import checks a million of them)
    return replace(r, currency=currency, tag=tag, gpu_model=gpu_model)


class SpendLedger:
    """Rentals and charges; every write validates first and is one transaction."""

    def __init__(self, store: Store, clock: Clock | None = None, tz: tzinfo | None = None) -> None:
        self.store = store
        self.clock: Clock = clock or SystemClock()
        self.tz = tz or local_offset()
        # a rental started, ended, changed or deleted: what is watched, alerted and shown in the
        # tray follows it (listeners run on the writing thread: they only enqueue)
        self.on_rentals_changed: Listeners[None] = Listeners("rentals changed")

    def now(self) -> datetime:
        return self.clock.now()

    # --- rentals --------------------------------------------------------------------------
    def start_rental(
        self,
        platform_id: int,
        rate: Decimal | str | int,
        *,
        host_id: int | None = None,
        gpu_model: str = "",
        gpu_count: int = 1,
        billing_mode: str = "on-demand",
        currency: str | None = None,
        granularity: str | None = None,
        started_at: datetime | None = None,
        planned_end: datetime | None = None,
        max_runtime: timedelta | None = None,
        tag: str = "",
        notes: str = "",
    ) -> Rental:
        """Start a meter. Currency and granularity default to the platform's; the host's alias
        is kept so the history reads well after the host is gone."""
        platform = self.store.db.execute(
            "SELECT currency, billing_granularity FROM platforms WHERE id = ?", [platform_id]
        ).fetchone()
        if platform is None:
            raise ValidationError("platform", _("The chosen platform no longer exists."))
        alias = ""
        if host_id is not None:
            row = self.store.db.execute(
                "SELECT alias FROM hosts WHERE id = ?", [host_id]
            ).fetchone()
            if row is None:
                raise ValidationError("host", _("The chosen host no longer exists."))
            alias = row[0]
            if self.running_for_host(host_id) is not None:
                raise ValidationError(
                    "host", _("A rental on {host} is already being metered.").format(host=alias)
                )
        try:
            value = parse_decimal(rate, N_("the rate"))
        except ValueError as exc:
            raise ValidationError("rate", f"{str(exc).capitalize()}.") from None
        start = started_at or self.now()
        if max_runtime is not None:
            planned_end = start + max_runtime
        rental = validate_rental(
            Rental(
                platform_id=platform_id,
                rate=value,
                currency=currency or platform[0],
                granularity=granularity or platform[1],
                started_at=start.replace(microsecond=0),
                billing_mode=billing_mode,
                host_id=host_id,
                host_alias=alias,
                gpu_model=gpu_model,
                gpu_count=gpu_count,
                planned_end=planned_end,
                tag=tag,
                notes=notes,
            )
        )
        return self.add_rental(rental)

    def add_rental(self, rental: Rental) -> Rental:
        """Store a rental as given (a past one, an imported one), validated, in one transaction."""
        r = validate_rental(rental)
        with self.store.transaction() as db:
            rowid = db.table("rentals").insert(rental_row(r)).last_rowid
            _keep_rollup(db)
        assert rowid is not None
        self.on_rentals_changed.emit(None)
        return self.rental(int(rowid))

    def end_rental(
        self,
        rental_id: int,
        *,
        at: datetime | None = None,
        reason: str = "stopped",
        evidence: dict[str, Any] | None = None,
    ) -> Rental:
        """Stop the meter: the final cost is fixed from the timestamps; `evidence` (release
        checks, an override and its reason) is kept with the rental."""
        r = self.rental(rental_id)
        if not r.running:
            raise UserError(
                _("The rental on {rental} has already ended.").format(
                    rental=r.host_alias or r.platform_name
                )
            )
        end = (at or self.now()).replace(microsecond=0)
        if end < r.started_at:
            raise ValidationError("ended_at", _("A rental cannot end before it starts."))
        ended = replace(r, ended_at=end, end_reason=reason, evidence=evidence or {})
        ended = replace(ended, cost_minor=ended.cost_at(end))
        with self.store.transaction() as db:
            # the WHERE keeps a second, racing stop from overwriting the first one
            cur = db.execute(
                "UPDATE rentals SET ended_at = ?, span_s = ?, cost_minor = ?, end_reason = ?, "
                "evidence = ? WHERE id = ? AND ended_at IS NULL",
                [
                    to_iso(end),
                    int((end - r.started_at).total_seconds()),
                    ended.cost_minor,
                    reason,
                    json.dumps(ended.evidence, sort_keys=True),
                    rental_id,
                ],
            )
            if cur.rowcount != 1:
                raise UserError(_("The rental was ended elsewhere in the meantime."))
            _keep_rollup(db)
        self.on_rentals_changed.emit(None)
        return self.rental(rental_id)

    def end_for_host(
        self, host_id: int, *, reason: str = "released", evidence: dict[str, Any] | None = None
    ) -> Rental | None:
        """Stop the meter of the host's running rental, if any (the release gate's call)."""
        r = self.running_for_host(host_id)
        if r is None or r.id is None:
            return None
        return self.end_rental(r.id, reason=reason, evidence=evidence)

    def update_rental(self, rental_id: int, **changes: Any) -> Rental:
        """Change the editable fields: tag, outcome, notes, planned_end, gpu_model, gpu_count."""
        allowed = {"tag", "outcome", "notes", "planned_end", "gpu_model", "gpu_count"}
        unknown = set(changes) - allowed
        if unknown:
            raise ValueError(f"not editable: {', '.join(sorted(unknown))}")
        updated = validate_rental(replace(self.rental(rental_id), **changes))
        row = rental_row(updated)
        with self.store.transaction() as db:
            db.table("rentals").update(rental_id, {k: row[k] for k in changes})
        self.on_rentals_changed.emit(None)  # the tray's line names the GPU and the planned end
        return self.rental(rental_id)

    def delete_rental(self, rental_id: int) -> None:
        with self.store.transaction() as db:
            db.execute("DELETE FROM alert_prefs WHERE rental_id = ?", [rental_id])
            db.execute("UPDATE charges SET rental_id = NULL WHERE rental_id = ?", [rental_id])
            db.execute("DELETE FROM rentals WHERE id = ?", [rental_id])
            _keep_rollup(db)
        self.on_rentals_changed.emit(None)

    def rental(self, rental_id: int) -> Rental:
        row = self.store.db.execute(
            f"SELECT {RENTAL_COLUMNS} FROM {RENTAL_FROM} WHERE r.id = ?", [rental_id]
        ).fetchone()
        if row is None:
            raise UserError(_("That rental is no longer in the ledger."))
        return rental_from_row(row)

    def running(self) -> list[Rental]:
        rows = self.store.db.execute(
            f"SELECT {RENTAL_COLUMNS} FROM {RENTAL_FROM} WHERE r.ended_at IS NULL "
            "ORDER BY r.started_at"
        ).fetchall()
        return [rental_from_row(r) for r in rows]

    def running_for_host(self, host_id: int) -> Rental | None:
        row = self.store.db.execute(  # one row: pages ask this for each of 100 hosts
            f"SELECT {RENTAL_COLUMNS} FROM {RENTAL_FROM} WHERE r.ended_at IS NULL "
            "AND r.host_id = ? ORDER BY r.started_at LIMIT 1",
            [host_id],
        ).fetchone()
        return rental_from_row(row) if row else None

    def running_for_alias(self, alias: str) -> Rental | None:
        """The running rental of the host called `alias` now, found by the host's id (a rental
        started before a rename still belongs to the renamed host)."""
        row = self.store.db.execute("SELECT id FROM hosts WHERE alias = ?", [alias]).fetchone()
        return self.running_for_host(int(row[0])) if row else None

    def has_running(self) -> bool:
        row = self.store.db.execute("SELECT 1 FROM rentals WHERE ended_at IS NULL LIMIT 1")
        return row.fetchone() is not None

    def history(self, filt: HistoryFilter | None = None, limit: int | None = None) -> list[Rental]:
        """Rentals overlapping the filter's window, newest first."""
        f = filt or HistoryFilter()
        where, args = ["1"], []
        if f.until is not None:
            where.append("r.started_at < ?")
            args.append(to_iso(f.until))
        if f.since is not None:
            where.append("(r.ended_at IS NULL OR r.ended_at > ?)")
            args.append(to_iso(f.since))
        if f.platform_id is not None:
            where.append("r.platform_id = ?")
            args.append(str(f.platform_id))
        if f.gpu_model:
            where.append("r.gpu_model = ?")
            args.append(f.gpu_model)
        if f.tag:
            where.append("r.tag = ?")
            args.append(f.tag)
        sql = (
            f"SELECT {RENTAL_COLUMNS} FROM {RENTAL_FROM} WHERE {' AND '.join(where)} "
            "ORDER BY r.started_at DESC, r.id DESC"
        )
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [rental_from_row(r) for r in self.store.db.execute(sql, args).fetchall()]

    def distinct(self, column: str) -> list[str]:
        """The values the history filters and the chart offer (GPU models, tags, currencies),
        sorted: one index look-up per value (a loose index scan over the column's index), never a
        read of every rental."""
        if column not in ("gpu_model", "tag", "currency"):
            raise ValueError(column)
        rows = self.store.db.execute(DISTINCT_SQL.format(column=column)).fetchall()
        return [r[0] for r in rows]

    # --- charges --------------------------------------------------------------------------
    def add_charge(
        self,
        platform_id: int,
        kind: str,
        amount: Decimal | str | int,
        *,
        currency: str | None = None,
        at: datetime | None = None,
        description: str = "",
        rental_id: int | None = None,
        ref: str = "",
    ) -> Charge:
        """Storage, traffic, a fixed fee, or a credit (stored negative whatever its sign)."""
        if kind not in CHARGE_KINDS:
            raise ValidationError(
                "kind", _("A charge is one of: {kinds}.").format(kinds=", ".join(CHARGE_KINDS))
            )
        row = self.store.db.execute(
            "SELECT currency FROM platforms WHERE id = ?", [platform_id]
        ).fetchone()
        if row is None:
            raise ValidationError("platform", _("The chosen platform no longer exists."))
        try:
            code = check_currency(currency or row[0])
            value = parse_decimal(amount)
        except ValueError as exc:
            raise ValidationError("amount", f"{str(exc).capitalize()}.") from None
        minor = to_minor(value, code)
        minor = -abs(minor) if kind == "credit" else minor
        if minor < 0 and kind != "credit":
            raise ValidationError("amount", _("Only a credit can be negative."))
        charge = Charge(
            platform_id,
            kind,
            minor,
            code,
            (at or self.now()).replace(microsecond=0),
            description.strip(),
            rental_id,
            ref,
        )
        try:
            with self.store.transaction() as db:
                rowid = db.table("charges").insert(charge_row(charge)).last_rowid
                _keep_rollup(db)
        except sqlite3.IntegrityError as exc:
            raise ValidationError(
                "ref", _("This charge is already in the ledger ({error}).").format(error=exc)
            ) from exc
        return replace(charge, id=rowid)

    def charges(self, since: datetime | None = None, until: datetime | None = None) -> list[Charge]:
        sql = (
            "SELECT c.id, c.platform_id, c.kind, c.amount_minor, c.currency, c.at, "
            "c.description, c.rental_id, c.ref, p.name FROM charges c "
            "JOIN platforms p ON p.id = c.platform_id WHERE c.at >= ? AND c.at < ? ORDER BY c.at"
        )
        lo = to_iso(since) if since else ""
        hi = to_iso(until) if until else "9999"
        return [
            Charge(r[1], r[2], r[3], r[4], from_iso(r[5]), r[6] or "", r[7], r[8] or "", r[0], r[9])
            for r in self.store.db.execute(sql, [lo, hi]).fetchall()
        ]

    def delete_charge(self, charge_id: int) -> None:
        with self.store.transaction() as db:
            db.execute("DELETE FROM charges WHERE id = ?", [charge_id])
            _keep_rollup(db)
