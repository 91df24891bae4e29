"""The schema as an append-only list of named migrations; a table in the file records which ran.

Each migration has a stable name; `schema_migrations` holds the names applied to a file, and the
store runs, in list order, every migration whose name it does not hold. `PRAGMA user_version` is
kept at the count of applied migrations for older builds (which refuse a file that counts more
than they know) but never picks a migration: two branches that each appended one no longer
claim the same slot. A file written before the table existed (user_version = N, no table) is
adopted: its first N names are recorded as applied.

Append new migrations at the end; never edit, rename, reorder or remove one that has shipped.
Once a migration ships, add its name to `SHIPPED`: `MIGRATIONS` must start with exactly that
sequence (checked at import and by tests/unit/core/storage/test_migrations.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpu_companion.core.storage.identity import migrate_to_ids

if TYPE_CHECKING:
    import sqlite_utils


@dataclass(frozen=True)
class Migration:
    """One schema change under the name recorded in `schema_migrations` once it has run."""

    name: str
    apply: Callable[[sqlite_utils.Database], None]

    def __call__(self, db: sqlite_utils.Database) -> None:
        self.apply(db)


def _v1_platforms_hosts(db: sqlite_utils.Database) -> None:
    db.table("platforms").create(
        {
            "id": int,
            "name": str,
            "console_url": str,
            "billing_granularity": str,
            "currency": str,
            "created_at": str,
        },
        pk="id",
        not_null={"name", "billing_granularity", "currency"},
        defaults={"console_url": "", "billing_granularity": "second", "currency": "USD"},
    )
    db.table("platforms").create_index(["name"], unique=True)
    db.table("hosts").create(
        {
            "id": int,
            "alias": str,
            "hostname": str,
            "port": int,
            "user": str,
            "platform_id": int,
            "gpu_model": str,
            "gpu_count": int,
            "notes": str,
            "state": str,
            "created_at": str,
        },
        pk="id",
        not_null={"alias", "hostname", "port", "user", "state"},
        defaults={"port": 22, "gpu_model": "", "gpu_count": 0, "notes": "", "state": "active"},
        foreign_keys=[("platform_id", "platforms", "id")],
    )
    db.table("hosts").create_index(["alias"], unique=True)
    db.table("settings").create({"key": str, "value": str}, pk="key")


def _v2_spend_ledger(db: sqlite_utils.Database) -> None:
    """Rentals and charges (money in integer minor units), budgets, and the alert memory."""
    db.table("rentals").create(
        {
            "id": int,
            "platform_id": int,
            "host_id": int,
            "host_alias": str,
            "gpu_model": str,
            "gpu_count": int,
            "billing_mode": str,
            "rate": str,  # Decimal text, per hour (per week / month for those plans)
            "currency": str,
            "granularity": str,
            "started_at": str,  # UTC ISO, whole seconds
            "planned_end": str,
            "ended_at": str,
            "span_s": int,  # ended_at - started_at, for interval look-ups
            "cost_minor": int,
            "tag": str,
            "outcome": str,
            "notes": str,
            "end_reason": str,
            "evidence": str,  # JSON
            "ref": str,
        },
        pk="id",
        not_null={"platform_id", "billing_mode", "rate", "currency", "granularity", "started_at"},
        defaults={
            "host_alias": "",
            "gpu_model": "",
            "gpu_count": 1,
            "tag": "",
            "outcome": "",
            "notes": "",
            "end_reason": "",
            "evidence": "{}",
        },
        foreign_keys=[("platform_id", "platforms", "id")],
    )
    db.table("rentals").create_index(["started_at", "ended_at"])
    db.table("rentals").create_index(["ended_at", "started_at"])
    db.table("rentals").create_index(["span_s"])
    db.table("rentals").create_index(["ref"], unique=True)
    db.table("charges").create(
        {
            "id": int,
            "platform_id": int,
            "rental_id": int,
            "kind": str,
            "amount_minor": int,
            "currency": str,
            "at": str,
            "description": str,
            "ref": str,
        },
        pk="id",
        not_null={"platform_id", "kind", "amount_minor", "currency", "at"},
        defaults={"description": ""},
        foreign_keys=[("platform_id", "platforms", "id")],
    )
    db.table("charges").create_index(["at"])
    db.table("charges").create_index(["ref"], unique=True)
    db.table("budgets").create(
        {
            "id": int,
            "platform_id": int,  # NULL: all platforms
            "period": str,
            "amount_minor": int,
            "currency": str,
            "thresholds": str,
        },
        pk="id",
        not_null={"period", "amount_minor", "currency", "thresholds"},
        foreign_keys=[("platform_id", "platforms", "id")],
    )
    db.table("alert_log").create({"key": str, "fired_at": str}, pk="key")
    db.table("alert_prefs").create(
        {"rental_id": int, "kind": str, "muted": int, "snoozed_until": str},
        pk=("rental_id", "kind"),
        defaults={"muted": 0},
    )


def _v3_release_records(db: sqlite_utils.Database) -> None:
    """The release gate: per-host checklist settings, per-platform release commands, the record
    of every release and override with its evidence (the spend ledger keeps the meter)."""
    db.table("release_configs").create({"host_alias": str, "config": str}, pk="host_alias")
    db.table("release_commands").create({"platform_id": int, "command": str}, pk="platform_id")
    db.table("release_records").create(
        {
            "id": int,
            "host_alias": str,
            "kind": str,
            "at": str,
            "reason": str,
            "failing_items": str,
            "evidence": str,
            "release_command": str,
            "command_output": str,
        },
        pk="id",
        not_null={"host_alias", "kind", "at"},
    )
    db.table("release_records").create_index(["host_alias"])


def _v4_ssh_keys(db: sqlite_utils.Database) -> None:
    """Key metadata per platform (the private key itself lives only in the OS keyring) and the
    per-host ssh options the generated config adds on request."""
    db.table("ssh_keys").create(
        {
            "platform": str,
            "kind": str,
            "bits": int,
            "fingerprint": str,
            "comment": str,
            "created_at": str,
            "public_file": str,
            "encrypted": int,
            "has_previous": int,
        },
        pk="platform",
        not_null={"kind", "fingerprint", "public_file"},
        defaults={"encrypted": 0, "has_previous": 0},
    )
    db.table("host_ssh_options").create(
        {"host_id": int, "proxy_jump": str, "forwards": str},
        pk="host_id",
        defaults={"proxy_jump": "", "forwards": ""},
    )


def _v5_transfer_jobs(db: sqlite_utils.Database) -> None:
    db.table("transfer_jobs").create(
        {
            "id": int,
            "host_alias": str,
            "direction": str,
            "local_path": str,
            "remote_path": str,
            "options": str,  # JSON
            "label": str,
            "state": str,
            "bytes_done": int,
            "bytes_total": int,
            "current_file": str,
            "engine": str,
            "message": str,
            "verified": int,
            "attempts": int,
            "bytes_sent": int,
            "active_s": float,
            "created_at": float,
            "first_started_at": float,
            "finished_at": float,
        },
        pk="id",
        not_null={"host_alias", "direction", "local_path", "remote_path", "state"},
        defaults={
            "options": "{}",
            "label": "",
            "bytes_done": 0,
            "message": "",
            "verified": 0,
            "attempts": 0,
            "bytes_sent": 0,
            "active_s": 0.0,
        },
    )
    db.table("transfer_jobs").create_index(["host_alias", "state"])


def _v2_gpu_minutes(db: sqlite_utils.Database) -> None:
    """Per-minute GPU aggregates for the monitor's 24 h view and the idle rule."""
    db.table("gpu_minutes").create(
        {
            "alias": str,
            "gpu": int,
            "minute": int,  # epoch seconds // 60
            "samples": int,
            "util": float,
            "mem_used": float,
            "mem_total": float,
            "temp": float,
            "power": float,
            "power_limit": float,
            "util_max": float,
        },
        pk=("alias", "gpu", "minute"),
        not_null={"alias", "gpu", "minute", "samples"},
    )
    db.table("gpu_minutes").create_index(["minute"])


