"""Identity by id: what the user can rename (a platform's name, a host's alias) never joins rows.

Migration 6 gives the data dir a stable id of its own (the keyring service name includes it, so
two data dirs never share keyring entries), keys the SSH key records by platform id, and the
release history and checklist settings by host id. Key secrets cannot move inside a database
transaction: each key row keeps the name its keyring entries were stored under (`keyring_name`)
until the vault has copied them to the new service, read them back and only then removed the old
ones (`KeyVault.move_legacy_secrets`).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import sqlite_utils

DATA_DIR_ID = "data_dir_id"


def data_dir_id(db: sqlite_utils.Database) -> str:
    row = db.execute("SELECT value FROM settings WHERE key = ?", [DATA_DIR_ID]).fetchone()
    if row is None:  # only before migration 6 has run
        raise LookupError("the database has no data dir id yet")
    return str(row[0])


def migrate_to_ids(db: sqlite_utils.Database) -> None:
    import uuid  # once per data dir: not on every start-up

    db.execute(
        "INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)", [DATA_DIR_ID, uuid.uuid4().hex]
    )
    # a key whose platform row is gone keeps a platform of that name: a key is never dropped
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    db.execute(
        "INSERT INTO platforms (name, created_at) SELECT DISTINCT k.platform, ? FROM ssh_keys k "
        "WHERE NOT EXISTS (SELECT 1 FROM platforms p WHERE p.name = k.platform)",
        [now],
    )
    db.execute(
        "CREATE TABLE ssh_keys_by_id ("
        " platform_id INTEGER PRIMARY KEY,"
        " kind TEXT NOT NULL, bits INTEGER, fingerprint TEXT NOT NULL, comment TEXT,"
        " created_at TEXT, public_file TEXT NOT NULL,"
        " encrypted INTEGER NOT NULL DEFAULT 0, has_previous INTEGER NOT NULL DEFAULT 0,"
        " keyring_name TEXT)"  # the old keyring user name, until its secrets have moved
    )
    db.execute(
        "INSERT INTO ssh_keys_by_id SELECT p.id, k.kind, k.bits, k.fingerprint, k.comment, "
        "k.created_at, k.public_file, k.encrypted, k.has_previous, k.platform "
        "FROM ssh_keys k JOIN platforms p ON p.name = k.platform"
    )
    db.execute("DROP TABLE ssh_keys")
    db.execute("ALTER TABLE ssh_keys_by_id RENAME TO ssh_keys")

    db.execute(
        "CREATE TABLE release_configs_by_id (host_id INTEGER PRIMARY KEY, config TEXT NOT NULL)"
    )
    db.execute(
        "INSERT INTO release_configs_by_id SELECT h.id, c.config FROM release_configs c "
        "JOIN hosts h ON h.alias = c.host_alias"
    )
    db.execute("DROP TABLE release_configs")
    db.execute("ALTER TABLE release_configs_by_id RENAME TO release_configs")

    db.execute("ALTER TABLE release_records ADD COLUMN host_id INTEGER")
    db.execute(
        "UPDATE release_records SET host_id = "
        "(SELECT h.id FROM hosts h WHERE h.alias = release_records.host_alias)"
    )
    db.execute("CREATE INDEX release_records_host_id ON release_records (host_id)")
