"""The release journal: the intent to destroy or stop an instance is written before the provider
is asked, each step after it, and the outcome once the instance was read back. An entry left
open by a process that died (`kill -9`, a power cut) is resolved by the next start."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from gpu_companion.core.common.owner import owner_alive, this_owner
from gpu_companion.core.storage.store import Store

__all__ = ["JournalEntry", "ReleaseJournal", "owner_alive", "this_owner"]


@dataclass(frozen=True)
class JournalEntry:
    id: int
    host_id: int | None
    host_alias: str
    platform_id: int | None
    provider: str
    instance_id: str
    action: str  # destroy | stop
    kind: str  # release | override | auto
    step: str  # intent | requested | confirmed
    started_at: datetime
    owner: str
    said: str
    record: dict[str, Any]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class ReleaseJournal:
    def __init__(self, store: Store) -> None:
        self.store = store

    def open(
        self,
        *,
        host_id: int | None,
        host_alias: str,
        platform_id: int | None,
        provider: str,
        instance_id: str,
        action: str,
        kind: str,
        at: datetime,
        record: dict[str, Any],
    ) -> int:
        row = {
            "host_id": host_id,
            "host_alias": host_alias,
            "platform_id": platform_id,
            "provider": provider,
            "instance_id": instance_id,
            "action": action,
            "kind": kind,
            "step": "intent",
            "started_at": at.isoformat(timespec="seconds"),
            "owner": this_owner(),
            "record": json.dumps(record, sort_keys=True, default=str),
        }
        with self.store.transaction() as db:
            rowid = db.table("release_journal").insert(row).last_rowid
        assert rowid is not None
        return int(rowid)

    def step(self, entry_id: int, step: str, said: str = "") -> None:
        with self.store.transaction() as db:
            db.execute(
                "UPDATE release_journal SET step = ?, said = ? WHERE id = ?",
                [step, said[-2000:], entry_id],
            )

    def resolve(self, entry_id: int, outcome: str, said: str = "") -> None:
        with self.store.transaction() as db:
            db.execute(
                "UPDATE release_journal SET resolved_at = ?, outcome = ?, "
                "said = CASE WHEN ? = '' THEN said ELSE ? END WHERE id = ?",
                [_now(), outcome, said, said[-2000:], entry_id],
            )

    def adopt(self, entry_id: int) -> bool:
        """Take over an entry whose owner died; False when another process took it first."""
        with self.store.transaction() as db:
            row = db.execute(
                "SELECT owner FROM release_journal WHERE id = ? AND resolved_at IS NULL",
                [entry_id],
            ).fetchone()
            if row is None or owner_alive(row[0]):
                return False
            db.execute(
                "UPDATE release_journal SET owner = ? WHERE id = ?", [this_owner(), entry_id]
            )
        return True

    def open_entries(self) -> list[JournalEntry]:
        rows = self.store.db.execute(
            "SELECT id, host_id, host_alias, platform_id, provider, instance_id, action, kind, "
            "step, started_at, owner, said, record FROM release_journal "
            "WHERE resolved_at IS NULL ORDER BY id"
        ).fetchall()
        return [
            JournalEntry(
                r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8],
                datetime.fromisoformat(r[9]), r[10], r[11] or "", json.loads(r[12] or "{}"),
            )  # fmt: skip
            for r in rows
        ]

    def orphaned(self) -> list[JournalEntry]:
        """Open entries whose process is gone: the ones the next start resolves."""
        return [e for e in self.open_entries() if not owner_alive(e.owner)]

    def outcome(self, entry_id: int) -> tuple[str, str]:
        row = self.store.db.execute(
            "SELECT outcome, said FROM release_journal WHERE id = ?", [entry_id]
        ).fetchone()
        return (row[0] or "", row[1] or "") if row else ("", "")
