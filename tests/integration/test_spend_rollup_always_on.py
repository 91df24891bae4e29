"""After an upgrade or a big import the ledger's hourly rollup lags behind (its triggers mark
what each write touched); the always-on loop of the app as built derives it, off the GUI thread,
so the Spend chart and reports go back to their quick path without anybody opening them."""

from __future__ import annotations

import time
from datetime import timedelta

from gpu_companion.core.common.clock import ManualClock
from gpu_companion.core.spend import reports
from gpu_companion.core.spend.ledger import SpendLedger
from tests.unit.core.spend.test_rollup import NOW, UTC, _by_rentals, _fill


def _stale_rows(store) -> int:  # type: ignore[no-untyped-def]
    return int(store.db.execute("SELECT COUNT(*) FROM spend_stale").fetchone()[0])


def test_the_always_on_loop_derives_a_bulk_writes_rollup(app_paths, keyring_backend) -> None:  # type: ignore[no-untyped-def]
    from gpu_companion.services import build_services

    s = build_services(app_paths)
    try:
        _fill(s.store, 600)  # bulk rows, as an import writes them: the triggers mark them stale
        assert _stale_rows(s.store) > 500
        assert s.start_always_on(every_s=3600)  # its first round runs at once
        deadline = time.monotonic() + 60
        while _stale_rows(s.store) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _stale_rows(s.store) == 0
        assert s.store.db.execute("SELECT COUNT(*) FROM spend_hours").fetchone()[0] > 0
        ledger = SpendLedger(s.store, ManualClock(NOW), tz=UTC)
        year = (NOW - timedelta(days=365), NOW)
        assert reports.chart_data(ledger, *year, "week") == _by_rentals(ledger, *year, "week")
    finally:
        s.close()
