"""The one SQLite file: WAL mode, versioned schema, a backup copy before each migration.

Each thread gets its own connection (SQLite connections are not shared across threads); WAL lets
the GUI read while a worker writes.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlite_utils

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.storage.schema import MIGRATIONS, Migration

log = logging.getLogger(__name__)


class StoreError(UserError):
    """The database file cannot be opened or upgraded."""


class Store:
    def __init__(self, path: Path, migrations: list[Migration] | None = None) -> None:
        self.path = path
        self._migrations = MIGRATIONS if migrations is None else migrations
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self.backups: list[Path] = []
        path.parent.mkdir(parents=True, exist_ok=True)
        self.migrate()

    @property
    def schema_version(self) -> int:
        return len(self._migrations)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=NORMAL")
        with self._lock:
            self._all.append(conn)
        return conn

    @property
    def db(self) -> sqlite_utils.Database:
        """This thread's connection, wrapped by sqlite-utils."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite_utils.Database(self._connect())
            self._local.db = db
        return db

    @contextmanager
    def transaction(self) -> Iterator[sqlite_utils.Database]:
        """One change, one transaction: all of it lands or none of it does."""
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def user_version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def migrate(self) -> None:
        try:
            current = self.user_version()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"The database {self.path} is not a readable SQLite file ({exc}).",
                hint="Move it aside and start again, or restore one of the *.bak copies beside it.",
            ) from exc
        target = self.schema_version
        if current > target:
            raise StoreError(
                f"The database {self.path} was written by a newer GPU Companion (schema "
                f"{current}, this version knows {target}).",
                hint="Update the app; the file was not changed.",
            )
        self.db.execute("PRAGMA journal_mode=WAL")  # only once the file is known to be ours
        if current == target:
            return
        if self._has_content():
            self.backups.append(self._backup(current))
        for version in range(current, target):
            with self.transaction() as db:
                self._migrations[version](db)
                db.execute(f"PRAGMA user_version = {version + 1}")
            log.info("migrated %s to schema %d", self.path, version + 1)

    def _has_content(self) -> bool:
        row = self.db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return bool(row[0])

    def _backup(self, version: int) -> Path:
        """A consistent copy (SQLite's backup API, WAL included) named after the old version."""
        dest = self.path.with_name(f"{self.path.name}.v{version}.bak")
        n = 1
        while dest.exists():
            dest = self.path.with_name(f"{self.path.name}.v{version}.{n}.bak")
            n += 1
        target = sqlite3.connect(dest)
        try:
            self.db.conn.backup(target)
        finally:
            target.close()
        dest.chmod(0o600)
        return dest

    def get_setting(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM settings WHERE key = ?", [key]).fetchone()
        return str(row[0]) if row else default

    def set_setting(self, key: str, value: str) -> None:
        with self.transaction() as db:
            db.table("settings").upsert({"key": key, "value": value}, pk="key")

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()
