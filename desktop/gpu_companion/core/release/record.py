"""The release record in the app's store: checklist settings, release commands, and the history
of releases and overrides with their evidence.

`StoreReleaseLedger` implements `RentalLedger`: the spend ledger's running rental gives the start
(the host's creation time when nothing is metered) and its meter ends, evidence attached. Rows
are joined by host id, so a renamed host keeps its settings, its meter and its history.
"""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.providers.custom import CustomCommands
from gpu_companion.core.providers.model import Instance
from gpu_companion.core.release.config import ChecklistConfig
from gpu_companion.core.release.context import ReleaseRecord
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.metering import Rental
from gpu_companion.core.storage.store import Store


def _host_id(store: Store, alias: str) -> int | None:
    """The id of the host called `alias` now (None: no such host)."""
    row = store.db.execute("SELECT id FROM hosts WHERE alias = ?", [alias]).fetchone()
    return int(row[0]) if row else None


class ChecklistSettings:
    """Per-host checklist configs and per-platform release command templates."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def config(self, alias: str) -> ChecklistConfig:
        row = self.store.db.execute(
            "SELECT config FROM release_configs WHERE host_id = ?", [_host_id(self.store, alias)]
        ).fetchone()
        return ChecklistConfig.from_json(row[0]) if row else ChecklistConfig()

    def save_config(self, alias: str, config: ChecklistConfig) -> ChecklistConfig:
        cfg = config.validated()
        host_id = _host_id(self.store, alias)
        if host_id is None:
            raise UserError(
                _("There is no host called {alias}.").format(alias=repr(alias)),
                hint=_("Add it on the Hosts page."),
            )
        with self.store.transaction() as db:
            db.execute(
                "INSERT INTO release_configs (host_id, config) VALUES (?, ?) "
                "ON CONFLICT(host_id) DO UPDATE SET config = excluded.config",
                [host_id, cfg.to_json()],
            )
        return cfg

    # --- what the user confirmed by hand ----------------------------------------------------
    def _confirmed_key(self, alias: str) -> str | None:
        """One rental's confirmations: a new rental of the same host starts unconfirmed."""
        host_id = _host_id(self.store, alias)
        if host_id is None:
            return None
        row = self.store.db.execute(
            "SELECT id FROM rentals WHERE host_id = ? AND ended_at IS NULL ORDER BY id DESC",
            [host_id],
        ).fetchone()
        return f"release.confirmed.{host_id}.{row[0] if row else 'none'}"

    def confirmations(self, alias: str) -> dict[str, str]:
        """The manual items the user confirmed for the host's running rental: label -> note.
        Kept in the store, so the unattended checklist (another thread, maybe another
        process) counts what was confirmed in the window."""
        key = self._confirmed_key(alias)
        raw = self.store.get_setting(key) if key else None
        try:
            data = json.loads(raw) if raw else {}
        except ValueError:
            return {}
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}

    def confirm(self, alias: str, label: str, note: str | None) -> None:
        """Record (a note, possibly "") or withdraw (None) the confirmation of `label`."""
        key = self._confirmed_key(alias)
        if key is None:
            raise UserError(_("There is no host called {alias}.").format(alias=repr(alias)))
        done = self.confirmations(alias)
        if note is None:
            done.pop(label, None)
        else:
            done[label] = note.strip()
        self.store.set_setting(key, json.dumps(done, sort_keys=True))

    def commands(self, platform_id: int | None) -> CustomCommands:
        if platform_id is None:
            return CustomCommands()
        row = self.store.db.execute(
            "SELECT command, verify, gone_when, running_when FROM release_commands "
            "WHERE platform_id = ?",
            [platform_id],
        ).fetchone()
        return CustomCommands(*(str(v or "") for v in row)) if row else CustomCommands()

    def save_commands(self, platform_id: int, commands: CustomCommands) -> CustomCommands:
        c = commands.validated()
        with self.store.transaction() as db:
            db.table("release_commands").upsert(
                {
                    "platform_id": platform_id,
                    "command": c.release,
                    "verify": c.verify,
                    "gone_when": c.gone_when,
                    "running_when": c.running_when,
                },
                pk="platform_id",
            )
        return c


