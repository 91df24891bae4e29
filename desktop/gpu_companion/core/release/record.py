"""The release record in the app's store: checklist settings, release commands, and the history
of releases and overrides with their evidence.

`StoreReleaseLedger` implements `RentalLedger`: the spend ledger's running rental gives the start
(the host's creation time when nothing is metered) and its meter ends, evidence attached.
"""

from __future__ import annotations

import json
from datetime import datetime

from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.release.config import ChecklistConfig
from gpu_companion.core.release.context import ReleaseRecord
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.storage.store import Store


class ChecklistSettings:
    """Per-host checklist configs and per-platform release command templates."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def config(self, alias: str) -> ChecklistConfig:
        row = self.store.db.execute(
            "SELECT config FROM release_configs WHERE host_alias = ?", [alias]
        ).fetchone()
        return ChecklistConfig.from_json(row[0]) if row else ChecklistConfig()

    def save_config(self, alias: str, config: ChecklistConfig) -> ChecklistConfig:
        cfg = config.validated()
        with self.store.transaction() as db:
            db.table("release_configs").upsert(
                {"host_alias": alias, "config": cfg.to_json()}, pk="host_alias"
            )
        return cfg

    def release_command(self, platform_id: int | None) -> str:
        if platform_id is None:
            return ""
        row = self.store.db.execute(
            "SELECT command FROM release_commands WHERE platform_id = ?", [platform_id]
        ).fetchone()
        return str(row[0]) if row else ""

    def save_release_command(self, platform_id: int, command: str) -> None:
        from gpu_companion.core.release.gate import release_argv  # validates the template

        if command.strip():
            release_argv(command, Host(alias="check", hostname="example.org", instance_id="12345"))
        with self.store.transaction() as db:
            db.table("release_commands").upsert(
                {"platform_id": platform_id, "command": command.strip()}, pk="platform_id"
            )


class StoreReleaseLedger:
    """`RentalLedger` over the spend ledger (meter) and the store (release history)."""

    def __init__(self, store: Store, spend: SpendLedger) -> None:
        self.store = store
        self.spend = spend

    def rental_started_at(self, host: Host) -> datetime | None:
        rental = self.spend.running_for_alias(host.alias)
        if rental is not None:
            return rental.started_at
        row = self.store.db.execute(
            "SELECT created_at FROM hosts WHERE alias = ?", [host.alias]
        ).fetchone()
        return datetime.fromisoformat(row[0]) if row and row[0] else None

    def end_meter(self, host: Host, record: ReleaseRecord) -> None:
        rental = self.spend.running_for_alias(host.alias)
        if rental is None or rental.id is None:
            return  # nothing metered for this host
        evidence = {
            "checks": list(record.evidence),
            "failing": list(record.failing_items),
            "override_reason": record.reason if record.kind == "override" else "",
        }
        self.spend.end_rental(rental.id, at=record.at, reason=record.kind, evidence=evidence)

    def meter_ends(self, alias: str) -> list[datetime]:
        """When each of the host's rentals was ended by a release or an override."""
        rows = self.store.db.execute(
            "SELECT ended_at FROM rentals WHERE host_alias = ? AND end_reason IN "
            "('release', 'override') ORDER BY id",
            [alias],
        ).fetchall()
        return [datetime.fromisoformat(r[0]) for r in rows]

    def record_release(self, record: ReleaseRecord) -> int:
        row = {
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
            "command_output FROM release_records WHERE host_alias = ? ORDER BY id DESC",
            [host_alias],
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