def _v7_host_instance_id(db: sqlite_utils.Database) -> None:
    """The platform's own id of the rented instance (scripts name instances by it)."""
    db.table("hosts").add_column("instance_id", str, not_null_default="")


def _v9_providers(db: sqlite_utils.Database) -> None:
    """Provider accounts (the API key lives in the OS keyring), the release journal (intent
    written before a provider is asked, resolved by reading the instance back), and what makes
    a custom platform's release verifiable (a read-only command and the words that mean gone)."""
    db.table("provider_accounts").create(
        {"id": int, "kind": str, "platform_id": int, "api_base": str, "created_at": str},
        pk="id",
        not_null={"kind", "platform_id"},
        defaults={"api_base": ""},
        foreign_keys=[("platform_id", "platforms", "id")],
    )
    db.table("provider_accounts").create_index(["platform_id"], unique=True)
    db.table("release_journal").create(
        {
            "id": int,
            "host_id": int,
            "host_alias": str,
            "platform_id": int,
            "provider": str,
            "instance_id": str,
            "action": str,  # destroy | stop
            "kind": str,  # release | override | auto
            "step": str,  # intent | requested | confirmed
            "started_at": str,
            "owner": str,  # boot id, pid and the pid's start time of the process that acts
            "said": str,
            "record": str,  # JSON: the release record to keep once confirmed
            "resolved_at": str,
            "outcome": str,  # confirmed | unconfirmed | refused
        },
        pk="id",
        defaults={"said": "", "record": "{}", "outcome": ""},
    )
    db.table("release_journal").create_index(["resolved_at"])
    db.execute("ALTER TABLE release_commands ADD COLUMN verify TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE release_commands ADD COLUMN gone_when TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE release_commands ADD COLUMN running_when TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE platforms ADD COLUMN storage_rate TEXT NOT NULL DEFAULT ''")