class StoreReleaseLedger:
    """`RentalLedger` over the spend ledger (meter) and the store (release history)."""

    def __init__(self, store: Store, spend: SpendLedger) -> None:
        self.store = store
        self.spend = spend

    def _id(self, host: Host) -> int | None:
        return host.id if host.id is not None else _host_id(self.store, host.alias)

    def _running(self, host: Host) -> Rental | None:
        host_id = self._id(host)
        return None if host_id is None else self.spend.running_for_host(host_id)

    def rental_started_at(self, host: Host) -> datetime | None:
        rental = self._running(host)
        if rental is not None:
            return rental.started_at
        row = self.store.db.execute(
            "SELECT created_at FROM hosts WHERE id = ?", [self._id(host)]
        ).fetchone()
        return datetime.fromisoformat(row[0]) if row and row[0] else None

    def end_meter(self, host: Host, record: ReleaseRecord) -> None:
        rental = self._running(host)
        if rental is None or rental.id is None:
            return  # nothing metered for this host
        evidence = {
            "checks": list(record.evidence),
            "failing": list(record.failing_items),
            "override_reason": record.reason if record.kind == "override" else "",
        }
        self.spend.end_rental(rental.id, at=record.at, reason=record.kind, evidence=evidence)

    def start_stopped(self, host: Host, at: datetime, instance: Instance | None) -> None:
        """The disk of a stopped instance bills on: a "stopped" rental at the provider's storage
        rate (or the platform's, as the user entered it; 0 and said so when neither is known)."""
        host_id = self._id(host)
        if host_id is None or host.platform_id is None or self._running(host) is not None:
            return
        rate = instance.storage_hourly if instance is not None else None
        note = "storage while stopped"
        if rate is None:
            row = self.store.db.execute(
                "SELECT storage_rate FROM platforms WHERE id = ?", [host.platform_id]
            ).fetchone()
            rate = Decimal(row[0]) if row and row[0] else None
        if rate is None:
            rate, note = Decimal(0), "storage while stopped: the provider gave no rate"
        self.spend.start_rental(
            host.platform_id,
            rate,
            host_id=host_id,
            gpu_model=host.gpu_model,
            gpu_count=max(host.gpu_count, 1),
            billing_mode="stopped",
            started_at=at,
            notes=note,
        )

    def meter_ends(self, alias: str) -> list[datetime]:
        """When each of the host's rentals was ended by a release or an override."""
        rows = self.store.db.execute(
            "SELECT ended_at FROM rentals WHERE host_id = ? AND end_reason IN "
            "('release', 'override') ORDER BY id",
            [_host_id(self.store, alias)],
        ).fetchall()
        return [datetime.fromisoformat(r[0]) for r in rows]

    def record_release(self, record: ReleaseRecord) -> int:
        row = {
            "host_id": _host_id(self.store, record.host_alias),
            "host_alias": record.host_alias,
            "kind": record.kind,
            "at": record.at.isoformat(timespec="seconds"),
            "reason": record.reason,
            "failing_items": json.dumps(list(record.failing_items)),
            "evidence": json.dumps(list(record.evidence)),
            "release_command": json.dumps(list(record.release_command)),
            "command_output": record.command_output,
        }
        with self.store.transaction() as db:
            rowid = db.table("release_records").insert(row).last_rowid
        assert rowid is not None
        return int(rowid)

    def history(self, host_alias: str) -> list[ReleaseRecord]:
        rows = self.store.db.execute(
            "SELECT id, host_alias, kind, at, reason, failing_items, evidence, release_command, "
            "command_output FROM release_records WHERE host_id = ? ORDER BY id DESC",
            [_host_id(self.store, host_alias)],
        ).fetchall()
        return [
            ReleaseRecord(
                id=r[0],
                host_alias=r[1],
                kind=r[2],
                at=datetime.fromisoformat(r[3]),
                reason=r[4] or "",
                failing_items=tuple(json.loads(r[5] or "[]")),
                evidence=tuple(json.loads(r[6] or "[]")),
                release_command=tuple(json.loads(r[7] or "[]")),
                command_output=r[8] or "",
            )
            for r in rows
        ]
