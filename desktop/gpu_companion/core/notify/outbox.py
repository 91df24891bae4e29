"""The deliveries still to make, in the app's SQLite store: a restart keeps them, and two processes
on one data dir (a window and a `watch`) never send one twice.

`enqueue` writes one row per channel that should get the alert (after de-duplication). `claim`
takes, in one `BEGIN IMMEDIATE` transaction, the oldest pending row of each channel that has none
in flight and marks it `sending` with this process as owner: SQLite lets one writer in at a time,
so a row is claimed once. A channel sends in order; a failed row is retried after 30 s, 2 min,
10 min and 30 min (its channel waits behind it), then given up as `failed`. A row left `sending`
by a process that is gone (see `common.owner`) goes back to pending: it may arrive twice, never
not at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from gpu_companion.core.common.clock import from_iso, to_iso
from gpu_companion.core.common.owner import owner_alive, this_machine, this_owner
from gpu_companion.core.notify.model import Alert, Channel, ChannelStatus
from gpu_companion.core.storage.store import Store

# Waits before the 2nd, 3rd, 4th and 5th try; the 5th failure gives up (≈ 42 min in all).
# Not `common.backoff.Backoff`: its doubling (30 s, 60 s, 120 s, ...) would try twice as often
# in the first minutes and keep trying for longer than an alert stays useful.
RETRY_DELAYS_S: tuple[float, ...] = (30, 120, 600, 1800)
LEASE = timedelta(hours=1)  # a row `sending` this long by another computer is taken back
MAX_AGE = timedelta(hours=24)  # an alert not sent within a day is no longer news
KEEP = timedelta(days=30)  # sent and failed rows kept for the status counts


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def dedup_key(alert: Alert) -> str:
    """The alert's key; a keyless message is its own key (the same text is the same alert)."""
    return alert.key or f"text:{text_hash(alert.text)}"


@dataclass(frozen=True)
class OutboxItem:
    id: int
    channel_id: int
    alert: Alert
    attempts: int  # tries made before this one


_ITEM_COLUMNS = "id, channel_id, title, text, level, kind, alert_key, at, source, attempts"


def _item(r: Any) -> OutboxItem:
    alert = Alert(title=r[2], text=r[3], level=r[4], kind=r[5], key=r[6], at=from_iso(r[7]),
                  source=r[8])  # fmt: skip
    return OutboxItem(int(r[0]), int(r[1]), alert, int(r[9]))