def _v10_transfer_owners(db: sqlite_utils.Database) -> None:
    """Which process queued or runs a transfer job (boot id, pid and the pid's start time), on
    which computer, and when it last said it was alive: a start-up pauses only the jobs whose
    process is gone, never those of a window or command that still runs them."""
    db.execute("ALTER TABLE transfer_jobs ADD COLUMN owner TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE transfer_jobs ADD COLUMN owner_machine TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE transfer_jobs ADD COLUMN heartbeat_at FLOAT")


def _v11_notify(db: sqlite_utils.Database) -> None:
    """Off-desk alert channels (ntfy, webhooks, e-mail, desktop; their secrets live in the OS
    keyring), the outbox that keeps their deliveries across a restart, and what each channel
    was last sent per alert key (one delivery per alert, a changed text at most every N min)."""
    db.execute(
        "CREATE TABLE notify_channels ("
        " id INTEGER PRIMARY KEY,"
        " type TEXT NOT NULL,"  # ntfy | webhook | email | desktop
        " name TEXT NOT NULL DEFAULT '',"
        " config TEXT NOT NULL DEFAULT '{}',"  # JSON, never a secret
        " secrets TEXT NOT NULL DEFAULT '',"  # the keyring slots that hold one: token,url,...
        " kinds TEXT NOT NULL,"  # alert kinds it gets, comma-separated
        " quiet TEXT NOT NULL DEFAULT '',"  # HH:MM-HH:MM local time, '' for none
        " remind_minutes INTEGER NOT NULL DEFAULT 30,"
        " enabled INTEGER NOT NULL DEFAULT 1,"
        " created_at TEXT NOT NULL,"
        " last_ok_at TEXT,"
        " last_error TEXT NOT NULL DEFAULT '',"
        " last_error_at TEXT)"
    )
    db.execute(
        "CREATE TABLE notify_outbox ("
        " id INTEGER PRIMARY KEY,"
        " channel_id INTEGER NOT NULL REFERENCES notify_channels(id) ON DELETE CASCADE,"
        " alert_key TEXT NOT NULL,"
        " kind TEXT NOT NULL,"
        " level TEXT NOT NULL,"
        " source TEXT NOT NULL DEFAULT '',"
        " title TEXT NOT NULL,"
        " text TEXT NOT NULL,"
        " at TEXT NOT NULL,"  # when the alert was raised (UTC ISO)
        " created_at TEXT NOT NULL,"  # when it was queued: one not sent within a day is dropped
        " state TEXT NOT NULL DEFAULT 'pending',"  # pending | sending | sent | failed | dropped
        " attempts INTEGER NOT NULL DEFAULT 0,"
        " next_at TEXT NOT NULL,"  # a channel sends its oldest item first: a retry waits
        " owner TEXT NOT NULL DEFAULT '',"  # the process sending it (see common.owner)
        " owner_machine TEXT NOT NULL DEFAULT '',"
        " claimed_at TEXT,"
        " done_at TEXT,"
        " error TEXT NOT NULL DEFAULT '')"
    )
    db.execute("CREATE INDEX notify_outbox_due ON notify_outbox (state, next_at)")
    db.execute("CREATE INDEX notify_outbox_channel ON notify_outbox (channel_id, state)")
    db.execute(
        "CREATE TABLE notify_sent ("
        " channel_id INTEGER NOT NULL REFERENCES notify_channels(id) ON DELETE CASCADE,"
        " alert_key TEXT NOT NULL,"
        " text_hash TEXT NOT NULL,"
        " at TEXT NOT NULL,"
        " PRIMARY KEY (channel_id, alert_key))"
    )


