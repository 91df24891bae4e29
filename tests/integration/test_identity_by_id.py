"""Identity by id: a renamed platform keeps its key, a renamed host keeps its meter and history,
each data dir has keyring entries of its own, and migration 6 moves the keyring entries that
earlier versions stored by platform name without losing one (a real gnome-keyring)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import timedelta

import pytest

from gpu_companion.core.hosts.registry import Host, HostRegistry, Platform
from gpu_companion.core.release.context import ReleaseRecord
from gpu_companion.core.release.record import StoreReleaseLedger
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.ssh.vault import SERVICE, KeyVault
from gpu_companion.core.storage.identity import data_dir_id
from gpu_companion.core.storage.schema import MIGRATIONS
from gpu_companion.core.storage.store import Store


@pytest.fixture
def cleanup(keyring_backend):
    """(service, user) pairs to remove from the harness keyring after the test."""
    entries: list[tuple[str, str]] = []
    yield entries
    for service, user in entries:
        try:
            keyring_backend.delete_password(service, user)
        except Exception:  # noqa: BLE001 - already gone is fine
            pass


def _old_store(path, now="2025-01-01T00:00:00+00:00"):
    """A database as version 5 left it: keys by platform name, release rows by alias."""
    old = Store(path, migrations=MIGRATIONS[:5])
    with old.transaction() as db:
        db.execute("INSERT INTO platforms (name, created_at) VALUES ('vast.ai', ?)", [now])
        db.execute(
            "INSERT INTO hosts (alias, hostname, port, user, platform_id, created_at) "
            "VALUES ('gpu1', '10.0.0.1', 22, 'root', 1, ?)",
            [now],
        )
        for name, has_previous in (("vast.ai", 1), ("old-cloud", 0)):  # old-cloud: no row
            db.execute(
                "INSERT INTO ssh_keys (platform, kind, bits, fingerprint, comment, created_at, "
                "public_file, encrypted, has_previous) VALUES (?, 'ed25519', 256, ?, '', ?, ?, "
                "0, ?)",
                [name, f"SHA256:{name}", now, f"{name}.pub", has_previous],
            )
        db.execute(
            "INSERT INTO release_configs (host_alias, config) VALUES ('gpu1', ?)",
            ['{"project": "proj"}'],
        )
        db.execute(
            "INSERT INTO release_records (host_alias, kind, at) VALUES ('gpu1', 'release', ?)",
            [now],
        )
    old.close()


def test_migration_moves_keyring_entries_by_id_and_loses_none(app_paths, keyring_backend, cleanup):
    from cryptography.hazmat.primitives.asymmetric import ed25519

    from gpu_companion.core.ssh.keys import openssh_text

    legacy = f"{SERVICE}-legacy-{uuid.uuid4().hex[:8]}"  # the old shared service, isolated
    secrets = {
        user: openssh_text(ed25519.Ed25519PrivateKey.generate(), None)
        for user in ("ssh-key:vast.ai", "previous-ssh-key:vast.ai", "ssh-key:old-cloud")
    }
    for user, text in secrets.items():
        keyring_backend.set_password(legacy, user, text)
        cleanup.append((legacy, user))
    _old_store(app_paths.database)

    store = Store(app_paths.database)
    try:
        assert store.user_version() == len(MIGRATIONS) >= 6
        assert store.backups  # a copy was taken before migrating
        ident = data_dir_id(store.db)
        vault = KeyVault(store, app_paths.data_dir / "keys", keyring_backend, legacy_service=legacy)
        assert vault.service == f"{SERVICE}/{ident}"
        keys = {k.platform: k for k in vault.keys()}
        assert set(keys) == {"vast.ai", "old-cloud"}  # the orphan key got its platform back
        for k in keys.values():
            cleanup += [(vault.service, f"ssh-key:{k.platform_id}")]
            cleanup += [(vault.service, f"previous-ssh-key:{k.platform_id}")]

        assert vault.private_text("vast.ai") == secrets["ssh-key:vast.ai"]  # moves them all
        assert vault.private_text("vast.ai", previous=True) == secrets["previous-ssh-key:vast.ai"]
        assert vault.private_text("old-cloud") == secrets["ssh-key:old-cloud"]
        vid = keys["vast.ai"].platform_id
        assert (
            keyring_backend.get_password(vault.service, f"ssh-key:{vid}")
            == secrets["ssh-key:vast.ai"]
        )
        for user in secrets:  # the old entries are gone only after the new ones read back
            assert keyring_backend.get_password(legacy, user) is None
        assert store.db.execute(
            "SELECT count(*) FROM ssh_keys WHERE keyring_name IS NOT NULL"
        ).fetchone() == (0,)
        assert vault.move_legacy_secrets() == 0  # done once

        # release settings and history now follow the host's id
        host_id = HostRegistry(store).host("gpu1").id
        assert store.db.execute("SELECT host_id, config FROM release_configs").fetchall() == [
            (host_id, '{"project": "proj"}')
        ]
        assert store.db.execute("SELECT host_id FROM release_records").fetchall() == [(host_id,)]
    finally:
        store.close()


def test_a_failed_move_keeps_the_old_entry_and_retries(app_paths, keyring_backend, cleanup):
    legacy = f"{SERVICE}-legacy-{uuid.uuid4().hex[:8]}"
    keyring_backend.set_password(legacy, "ssh-key:vast.ai", "SECRET")
    cleanup.append((legacy, "ssh-key:vast.ai"))
    _old_store(app_paths.database)
    store = Store(app_paths.database)
    try:

        class Refusing:
            """The real keyring, but writes fail (a keyring that locks mid-way)."""

            def get_password(self, service, user):
                return keyring_backend.get_password(service, user)

            def set_password(self, service, user, secret):
                from keyring.errors import PasswordSetError

                raise PasswordSetError("locked")

            def delete_password(self, service, user):
                keyring_backend.delete_password(service, user)

        vault = KeyVault(store, app_paths.data_dir / "keys", Refusing(), legacy_service=legacy)
        with pytest.raises(Exception, match="keyring"):
            vault.private_text("vast.ai")
        assert keyring_backend.get_password(legacy, "ssh-key:vast.ai") == "SECRET"  # kept

        vault = KeyVault(store, app_paths.data_dir / "keys", keyring_backend, legacy_service=legacy)
        cleanup.append((vault.service, f"ssh-key:{vault.key('vast.ai').platform_id}"))
        assert vault.private_text("vast.ai") == "SECRET"
        assert keyring_backend.get_password(legacy, "ssh-key:vast.ai") is None
    finally:
        store.close()


def test_two_data_dirs_never_share_keyring_entries(tmp_path, keyring_backend):
    vaults = []
    for name in ("one", "two"):
        store = Store(tmp_path / name / "companion.sqlite3")
        vaults.append(KeyVault(store, tmp_path / name / "keys", keyring_backend))
    try:
        a, b = vaults
        assert a.service != b.service and a.service.startswith(f"{SERVICE}/")
        ka, kb = a.generate("vast.ai"), b.generate("vast.ai")
        assert ka.platform_id == kb.platform_id  # same id in each database...
        assert a.private_text("vast.ai") != b.private_text("vast.ai")  # ...its own secret
        a.delete("vast.ai")
        assert b.private_text("vast.ai")  # deleting in one data dir leaves the other's key
    finally:
        for v in vaults:
            for k in v.keys():
                v.delete(k.platform)
            v.store.close()


def test_renaming_a_platform_keeps_its_key(store, vault):
    registry = HostRegistry(store)
    p = registry.save_platform(Platform("vast.ai", "", "second", "USD"))
    stored = vault.generate("vast.ai")
    text = vault.private_text("vast.ai")
    registry.save_platform(replace(p, name="Vast"))
    assert vault.key("vast.ai") is None
    renamed = vault.key("Vast")
    assert renamed is not None and renamed.fingerprint == stored.fingerprint
    assert vault.private_text("Vast") == text
    assert [str(k.fingerprint) for k in vault.load_pkeys("Vast")]  # usable for connections


def test_renaming_a_host_ends_its_own_meter_and_keeps_its_history(store, manual_clock):
    registry = HostRegistry(store)
    ledger = SpendLedger(store, clock=manual_clock)
    p = registry.save_platform(Platform("vast.ai", "", "second", "USD"))
    a = registry.save_host(Host("gpu-a", "10.0.0.1", 22, "root", p.id))
    b = registry.save_host(Host("gpu-b", "10.0.0.2", 22, "root", p.id))
    ra = ledger.start_rental(p.id, "2", host_id=a.id)
    rb = ledger.start_rental(p.id, "3", host_id=b.id)
    manual_clock.advance(hours=1)
    release = StoreReleaseLedger(store, ledger)
    release.record_release(ReleaseRecord("gpu-a", "failed", manual_clock.now()))

    a2 = registry.save_host(replace(a, alias="gpu-a-renamed"))
    # the old name now belongs to nobody; a new host may even take it
    registry.save_host(Host("gpu-a", "10.0.0.3", 22, "root", p.id))
    assert ledger.running_for_alias("gpu-a") is None
    assert ledger.running_for_alias("gpu-a-renamed").id == ra.id

    record = ReleaseRecord("gpu-a-renamed", "release", manual_clock.now())
    release.end_meter(a2, record)
    release.record_release(record)
    assert ledger.rental(ra.id).ended_at == manual_clock.now()
    assert ledger.rental(rb.id).ended_at is None  # the other host keeps billing
    assert [r.kind for r in release.history("gpu-a-renamed")] == ["release", "failed"]
    assert release.history("gpu-a") == []
    assert release.meter_ends("gpu-a-renamed") == [manual_clock.now()]
    assert ledger.rental(ra.id).cost_at(manual_clock.now()) == 200  # $2.00 for the hour
    assert ra.started_at == manual_clock.now() - timedelta(hours=1)
