"""The one SQLite file: WAL mode, named migrations, a backup copy before migrating.

Each thread gets its own connection (SQLite connections are not shared across threads), closed
when that thread ends (see `Store.db`); WAL lets the GUI read while a worker writes. sqlite-utils
(60-130 ms to import) is loaded on the first table helper a caller uses; plain queries run on
sqlite3 alone, so the first window paints without it.

Which migrations have run is recorded by name in `schema_migrations` (see `schema`); a file from
before that table is adopted from its `PRAGMA user_version`.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _

if TYPE_CHECKING:
    import sqlite_utils

    from gpu_companion.core.storage.schema import Migration

log = logging.getLogger(__name__)


class StoreError(UserError):
    """The database file cannot be opened, upgraded or written."""


_SQLITE_READONLY, _SQLITE_FULL, _SQLITE_CANTOPEN = 8, 13, 14


def disk_full(path: Path) -> StoreError:
    return StoreError(
        _("The disk holding {folder} is full: the change was not saved.").format(
            folder=path.parent
        ),
        hint=_("Free some space on that disk and try again; what was saved before is intact."),
    )


def read_only(path: Path) -> StoreError:
    return StoreError(
        _(
            "The data folder {folder} is read-only: GPU Companion cannot save its database "
            "{name} there."
        ).format(folder=path.parent, name=path.name),
        hint=_(
            "Make the folder writable (or set GPU_COMPANION_HOME to a writable folder) and "
            "start again; nothing was changed."
        ),
    )


def damaged(path: Path, exc: BaseException) -> StoreError:
    """A file that opened but whose pages do not read (damaged mid-file, or not SQLite)."""
    return StoreError(
        _("The database {path} is not a readable SQLite file ({error}).").format(
            path=path, error=exc
        ),
        hint=_("Move it aside and start again, or restore one of the *.bak copies beside it."),
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


def _now() -> str:
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).isoformat(timespec="seconds")


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


MIGRATIONS_TABLE = "schema_migrations"


def _close_connection(
    conn: sqlite3.Connection, open_: dict[sqlite3.Connection, Any], lock: threading.RLock, pid: int
) -> None:
    """A thread's connection, closed once: by its thread's end or by `Store.close`.

    Not in a child between fork and exec: a child started with a `preexec_fn` (the parent-death
    signal, core.common.children) runs Python's after-fork clean-up, which drops the other
    threads' slots and so runs this finaliser there — and `lock` may be held by a thread that
    does not exist in the child: it would wait forever, and its parent with it."""
    if os.getpid() != pid:
        return
    with lock:
        open_.pop(conn, None)
    conn.close()


class Store:
    def __init__(self, path: Path, migrations: Sequence[Migration] | None = None) -> None:
        if migrations is None:
            from gpu_companion.core.storage.schema import MIGRATIONS

            migrations = MIGRATIONS
        names = [m.name for m in migrations]
        if len(set(names)) != len(names):
            raise ValueError(f"migration names must be unique: {names}")
        self.path = path
        self._migrations = list(migrations)
        self._local = threading.local()
        # each open connection and the finaliser that closes it (an RLock: a finaliser may run
        # from the cyclic GC on a thread that holds it)
        self._open: dict[sqlite3.Connection, weakref.finalize[Any, Any]] = {}
        self._lock = threading.RLock()
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

    def _connect(self) -> _Db:
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        try:
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA synchronous=NORMAL")
        except BaseException:
            conn.close()
            raise
        db = _Db(conn)
        with self._lock:
            closer = weakref.finalize(
                db, _close_connection, conn, self._open, self._lock, os.getpid()
            )
            closer.atexit = False  # as before: at exit the process closes its files anyway
            self._open[conn] = closer
        return db

    @property
    def db(self) -> sqlite_utils.Database:
        """This thread's connection, with the sqlite-utils helpers on first use.

        The connection does not outlive its thread. Its wrapper (`_Db`) lives only in this
        thread's slot of a `threading.local`, and CPython drops a thread's slots when it tears
        down the thread's state: at the end of a `threading.Thread` (before `join()` returns),
        and for a thread Python did not start (a Qt worker) when its outermost call into Python
        returns. A `weakref.finalize` on the wrapper then closes the connection. This does not
        depend on the `Thread` object being collected (a caller may keep it; a foreign thread's
        `_DummyThread` is never removed) nor on `__del__` of the shared local object (which
        runs only when the Store drops it). A caller that still holds the wrapper (`db =
        store.db`) keeps the connection open until it lets go: it is never closed under a user.
        `close()` closes every connection still open, whichever thread opened it.

        SQLite itself may keep a closed connection's file descriptor for reuse while another
        connection of the process holds a lock on the file (POSIX locks; in WAL mode an open
        connection always does): the count stays at the most connections open at once, it does
        not grow with the threads that ever used the store.
        """
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._connect()
            self._local.db = db
        return cast("sqlite_utils.Database", db)

    def open_connections(self) -> int:
        """How many connections this store holds open (one per live thread that used it)."""
        with self._lock:
            return len(self._open)

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

    def applied_migrations(self) -> list[str]:
        """The names recorded in the file as applied, in the order they ran."""
        return [
            str(r[0])
            for r in self.db.execute(f"SELECT name FROM {MIGRATIONS_TABLE} ORDER BY rowid")
        ]

    def _newer(self, detail: str) -> StoreError:
        return StoreError(
            _("The database {path} was written by a newer GPU Companion ({detail}).").format(
                path=self.path, detail=detail
            ),
            hint=_("Update the app; the file was not changed."),
        )

    def migrate(self) -> None:
        """`_migrate`, one process at a time: two commands started together on a new data dir
        both found it empty and both created the tables ("table platforms already exists")."""
        import fcntl

        try:
            fd = os.open(self.path.with_name(f".{self.path.name}.migrate-lock"),
                         os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)  # fmt: skip
        except OSError:  # a read-only folder: `_migrate` says so in words
            self._migrate()
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self._migrate()
        finally:
            os.close(fd)

    def _migrate(self) -> None:
        """Bring the file to this build's schema: adopt a file from before the migrations table,
        then run, in list order and one transaction each, every migration not recorded.

        Refused, with the file untouched: a file recording a migration this build does not know,
        or counting more (`user_version`) than it records (a build that does not record names
        has migrated it further)."""
        try:
            current = self.user_version()
            has_table = bool(
                self.db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                    [MIGRATIONS_TABLE],
                ).fetchone()
            )
        except sqlite3.DatabaseError as exc:
            reason = explain(exc, self.path)  # a read-only folder, not a damaged file
            if reason is not None:
                raise reason from exc
            raise damaged(self.path, exc) from exc
        known = [m.name for m in self._migrations]
        if has_table:
            applied = self.applied_migrations()
            unknown = [name for name in applied if name not in known]
            if unknown:
                raise self._newer(
                    _("migration {names} is unknown to this version").format(
                        names=", ".join(unknown)
                    )
                )
            if current > len(applied):
                raise self._newer(
                    _(
                        "schema {current}, but {applied} migrations recorded; "
                        "this version knows {known}"
                    ).format(current=current, applied=len(applied), known=len(known))
                )
            adopt: list[str] = []
        else:
            if current > len(known):
                raise self._newer(
                    _("schema {current}, this version knows {known}").format(
                        current=current, known=len(known)
                    )
                )
            applied = adopt = known[:current]  # before the table: the first N ran, in order
        pending = [m for m in self._migrations if m.name not in applied]
        self.db.execute("PRAGMA journal_mode=WAL")  # only once the file is known to be ours
        if has_table and not pending:
            if current != len(applied):
                self.db.execute(f"PRAGMA user_version = {len(applied)}")
            return
        if self._has_content():
            self.backups.append(self._backup(current))
        done = len(applied)
        if not has_table:
            with self.transaction() as db:
                db.execute(
                    f"CREATE TABLE {MIGRATIONS_TABLE} (name TEXT PRIMARY KEY, "
                    "applied_at TEXT NOT NULL, adopted INTEGER NOT NULL DEFAULT 0)"
                )
                self._record(db, adopt, adopted=True)
            if adopt:
                log.info("adopted %s at schema %d: %s", self.path, current, ", ".join(adopt))
        for migration in pending:
            with self.transaction() as db:
                migration(db)
                self._record(db, [migration.name])
                done += 1
                db.execute(f"PRAGMA user_version = {done}")
            log.info("migrated %s: %s", self.path, migration.name)

    @staticmethod
    def _record(db: sqlite_utils.Database, names: list[str], adopted: bool = False) -> None:
        """`adopted`: recorded from the `user_version` of a file from before the table."""
        now = _now()
        for name in names:
            db.execute(
                f"INSERT INTO {MIGRATIONS_TABLE} (name, applied_at, adopted) VALUES (?, ?, ?)",
                [name, now, int(adopted)],
            )

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
        """Close every connection still open, whichever thread opened it."""
        with self._lock:
            closers = list(self._open.values())
        for closer in closers:
            closer()  # at most once each: it forgets the connection and closes it
        self._local = threading.local()