class Outbox:
    def __init__(
        self,
        store: Store,
        *,
        retry_delays: Sequence[float] = RETRY_DELAYS_S,
        owner: str | None = None,
        machine: str | None = None,
    ) -> None:
        self.store = store
        self.retry_delays = tuple(retry_delays)
        self.owner = owner or this_owner()
        self.machine = machine or this_machine()

    # --- in ------------------------------------------------------------------------------------

    def enqueue(self, channels: Sequence[Channel], alert: Alert, now: datetime) -> list[int]:
        """One row per channel, unless that channel already got this key: with the same text
        never again, with a changed text once its `remind_minutes` have passed. The ids."""
        key, digest, stamp = dedup_key(alert), text_hash(alert.text), to_iso(now)
        queued: list[int] = []
        with self.store.transaction() as db:
            for channel in channels:
                last = db.execute(
                    "SELECT text_hash, at FROM notify_sent WHERE channel_id = ? AND alert_key = ?",
                    [channel.id, key],
                ).fetchone()
                if last is not None and (
                    last[0] == digest
                    or now - from_iso(last[1]) < timedelta(minutes=channel.remind_minutes)
                ):
                    continue
                cursor = db.execute(
                    "INSERT INTO notify_outbox (channel_id, alert_key, kind, level, source, title, "
                    "text, at, created_at, next_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [channel.id, alert.key, alert.kind, alert.level, alert.source, alert.title,
                     alert.text, to_iso(alert.at), stamp, stamp],
                )  # fmt: skip
                db.execute(
                    "INSERT INTO notify_sent (channel_id, alert_key, text_hash, at) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT(channel_id, alert_key) DO UPDATE SET "
                    "text_hash = excluded.text_hash, at = excluded.at",
                    [channel.id, key, digest, stamp],
                )
                queued.append(int(cursor.lastrowid or 0))
        return queued

    # --- out -----------------------------------------------------------------------------------

    def claim(self, now: datetime) -> list[OutboxItem]:
        """The next row of every channel that is due and has nothing in flight, now `sending`
        and owned by this process (one transaction: no other process gets them)."""
        stamp = to_iso(now)
        with self.store.transaction() as db:
            self._take_back(db, now)
            db.execute(
                "UPDATE notify_outbox SET state = 'failed', done_at = ?, error = CASE WHEN "
                "error = '' THEN 'not sent within a day (was the app closed?)' ELSE error END "
                "WHERE state = 'pending' AND created_at < ?",
                [stamp, to_iso(now - MAX_AGE)],
            )
            rows = db.execute(
                f"SELECT {', '.join('o.' + c.strip() for c in _ITEM_COLUMNS.split(','))} "
                "FROM notify_outbox o JOIN notify_channels c ON c.id = o.channel_id "
                "WHERE o.state = 'pending' AND o.next_at <= ? AND c.enabled "
                "AND o.id = (SELECT min(p.id) FROM notify_outbox p "
                "            WHERE p.channel_id = o.channel_id AND p.state = 'pending') "
                "AND NOT EXISTS (SELECT 1 FROM notify_outbox s "
                "                WHERE s.channel_id = o.channel_id AND s.state = 'sending') "
                "ORDER BY o.id",
                [stamp],
            ).fetchall()
            items = [_item(r) for r in rows]
            for item in items:
                db.execute(
                    "UPDATE notify_outbox SET state = 'sending', owner = ?, owner_machine = ?, "
                    "claimed_at = ? WHERE id = ? AND state = 'pending'",
                    [self.owner, self.machine, stamp, item.id],
                )
        return items

    def _take_back(self, db: Any, now: datetime) -> None:
        rows = db.execute(
            "SELECT id, owner, owner_machine, claimed_at FROM notify_outbox WHERE state = 'sending'"
        ).fetchall()
        for row_id, owner, machine, claimed_at in rows:
            stale = claimed_at is None or now - from_iso(claimed_at) > LEASE
            gone = machine == self.machine and not owner_alive(owner)
            if stale or gone:
                db.execute(
                    "UPDATE notify_outbox SET state = 'pending', owner = '' WHERE id = ?", [row_id]
                )

    def delivered(self, item: OutboxItem, now: datetime) -> None:
        with self.store.transaction() as db:
            db.execute(
                "UPDATE notify_outbox SET state = 'sent', attempts = attempts + 1, done_at = ?, "
                "error = '' WHERE id = ? AND state = 'sending' AND owner = ?",
                [to_iso(now), item.id, self.owner],
            )
            db.execute("UPDATE notify_channels SET last_ok_at = ? WHERE id = ?",
                       [to_iso(now), item.channel_id])  # fmt: skip

    def failed(self, item: OutboxItem, error: str, now: datetime) -> datetime | None:
        """Record a failed try: the next try's time, or None once given up."""
        attempts = item.attempts + 1
        retry = (
            now + timedelta(seconds=self.retry_delays[attempts - 1])
            if attempts <= len(self.retry_delays)
            else None
        )
        with self.store.transaction() as db:
            if retry is not None:
                db.execute(
                    "UPDATE notify_outbox SET state = 'pending', attempts = ?, next_at = ?, "
                    "error = ?, owner = '' WHERE id = ? AND state = 'sending' AND owner = ?",
                    [attempts, to_iso(retry), error, item.id, self.owner],
                )
            else:
                db.execute(
                    "UPDATE notify_outbox SET state = 'failed', attempts = ?, done_at = ?, "
                    "error = ? WHERE id = ? AND state = 'sending' AND owner = ?",
                    [attempts, to_iso(now), error, item.id, self.owner],
                )
            db.execute(
                "UPDATE notify_channels SET last_error = ?, last_error_at = ? WHERE id = ?",
                [error, to_iso(now), item.channel_id],
            )
        return retry

    def next_due(self) -> datetime | None:
        row = self.store.db.execute(
            "SELECT min(o.next_at) FROM notify_outbox o JOIN notify_channels c "
            "ON c.id = o.channel_id WHERE o.state = 'pending' AND c.enabled"
        ).fetchone()
        return from_iso(row[0]) if row and row[0] else None

    def prune(self, now: datetime) -> int:
        """Forget sent, failed and dropped rows older than `KEEP`."""
        with self.store.transaction() as db:
            cursor = db.execute(
                "DELETE FROM notify_outbox WHERE state IN ('sent', 'failed', 'dropped') "
                "AND done_at < ?",
                [to_iso(now - KEEP)],
            )
            return int(cursor.rowcount or 0)

    # --- what the Settings page shows ------------------------------------------------------------

    def statuses(self) -> dict[int, ChannelStatus]:
        rows = self.store.db.execute(
            "SELECT c.id, c.last_ok_at, c.last_error, c.last_error_at, "
            "(SELECT count(*) FROM notify_outbox o WHERE o.channel_id = c.id "
            " AND o.state IN ('pending', 'sending')), "
            "(SELECT count(*) FROM notify_outbox o WHERE o.channel_id = c.id "
            " AND o.state = 'failed'), "
            "(SELECT min(o.next_at) FROM notify_outbox o WHERE o.channel_id = c.id "
            " AND o.state = 'pending' AND o.attempts > 0) "
            "FROM notify_channels c ORDER BY c.id"
        ).fetchall()
        return {
            int(r[0]): ChannelStatus(
                channel_id=int(r[0]),
                last_ok_at=from_iso(r[1]) if r[1] else None,
                last_error=str(r[2] or ""),
                last_error_at=from_iso(r[3]) if r[3] else None,
                pending=int(r[4]),
                failed=int(r[5]),
                next_try_at=from_iso(r[6]) if r[6] else None,
            )
            for r in rows
        }

    def rows(self, channel_id: int | None = None) -> list[dict[str, Any]]:
        """Every row (newest last), for the CLI and tests: id, channel, state, attempts, error."""
        sql = ("SELECT id, channel_id, alert_key, state, attempts, next_at, error, text "
               "FROM notify_outbox")  # fmt: skip
        args: list[Any] = []
        if channel_id is not None:
            sql += " WHERE channel_id = ?"
            args.append(channel_id)
        keys = ("id", "channel_id", "key", "state", "attempts", "next_at", "error", "text")
        rows = self.store.db.execute(sql + " ORDER BY id", args).fetchall()
        return [dict(zip(keys, r, strict=True)) for r in rows]
