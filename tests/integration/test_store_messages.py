"""A database the app cannot use says why: a full disk, a read-only data folder, a newer or
corrupt file; the `ledger` and `inspect` commands print the window's message, not a traceback.

The full disk and the read-only folder are real: a 1 MiB tmpfs (mounting needs root; elsewhere
these two tests skip and say so).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_companion.core.storage.store import Store, StoreError
from tests.conftest import missing_component


def _mount_tmpfs(path: Path, size: str = "1m") -> None:
    if os.geteuid() != 0:
        missing_component("mounting a small tmpfs needs root")
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        missing_component(f"cannot mount a tmpfs here: {done.stderr.strip()}")


@pytest.fixture
def small_disk(tmp_path):
    disk = tmp_path / "disk"
    _mount_tmpfs(disk)
    yield disk
    subprocess.run(["umount", "-l", str(disk)], check=False)


def _fill(disk: Path) -> None:
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass  # ENOSPC: the disk is full
    finally:
        os.close(fd)


def test_full_disk_says_the_disk_is_full_and_keeps_what_was_saved(small_disk):
    store = Store(small_disk / "data" / "companion.sqlite3")
    try:
        store.set_setting("kept", "yes")
        _fill(small_disk)
        with pytest.raises(StoreError) as err:
            for n in range(64):  # enough to need new pages on the full disk
                store.set_setting(f"big{n}", "x" * 65536)
        text = str(err.value)
        assert "is full" in text and "rollback" not in text.lower()
        assert str(small_disk / "data") in text
        (small_disk / "filler").unlink()
        assert store.get_setting("kept") == "yes"
        store.set_setting("after", "space freed")  # usable again once there is room
        assert store.get_setting("after") == "space freed"
    finally:
        store.close()


def test_read_only_data_folder_says_it_is_read_only(small_disk):
    data = small_disk / "data"
    Store(data / "companion.sqlite3").close()
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    with pytest.raises(StoreError) as err:
        store = Store(data / "companion.sqlite3")
        try:
            store.set_setting("x", "y")
        finally:
            store.close()
    assert "read-only" in str(err.value) and str(data) in str(err.value)


def test_read_only_data_folder_for_a_new_database(small_disk):
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    with pytest.raises(StoreError) as err:
        Store(small_disk / "companion.sqlite3")
    assert "read-only" in str(err.value)


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPU_COMPANION_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "gpu_companion", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


def _window_message(db: Path) -> str:
    """What the window shows: the StoreError raised while the app builds its services."""
    with pytest.raises(StoreError) as err:
        Store(db)
    return str(err.value)


@pytest.mark.parametrize("damage", ["newer", "corrupt"])
@pytest.mark.parametrize(
    "command",
    [
        ("ledger", "report"),
        ("inspect", "local"),
        ("hosts", "list"),
        ("fleet", "export", "--format", "ansible"),
        ("run", "--list"),
        ("ssh-config", "--print"),
        ("transfer", "upload", "box", "/etc/hostname", "/workspace"),
        ("tunnel", "box", "8888"),
        ("open", "--terminal", "box"),
        ("watch",),
    ],
)
def test_commands_print_the_windows_message(tmp_path, damage, command):
    home = tmp_path / "home"
    db = home / "data" / "companion.sqlite3"
    db.parent.mkdir(parents=True)
    if damage == "newer":
        Store(db).close()
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA user_version = 999")
        conn.close()
    else:
        db.write_bytes(b"this is not a database " * 200)
    before = db.read_bytes()
    expected = _window_message(db)
    out = _cli(home, *command)
    assert out.returncode == 2
    assert out.stderr.strip() == f"error: {expected}"
    assert "Traceback" not in out.stderr
    assert db.read_bytes() == before  # the file was not changed