def _v12_year_of_use_indexes(db: sqlite_utils.Database) -> None:
    """What a year of use needs to stay quick (issue 30): the unfinished transfer jobs by state
    (the Transfers page shows those and only the newest finished ones, of tens of thousands),
    and the values the Spend page's filters and chart offer, read by skipping through an index
    (a loose index scan) instead of reading a million rentals. The rentals' start index also
    carries what the reports sum (platform, currency, seconds, cost), and so does the charges'
    date index: a month's report and a year's chart then read those indexes alone, not a
    table row per rental."""
    db.execute("CREATE INDEX transfer_jobs_state ON transfer_jobs (state)")
    db.execute("DROP INDEX IF EXISTS idx_rentals_started_at_ended_at")
    db.execute(
        "CREATE INDEX rentals_started_covering ON rentals "
        "(started_at, ended_at, platform_id, currency, span_s, cost_minor)"
    )
    db.execute("DROP INDEX IF EXISTS idx_charges_at")
    db.execute(
        "CREATE INDEX charges_at_covering ON charges (at, platform_id, currency, amount_minor)"
    )
    db.execute("CREATE INDEX rentals_gpu_model ON rentals (gpu_model)")
    db.execute("CREATE INDEX rentals_tag ON rentals (tag)")
    db.execute("CREATE INDEX rentals_currency ON rentals (currency)")


# the usual rentals (ended, with a cost and a positive span): what `spend.rollup` holds
_USUAL = "{r}.ended_at IS NOT NULL AND {r}.cost_minor IS NOT NULL AND {r}.span_s > 0"


def _v13_spend_rollup(db: sqlite_utils.Database) -> None:
    """Spend per UTC hour, platform and currency (`spend.rollup`: a year's chart sums hours, not
    a million rentals), the time ranges a write made stale (appended by triggers on every
    write to rentals and charges, whoever makes it: one row per row written), and a partial
    index on the few ended rentals the rollup leaves out. Nothing is computed here: the whole
    ledger is marked stale and re-derived later, off the GUI thread. A span stored from
    instants with fractions of a second (an import) is made the stored instants' again."""
    db.execute(
        "UPDATE rentals SET span_s = CAST(strftime('%s', ended_at) AS INTEGER) - "
        "CAST(strftime('%s', started_at) AS INTEGER) WHERE ended_at IS NOT NULL AND "
        "span_s IS NOT CAST(strftime('%s', ended_at) AS INTEGER) - "
        "CAST(strftime('%s', started_at) AS INTEGER)"
    )
    db.execute(
        "CREATE TABLE spend_hours (hour INTEGER NOT NULL, platform_id INTEGER NOT NULL, "
        "currency TEXT NOT NULL, starts INTEGER NOT NULL, seconds INTEGER NOT NULL, "
        "rentals_minor INTEGER NOT NULL, charges_minor INTEGER NOT NULL, "
        "PRIMARY KEY (hour, platform_id, currency)) WITHOUT ROWID"
    )
    db.execute(
        "CREATE TABLE spend_stale (id INTEGER PRIMARY KEY, lo TEXT NOT NULL, hi TEXT NOT NULL)"
    )
    old, new = _USUAL.format(r="OLD"), _USUAL.format(r="NEW")
    stale = "INSERT INTO spend_stale (lo, hi)"
    db.execute(
        f"CREATE TRIGGER rentals_rollup_insert AFTER INSERT ON rentals WHEN {new} "
        f"BEGIN {stale} VALUES (NEW.started_at, NEW.ended_at); END"
    )
    db.execute(
        "CREATE TRIGGER rentals_rollup_update AFTER UPDATE OF started_at, ended_at, span_s, "
        f"cost_minor, platform_id, currency ON rentals WHEN ({old}) OR ({new}) BEGIN "
        f"{stale} SELECT OLD.started_at, OLD.ended_at WHERE {old}; "
        f"{stale} SELECT NEW.started_at, NEW.ended_at WHERE {new}; END"
    )
    db.execute(
        f"CREATE TRIGGER rentals_rollup_delete AFTER DELETE ON rentals WHEN {old} "
        f"BEGIN {stale} VALUES (OLD.started_at, OLD.ended_at); END"
    )
    db.execute(
        "CREATE TRIGGER charges_rollup_insert AFTER INSERT ON charges "
        f"BEGIN {stale} VALUES (NEW.at, NEW.at); END"
    )
    db.execute(
        "CREATE TRIGGER charges_rollup_update AFTER UPDATE OF at, amount_minor, platform_id, "
        f"currency ON charges BEGIN {stale} VALUES (MIN(OLD.at, NEW.at), MAX(OLD.at, NEW.at)); END"
    )
    db.execute(
        "CREATE TRIGGER charges_rollup_delete AFTER DELETE ON charges "
        f"BEGIN {stale} VALUES (OLD.at, OLD.at); END"
    )
    db.execute(
        "CREATE INDEX rentals_unrolled ON rentals (started_at) WHERE ended_at IS NOT NULL AND "
        "(cost_minor IS NULL OR span_s IS NULL OR span_s <= 0)"
    )
    # everything written so far is stale: one range from the first to the last instant
    # (index look-ups, no scan)
    db.execute(
        f"{stale} SELECT MIN(COALESCE(r0, c0), COALESCE(c0, r0)), "
        "MAX(COALESCE(r1, c1), COALESCE(c1, r1)) FROM (SELECT (SELECT MIN(started_at) FROM "
        "rentals) AS r0, (SELECT MAX(ended_at) FROM rentals) AS r1, (SELECT MIN(at) FROM "
        "charges) AS c0, (SELECT MAX(at) FROM charges) AS c1) WHERE COALESCE(r1, c1) IS NOT NULL"
    )


