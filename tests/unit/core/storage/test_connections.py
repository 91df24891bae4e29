"""A thread's connection does not outlive the thread: a tray app that runs for days with short
worker threads keeps its open files flat."""

from __future__ import annotations

import gc
import os
import threading

from gpu_companion.core.storage.store import Store


def _fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_200_short_threads_leave_no_connections_open(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    try:
        store.set_setting("x", "main")
        start = _fds()
        seen = []
        threads = []  # kept: closing must not wait for the Thread objects to be collected
        # 8 at a time: SQLite may keep the descriptors of closed connections for reuse while
        # other connections hold the file's locks, up to the most open at once
        for _ in range(25):
            batch = [
                threading.Thread(target=lambda: seen.append(store.get_setting("x")))
                for _ in range(8)
            ]
            for t in batch:
                t.start()
            for t in batch:
                t.join()
            threads += batch
        assert seen == ["main"] * 200
        assert store.open_connections() == 1  # the main thread's
        assert _fds() <= start + 10, (start, _fds())
    finally:
        store.close()
    assert store.open_connections() == 0


def test_close_closes_the_connections_of_threads_still_running(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    opened, release = threading.Event(), threading.Event()
    results = []

    def worker():
        store.get_setting("x")
        opened.set()
        release.wait(10)
        try:
            store.db.execute("SELECT 1")
        except Exception as exc:  # noqa: BLE001
            results.append(exc)

    t = threading.Thread(target=worker)
    t.start()
    assert opened.wait(10)
    assert store.open_connections() == 2
    store.close()
    assert store.open_connections() == 0
    release.set()
    t.join()
    assert results == []  # after close() a thread's next query opens a fresh one, as before
    assert store.open_connections() == 0  # and that one went with its thread


def test_a_connection_held_past_its_thread_stays_open_until_let_go(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    try:
        kept = []
        t = threading.Thread(target=lambda: kept.append(store.db))
        t.start()
        t.join()
        assert store.open_connections() == 2  # still usable by whoever holds it
        assert kept[0].execute("SELECT 1").fetchone() == (1,)
        kept.clear()
        gc.collect()
        assert store.open_connections() == 1
    finally:
        store.close()


def test_a_thread_can_use_the_store_again_after_close(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    store.set_setting("x", "1")
    store.close()
    try:
        assert store.get_setting("x") == "1"  # a fresh connection, as before
        assert store.open_connections() == 1
    finally:
        store.close()
