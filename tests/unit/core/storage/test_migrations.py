"""Named, append-only migrations: the file records which ran, `user_version` never picks one."""

from __future__ import annotations

import sqlite3

import pytest

from gpu_companion.core.storage.schema import MIGRATIONS, SHIPPED, Migration, check_migrations
from gpu_companion.core.storage.store import MIGRATIONS_TABLE, Store, StoreError

NAMES = [m.name for m in MIGRATIONS]


def _noop(db):
    pass


def _rows(path):
    conn = sqlite3.connect(path)
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        names = [r[0] for r in conn.execute(f"SELECT name FROM {MIGRATIONS_TABLE} ORDER BY rowid")]
        return version, names
    finally:
        conn.close()


# --- the shipped list is frozen -----------------------------------------------------------------


def test_the_list_starts_with_exactly_the_shipped_names():
    assert tuple(NAMES[: len(SHIPPED)]) == SHIPPED
    assert len(set(NAMES)) == len(NAMES)
    check_migrations(MIGRATIONS)


def test_appending_a_migration_is_allowed():
    check_migrations([*MIGRATIONS, Migration("0010_something_new", _noop)])


@pytest.mark.parametrize(
    "change",
    ["reorder", "rename", "insert_before_end", "drop_last", "drop_middle", "duplicate"],
)
def test_changing_a_shipped_migration_is_refused(change):
    ms = list(MIGRATIONS)
    if change == "reorder":
        ms[5], ms[6] = ms[6], ms[5]
    elif change == "rename":
        ms[6] = Migration("0007_instance_ids", ms[6].apply)
    elif change == "insert_before_end":
        ms.insert(len(SHIPPED) - 1, Migration("0010_extra", _noop))
    elif change == "drop_last":
        ms.pop()
    elif change == "drop_middle":
        ms.pop(3)
    else:
        ms.append(Migration(ms[0].name, _noop))
    with pytest.raises(ValueError):
        check_migrations(ms)


def test_a_badly_formed_name_is_refused():
    with pytest.raises(ValueError, match="NNNN_"):
        check_migrations([*MIGRATIONS, Migration("Add Things", _noop)])


def test_the_store_refuses_two_migrations_of_one_name(tmp_path):
    with pytest.raises(ValueError, match="unique"):
        Store(tmp_path / "db.sqlite3", migrations=[*MIGRATIONS, MIGRATIONS[0]])


# --- running and recording ----------------------------------------------------------------------


def test_a_new_file_records_every_migration_and_counts_them(tmp_path):
    s = Store(tmp_path / "db.sqlite3")
    try:
        assert s.applied_migrations() == NAMES
        assert s.user_version() == len(NAMES)
        adopted = s.db.execute(f"SELECT count(*) FROM {MIGRATIONS_TABLE} WHERE adopted").fetchone()
        assert adopted[0] == 0
    finally:
        s.close()


def test_an_old_layout_file_is_adopted_by_its_user_version(tmp_path):
    """A file from a build before the table: its first N migrations are recorded as applied
    (none runs again), after a backup; the rest run."""
    path = tmp_path / "db.sqlite3"
    Store(path, migrations=MIGRATIONS[:4]).close()
    conn = sqlite3.connect(path)
    conn.execute(f"DROP TABLE {MIGRATIONS_TABLE}")  # as the old runner left it
    conn.commit()
    conn.close()

    ran = []
    spy = [Migration(m.name, lambda db, m=m: (ran.append(m.name), m.apply(db))) for m in MIGRATIONS]
    s = Store(path, migrations=spy)
    try:
        assert ran == NAMES[4:]
        assert s.applied_migrations() == NAMES
        adopted = s.db.execute(
            f"SELECT name FROM {MIGRATIONS_TABLE} WHERE adopted ORDER BY rowid"
        ).fetchall()
        assert [r[0] for r in adopted] == NAMES[:4]
        assert [b.name for b in s.backups] == ["db.sqlite3.v4.bak"]
        assert s.user_version() == len(NAMES)
    finally:
        s.close()