# Tables that name a host by its alias (lanes and graphs are per alias): a rename rewrites them in
# the same transaction, so the host keeps its transfer history, checkpoint evidence and graphs.
ALIAS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("transfer_jobs", "host_alias"),
    ("gpu_minutes", "alias"),
)

# The names of the migrations that have shipped, in their order: frozen. A database records these
# names; renaming or reordering one would make a file written by an earlier build unreadable.
SHIPPED: tuple[str, ...] = (
    "0001_platforms_hosts",
    "0002_spend_ledger",
    "0003_release_records",
    "0004_ssh_keys",
    "0005_transfer_jobs",
    "0006_gpu_minutes",
    "0007_host_instance_id",
    "0008_identity_by_id",
    "0009_providers",
    "0010_transfer_owners",
    "0011_notify",
    "0012_year_of_use_indexes",
    "0013_spend_rollup",
)

MIGRATIONS: list[Migration] = [
    Migration("0001_platforms_hosts", _v1_platforms_hosts),
    Migration("0002_spend_ledger", _v2_spend_ledger),
    Migration("0003_release_records", _v3_release_records),
    Migration("0004_ssh_keys", _v4_ssh_keys),
    Migration("0005_transfer_jobs", _v5_transfer_jobs),
    Migration("0006_gpu_minutes", _v2_gpu_minutes),
    Migration("0007_host_instance_id", _v7_host_instance_id),
    # keys, release history and settings by id; the data dir's own id
    Migration("0008_identity_by_id", migrate_to_ids),
    Migration("0009_providers", _v9_providers),
    Migration("0010_transfer_owners", _v10_transfer_owners),
    Migration("0011_notify", _v11_notify),
    Migration("0012_year_of_use_indexes", _v12_year_of_use_indexes),
    Migration("0013_spend_rollup", _v13_spend_rollup),
]

_NAME = re.compile(r"[0-9]{4}_[a-z0-9_]+")


def check_migrations(migrations: Sequence[Migration], shipped: Sequence[str] = SHIPPED) -> None:
    """Refuse a list that renames, reorders, drops or inserts before a shipped migration, or
    that names two migrations alike: ValueError saying which."""
    names = [m.name for m in migrations]
    for name in names:
        if not _NAME.fullmatch(name):
            raise ValueError(f"migration name {name!r} is not NNNN_lowercase_words")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"migration names used twice: {', '.join(dupes)}")
    head = tuple(names[: len(shipped)])
    if head != tuple(shipped):
        at = next(
            (i for i, (a, b) in enumerate(zip(head, shipped, strict=False)) if a != b), len(head)
        )
        found = head[at] if at < len(head) else "(nothing)"
        raise ValueError(
            f"migration {at + 1} must be the shipped {shipped[at]!r}, found {found!r}: shipped "
            "migrations are append-only (add new ones at the end, never rename or reorder)"
        )


check_migrations(MIGRATIONS)
