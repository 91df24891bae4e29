"""The Transfers page after a year of use (issue 30): it shows every unfinished job and only the
newest finished ones at first (the whole table took 0.5 s to read and longer to size on the GUI
thread), and pages on to older ones on request."""

from __future__ import annotations

from gpu_companion.core.hosts.registry import Host


def test_first_show_loads_at_most_a_page_of_finished_jobs(ctx, nav, qtbot):  # type: ignore[no-untyped-def]
    from gpu_companion.ui.common import worker
    from gpu_companion.ui.transfers.page import FINISHED_PAGE, TransfersPage

    ctx.registry.save_host(Host("gpu1", "10.0.0.1"))
    finished = 2 * FINISHED_PAGE + 50
    rows = [("done", float(i)) for i in range(finished)]
    rows[10:10] = [("paused", 0.0)]  # an old job still to resume: always shown
    with ctx.store.transaction() as db:
        db.conn.executemany(
            "INSERT INTO transfer_jobs (host_alias, direction, local_path, remote_path, state, "
            "created_at, finished_at) VALUES ('gpu1', 'upload', '/l', '/r', ?, ?, ?)",
            [(state, at, at if state == "done" else None) for state, at in rows],
        )
    page = TransfersPage(ctx, nav)
    qtbot.addWidget(page)
    page.show()
    try:
        assert page.model.rowCount() == FINISHED_PAGE + 1
        assert sum(not j.state.finished for j in page.model.jobs()) == 1
        assert page.older.isVisible()
        assert f"({finished - FINISHED_PAGE} more)" in page.older.text()
        page.older.click()
        assert page.model.rowCount() == 2 * FINISHED_PAGE + 1
        page.older.click()
        assert page.model.rowCount() == finished + 1
        assert not page.older.isVisible()
        ids = [j.id for j in page.model.jobs()]
        assert ids == sorted(ids)
    finally:
        page.stop()
        worker.wait_all()