def test_an_up_to_date_old_layout_file_is_adopted_and_nothing_runs(tmp_path):
    path = tmp_path / "db.sqlite3"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"DROP TABLE {MIGRATIONS_TABLE}")
    conn.commit()
    conn.close()

    def must_not_run(db):
        raise AssertionError("a recorded migration ran again")

    s = Store(path, migrations=[Migration(m.name, must_not_run) for m in MIGRATIONS])
    try:
        assert s.applied_migrations() == NAMES
        assert len(s.backups) == 1
    finally:
        s.close()
    s = Store(path, migrations=[Migration(m.name, must_not_run) for m in MIGRATIONS])
    s.close()
    assert _rows(path) == (len(NAMES), NAMES)


def test_two_branches_appending_each_a_migration_open_each_others_files(tmp_path):
    """Slot 7 claimed twice: a file that ran one branch's migration runs only the other's."""
    mine = Migration("0010_mine", lambda db: db.execute("CREATE TABLE mine (x INTEGER)"))
    theirs = Migration("0010_theirs", lambda db: db.execute("CREATE TABLE theirs (x INTEGER)"))
    path = tmp_path / "db.sqlite3"
    Store(path, migrations=[*MIGRATIONS, theirs]).close()

    merged = Store(path, migrations=[*MIGRATIONS, mine, theirs])
    try:
        assert merged.applied_migrations() == [*NAMES, "0010_theirs", "0010_mine"]
        assert merged.user_version() == len(NAMES) + 2
        assert {"mine", "theirs"} <= set(merged.db.table_names())
    finally:
        merged.close()


def test_the_id_migration_is_not_run_twice_when_slot_7_differs(tmp_path):
    """The bug this replaces: a file made by a build whose 7th migration was the id migration
    ran it again under the next build (`no such column: k.platform`)."""
    path = tmp_path / "db.sqlite3"
    branch = [*MIGRATIONS[:6], MIGRATIONS[7]]  # 0008_identity_by_id in slot 7
    old = Store(path, migrations=branch)
    with old.transaction() as db:
        db.execute("INSERT INTO platforms (name) VALUES ('vast.ai')")
    old.close()

    s = Store(path)
    try:
        assert s.applied_migrations() == [*NAMES[:6], NAMES[7], NAMES[6], *NAMES[8:]]
        cols = {r[1] for r in s.db.execute("PRAGMA table_info(hosts)")}
        assert "instance_id" in cols
    finally:
        s.close()


def test_a_failing_migration_records_nothing_and_keeps_what_ran(tmp_path):
    path = tmp_path / "db.sqlite3"

    def broken(db):
        db.execute("CREATE TABLE half (x INTEGER)")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        Store(path, migrations=[*MIGRATIONS, Migration("0010_broken", broken)])
    assert _rows(path) == (len(NAMES), NAMES)
    s = Store(path)  # this build's list: nothing left to do
    s.close()
    assert _rows(path) == (len(NAMES), NAMES)


# --- refused, untouched -------------------------------------------------------------------------


def _refused_untouched(path, match="newer GPU Companion"):
    before = path.read_bytes()
    with pytest.raises(StoreError, match=match):
        Store(path)
    assert path.read_bytes() == before


def test_a_file_that_records_an_unknown_migration_is_refused_untouched(tmp_path):
    path = tmp_path / "db.sqlite3"
    Store(path, migrations=[*MIGRATIONS, Migration("0010_from_the_future", _noop)]).close()
    _refused_untouched(path, match="0010_from_the_future")


def test_a_file_that_counts_more_than_it_records_is_refused_untouched(tmp_path):
    """A build that does not record names (the old runner) migrated it further."""
    path = tmp_path / "db.sqlite3"
    Store(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {len(NAMES) + 1}")
    conn.close()
    _refused_untouched(path)


def test_an_old_layout_file_beyond_this_version_is_refused_untouched(tmp_path):
    path = tmp_path / "db.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (x INTEGER)")
    conn.execute(f"PRAGMA user_version = {len(NAMES) + 1}")
    conn.close()
    _refused_untouched(path)
