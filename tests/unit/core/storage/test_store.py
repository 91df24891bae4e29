import sqlite3
import stat

import pytest

from gpu_companion.core.storage.schema import MIGRATIONS, Migration
from gpu_companion.core.storage.store import Store, StoreError


def test_new_file_is_wal_at_the_latest_version_without_a_backup(tmp_path):
    s = Store(tmp_path / "db.sqlite3")
    try:
        assert s.user_version() == len(MIGRATIONS)
        assert s.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert {"platforms", "hosts", "settings"} <= set(s.db.table_names())
        assert s.backups == []
    finally:
        s.close()


def test_version_zero_file_is_upgraded_and_a_backup_kept(tmp_path):
    path = tmp_path / "db.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE notes (text TEXT)")
    conn.execute("INSERT INTO notes VALUES ('keep me')")
    conn.commit()
    conn.close()

    s = Store(path)
    try:
        assert s.user_version() == len(MIGRATIONS)
        assert len(s.backups) == 1
        backup = s.backups[0]
        assert backup.name == "db.sqlite3.v0.bak"
        assert stat.S_IMODE(backup.stat().st_mode) == 0o600
        old = sqlite3.connect(backup)
        assert old.execute("PRAGMA user_version").fetchone()[0] == 0
        assert old.execute("SELECT text FROM notes").fetchall() == [("keep me",)]
        assert "hosts" not in {r[0] for r in old.execute("SELECT name FROM sqlite_master")}
        old.close()
        assert s.db.execute("SELECT text FROM notes").fetchall() == [("keep me",)]
    finally:
        s.close()


def test_each_migration_step_backs_up_and_keeps_data(tmp_path):
    path = tmp_path / "db.sqlite3"
    first = Store(path, migrations=MIGRATIONS[:1])
    first.set_setting("k", "v")
    first.close()

    def v2(db):
        db.execute("CREATE TABLE extra (x INTEGER)")

    second = Store(path, migrations=[*MIGRATIONS[:1], Migration("0002_extra", v2)])
    try:
        assert second.user_version() == 2
        assert second.get_setting("k") == "v"
        assert [b.name for b in second.backups] == ["db.sqlite3.v1.bak"]
    finally:
        second.close()


def test_a_failing_migration_rolls_back_and_leaves_the_version(tmp_path):
    path = tmp_path / "db.sqlite3"
    Store(path, migrations=MIGRATIONS[:1]).close()

    def broken(db):
        db.execute("CREATE TABLE half (x INTEGER)")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        Store(path, migrations=[*MIGRATIONS[:1], Migration("0002_broken", broken)])
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    assert "half" not in {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()


def test_a_file_from_a_newer_version_is_refused_untouched(tmp_path):
    path = tmp_path / "db.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="newer GPU Companion"):
        Store(path)
    assert path.read_bytes() == before


def test_a_garbage_file_gets_a_clear_message(tmp_path):
    path = tmp_path / "db.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a readable SQLite file"):
        Store(path)
    assert path.read_bytes() == b"this is not a database" * 100


def test_transaction_is_all_or_nothing(store):
    with pytest.raises(ValueError):
        with store.transaction() as db:
            db.table("settings").insert({"key": "a", "value": "1"})
            raise ValueError
    assert store.get_setting("a") is None


def test_each_thread_gets_its_own_connection(store):
    import threading

    store.set_setting("x", "main")
    seen = []
    t = threading.Thread(target=lambda: seen.append(store.get_setting("x")))
    t.start()
    t.join()
    assert seen == ["main"]
