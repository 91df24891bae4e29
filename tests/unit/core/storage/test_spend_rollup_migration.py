"""Migration 0013 (the hourly spend rollup) on a database of the build before it: quick (it
only marks the whole ledger stale), and the rollup derived afterwards holds the old rows."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

from gpu_companion.core.common.clock import ManualClock
from gpu_companion.core.spend import reports, rollup
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.metering import period_of
from gpu_companion.core.storage.store import Store

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "schema"
UTC = timezone.utc
H10 = int(datetime(2025, 1, 1, 10, tzinfo=UTC).timestamp()) // 3600


def test_the_v12_ledger_is_marked_stale_then_derived(tmp_path):  # type: ignore[no-untyped-def]
    path = tmp_path / "companion.sqlite3"
    shutil.copyfile(FIXTURES / "v12.sqlite3", path)
    store = Store(path)
    try:
        db = store.db
        assert "0013_spend_rollup" in store.applied_migrations()
        # the fixture's rental (10:00-12:00, 80) and its charge (12:00, 5): one range, nothing
        # computed yet
        assert db.execute("SELECT lo, hi FROM spend_stale").fetchall() == [
            ("2025-01-01T10:00:00+00:00", "2025-01-01T12:00:00+00:00")
        ]
        assert db.execute("SELECT COUNT(*) FROM spend_hours").fetchone()[0] == 0
        triggers = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='trigger'")}
        assert len(triggers) == 6
        assert rollup.catch_up(store)
        assert db.execute("SELECT * FROM spend_hours ORDER BY hour").fetchall() == [
            (H10, 1, "USD", 1, 3600, 40, 0),
            (H10 + 1, 1, "USD", 0, 3600, 40, 0),
            (H10 + 2, 1, "USD", 0, 0, 0, 5),
        ]
        assert db.execute("SELECT COUNT(*) FROM spend_stale").fetchone()[0] == 0
        ledger = SpendLedger(store, ManualClock(datetime(2025, 2, 1, tzinfo=UTC)), tz=UTC)
        start, end = period_of(datetime(2025, 1, 1, tzinfo=UTC), "month", UTC)
        rep = reports.report(ledger, start, end)
        assert rep == reports._report_by_rentals(ledger, start, end)
        assert [(ln.rentals, ln.seconds, ln.total_minor) for ln in rep.lines] == [(1, 7200, 85)]
        assert reports.chart_data(ledger, start, end, "day")["2025-01-01"] == {
            ("vast.ai", "USD"): 85
        }
    finally:
        store.close()


def test_a_span_taken_before_the_cut_to_whole_seconds_is_mended(tmp_path):  # type: ignore[no-untyped-def]
    """An import before this build stored 7199 s for 10:00-12:00 (instants with fractions of a
    second, cut when stored): the migration makes it the stored instants' 7200 s."""
    import sqlite3

    path = tmp_path / "companion.sqlite3"
    shutil.copyfile(FIXTURES / "v12.sqlite3", path)
    raw = sqlite3.connect(path)
    raw.execute("UPDATE rentals SET span_s = 7199")
    raw.commit()
    raw.close()
    store = Store(path)
    try:
        assert store.db.execute("SELECT span_s FROM rentals").fetchall() == [(7200,)]
    finally:
        store.close()
