"""The one SQLite file: WAL mode, versioned schema, a backup copy before each migration.

Each thread gets its own connection (SQLite connections are not shared across threads); WAL lets
the GUI read while a worker writes. sqlite-utils (60-130 ms to import) is loaded on the first table
helper a caller uses; plain queries run on sqlite3 alone, so the first window paints without it.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from gpu_companion.core.common.errors import UserError

if TYPE_CHECKING:
    import sqlite_utils

    from gpu_companion.core.storage.schema import Migration

log = logging.getLogger(__name__)


class StoreError(UserError):
    """The database file cannot be opened, upgraded or written."""


_SQLITE_READONLY, _SQLITE_FULL, _SQLITE_CANTOPEN = 8, 13, 14


def disk_full(path: Path) -> StoreError:
    return StoreError(
        f"The disk holding {path.parent} is full: the change was not saved.",
        hint="Free some space on that disk and try again; what was saved before is intact.",
    )


def read_only(path: Path) -> StoreError:
    return StoreError(
        f"The data folder {path.parent} is read-only: GPU Companion cannot save its database "
        f"{path.name} there.",
        hint="Make the folder writable (or set GPU_COMPANION_HOME to a writable folder) and "
        "start again; nothing was changed.",
    )


def explain(exc: BaseException, path: Path) -> StoreError | None:
    """The user's reason for a failed database operation, or None when it is a bug."""
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
        if code == _SQLITE_FULL:
            return disk_full(path)
        if code == _SQLITE_READONLY:
            return read_only(path)
        if code == _SQLITE_CANTOPEN and not os.access(path.parent, os.W_OK):
            return read_only(path)
    elif isinstance(exc, OSError):
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return disk_full(path)
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return read_only(path)
    return None


def _rollback(conn: sqlite3.Connection) -> None:
    """Undo what is open; SQLite rolls back by itself on some errors (a full disk among them)."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            log.warning("rollback failed", exc_info=True)


class _Db:
    """A thread's connection: `execute` and `conn` on sqlite3 directly; every sqlite-utils
    helper (`table`, `tables`, ...) through a `sqlite_utils.Database` made on first use."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._utils: Any = None

    def execute(self, sql: str, parameters: Any = None) -> sqlite3.Cursor:
        return (
            self.conn.execute(sql, parameters) if parameters is not None else self.conn.execute(sql)
        )

    def __getattr__(self, name: str) -> Any:
        if self._utils is None:
            from gpu_companion.core.common.fast_imports import import_sqlite_utils_without_numpy

            import_sqlite_utils_without_numpy()
            import sqlite_utils

            self._utils = sqlite_utils.Database(self.conn)
        return getattr(self._utils, name)


class Store:
    def __init__(self, path: Path, migrations: list[Migration] | None = None) -> None:
        if migrations is None:
            from gpu_companion.core.storage.schema import MIGRATIONS

            migrations = MIGRATIONS
        self.path = path
        self._migrations = migrations
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self.backups: list[Path] = []
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.migrate()
        except (sqlite3.Error, OSError) as exc:
            self.close()
            reason = explain(exc, path)
            if reason is None:
                raise
            raise reason from exc

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
        """This thread's connection, with the sqlite-utils helpers on first use."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = _Db(self._connect())
            self._local.db = db
        return cast("sqlite_utils.Database", db)

    @contextmanager
    def transaction(self) -> Iterator[sqlite_utils.Database]:
        """One change, one transaction: all of it lands or none of it does. A full disk or a
        read-only folder is raised as a `StoreError` saying so (SQLite may already have rolled
        back by itself, and a second ROLLBACK would hide the reason behind "no transaction")."""
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                _rollback(db.conn)
                raise
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            _rollback(db.conn)
            reason = explain(exc, self.path)
            if reason is None:
                raise
            raise reason from exc

    def user_version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def migrate(self) -> None:
        try:
            current = self.user_version()
        except sqlite3.DatabaseError as exc:
            reason = explain(exc, self.path)  # a read-only folder, not a damaged file
            if reason is not None:
                raise reason from exc
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
            db.execute(
                "INSERT INTO settings (key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [key, value],
            )

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()
