"""Every database an earlier build wrote opens with today's Store: tests/fixtures/schema/v{k} has
the first k migrations applied the old way (user_version = k, no migrations table) and a little
data; opened, it is adopted, migrated to the full schema, and what the user saved is all there."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from gpu_companion.core.hosts.registry import Host, HostRegistry
from gpu_companion.core.release.record import ChecklistSettings, StoreReleaseLedger
from gpu_companion.core.spend.budgets import Budgets
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.storage.identity import data_dir_id
from gpu_companion.core.storage.schema import MIGRATIONS, SHIPPED
from gpu_companion.core.storage.store import MIGRATIONS_TABLE, Store
from tests.fixtures.make_schema_fixtures import build

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "schema"
VERSIONS = range(1, len(SHIPPED) + 1)


def _schema(path: Path) -> set[tuple[str, str, str]]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        ).fetchall()
        return {(r[0], r[1], r[2] or "") for r in rows}
    finally:
        conn.close()


def test_there_is_a_fixture_for_every_shipped_schema():
    assert sorted(p.name for p in FIXTURES.glob("v*.sqlite3")) == sorted(
        f"v{k}.sqlite3" for k in VERSIONS
    )


@pytest.mark.parametrize("k", VERSIONS)
def test_the_fixture_is_what_the_shipped_migrations_make(tmp_path, k):
    """The committed file and one built now by migrations 1..k have the same schema: a shipped
    migration was not edited afterwards (and the fixture is the old layout)."""
    fresh = tmp_path / "fresh.sqlite3"
    build(fresh, k)
    committed = FIXTURES / f"v{k}.sqlite3"
    assert _schema(committed) == _schema(fresh)
    conn = sqlite3.connect(committed)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == k
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert MIGRATIONS_TABLE not in tables
    finally:
        conn.close()


@pytest.mark.parametrize("k", VERSIONS)
def test_an_old_database_migrates_with_its_data(tmp_path, k):
    path = tmp_path / "companion.sqlite3"
    shutil.copyfile(FIXTURES / f"v{k}.sqlite3", path)

    store = Store(path)
    try:
        assert store.applied_migrations() == [m.name for m in MIGRATIONS]
        assert store.user_version() == len(MIGRATIONS)
        assert [b.name for b in store.backups] == [f"companion.sqlite3.v{k}.bak"]
        adopted = store.db.execute(
            f"SELECT name FROM {MIGRATIONS_TABLE} WHERE adopted ORDER BY rowid"
        ).fetchall()
        assert [r[0] for r in adopted] == list(SHIPPED[:k])
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert store.db.execute("PRAGMA foreign_key_check").fetchall() == []

        hosts = HostRegistry(store)
        [host] = hosts.hosts()
        assert (host.id, host.alias, host.hostname, host.port, host.platform_id) == (
            1,
            "gpu1",
            "10.0.0.1",
            2222,
            1,
        )
        assert host.instance_id == ("12345678" if k >= 7 else "")
        assert [(p.id, p.name) for p in hosts.platforms()] == [(1, "vast.ai")]
        assert store.get_setting("theme") == "dark"
        assert data_dir_id(store.db)

        ledger = SpendLedger(store)
        rentals = ledger.history()
        if k >= 2:
            [rental] = rentals
            assert (rental.id, rental.host_id, rental.host_alias, rental.cost_minor) == (
                1,
                1,
                "gpu1",
                80,
            )
            assert [c.amount_minor for c in ledger.charges()] == [5]
            assert [b.period for b in Budgets(ledger).all()] == ["month"]
        else:
            assert rentals == []

        if k >= 3:
            [record] = StoreReleaseLedger(store, ledger).history("gpu1")
            assert (record.id, record.kind, record.evidence) == (
                1,
                "release",
                ("checkpoint synced",),
            )
            assert ChecklistSettings(store).config("gpu1").project == "fixture"
        keys = store.db.execute("SELECT platform_id, fingerprint, keyring_name FROM ssh_keys")
        assert keys.fetchall() == ([(1, "SHA256:fixture", "vast.ai")] if k >= 4 else [])
        jobs = store.db.execute("SELECT id, host_alias, state FROM transfer_jobs").fetchall()
        assert jobs == ([(1, "gpu1", "done")] if k >= 5 else [])
        minutes = store.db.execute("SELECT alias, samples FROM gpu_minutes").fetchall()
        assert minutes == ([("gpu1", 6)] if k >= 6 else [])
        accounts = store.db.execute("SELECT id, kind, platform_id FROM provider_accounts")
        assert accounts.fetchall() == ([(1, "vast", 1)] if k >= 9 else [])

        added = hosts.save_host(Host("gpu2", "10.0.0.2"))  # and it takes new rows
        assert added.id == 2
    finally:
        store.close()

    fresh = tmp_path / "fresh.sqlite3"
    Store(fresh).close()
    assert _schema(path) == _schema(fresh)  # the full schema, as a new file gets it
    backup = sqlite3.connect(tmp_path / f"companion.sqlite3.v{k}.bak")
    try:
        assert backup.execute("PRAGMA user_version").fetchone()[0] == k
    finally:
        backup.close()
