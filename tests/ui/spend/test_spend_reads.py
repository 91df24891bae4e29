"""The Spend page stays instant on a year of use: it reads the ledger only off the GUI thread,
builds the Chart and Experiments tabs when first shown, coalesces refreshes, and measures its
tables' columns when their rows change rather than on every layout."""

from __future__ import annotations

import threading
from datetime import timedelta, timezone

import pytest
from PySide6.QtCore import Qt

import gpu_companion.ui.spend.page as spend_page
from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.ui.common.models import RowTableModel
from gpu_companion.ui.spend.page import CHART_TAB, EXPERIMENTS_TAB, HISTORY_TAB, SpendPage
from tests.ui.store_use import StoreUse


def _ledger(ctx, manual_clock):  # type: ignore[no-untyped-def]
    """Two platforms, tagged rentals with outcomes, one running, a charge and a budget."""
    ctx.ledger.clock = manual_clock
    ctx.ledger.tz = timezone.utc
    vast = ctx.registry.save_platform(Platform("vast.ai", "", "second", "USD"))
    lam = ctx.registry.save_platform(Platform("Lambda", "", "minute", "USD"))
    host = ctx.registry.save_host(Host("gpu1", "192.0.2.1", 22, "root", vast.id, "RTX 4090", 2))
    start = manual_clock.now() - timedelta(days=5)
    for i in range(6):
        r = ctx.ledger.start_rental(
            (vast, lam)[i % 2].id,
            "1.50",
            gpu_model=("RTX 4090", "H100")[i % 2],
            tag=("sweep", "lora")[i % 2],
            started_at=start + timedelta(hours=7 * i),
        )
        ctx.ledger.end_rental(r.id, at=r.started_at + timedelta(hours=3))
        if i < 2:
            ctx.ledger.update_rental(r.id, outcome="success")
    ctx.ledger.start_rental(vast.id, "0.80", host_id=host.id, gpu_model="RTX 4090", gpu_count=2)
    ctx.ledger.add_charge(vast.id, "storage", "4.20")
    ctx.budgets.set_budget("month", "100", "USD")
    return vast


@pytest.fixture
def page(ctx, nav, manual_clock, qtbot):  # type: ignore[no-untyped-def]
    """The page alone (no window, no tray), on show."""
    _ledger(ctx, manual_clock)
    p = SpendPage(ctx, nav)
    qtbot.addWidget(p)
    p.resize(1000, 650)
    p.show()
    _read(p, qtbot)
    return p


def _read(page, qtbot):  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: not page.busy(), timeout=10000)


def test_the_ledger_is_read_off_the_gui_thread_only(ctx, nav, manual_clock, qtbot, monkeypatch):
    vast = _ledger(ctx, manual_clock)
    use = StoreUse(monkeypatch)
    p = SpendPage(ctx, nav)  # built, then refreshed, filtered, ticked, each tab shown
    qtbot.addWidget(p)
    p.show()
    _read(p, qtbot)
    p.refresh()
    _read(p, qtbot)
    p.f_platform.setCurrentIndex(p.f_platform.findData(vast.id))
    p.f_platform.activated.emit(p.f_platform.currentIndex())
    _read(p, qtbot)
    for _ in range(10):
        p.tick()
    _read(p, qtbot)
    for tab in (CHART_TAB, EXPERIMENTS_TAB):
        p.tabs.setCurrentIndex(tab)
        _read(p, qtbot)
    assert use.on_gui == [], use.on_gui[0]
    assert use.off_gui  # what the page shows was read, in workers
    assert p.running_model.rowCount() == 1 and p.history_model.rowCount() == 4  # vast.ai's
    assert "burning $0.80/h" in p.summary.text() and len(p.budget_bars) == 1
    assert p.experiments is not None and p.experiments.model.rowCount() == 2
    assert p.chart_tab is not None and len(p.chart_tab.chart.bars) == 2


def test_the_chart_and_experiments_are_built_when_first_shown(page, qtbot):
    assert page.chart_tab is None and page.experiments is None  # nothing built, nothing summed
    assert page.chart_place.layout().count() == 0
    page.refresh()
    _read(page, qtbot)
    assert page.chart_tab is None and page.experiments is None  # a refresh reads the tab on show
    page.tabs.setCurrentIndex(CHART_TAB)
    assert page.chart_tab is not None and page.experiments is None
    _read(page, qtbot)
    assert page.chart_tab.chart.note.text() == "30 periods, $31.20 in all"
    assert page.chart_tab.currency.currentText() == "USD"
    page.tabs.setCurrentIndex(EXPERIMENTS_TAB)
    _read(page, qtbot)
    assert page.experiments is not None
    rows = {e.tag: (e.runs, e.successes) for e in page.experiments.model.rows()}
    assert rows == {"lora": (3, 1), "sweep": (3, 1)}
    chart = page.chart_tab
    page.tabs.setCurrentIndex(CHART_TAB)
    assert page.chart_tab is chart  # built once


def test_a_refresh_reads_only_the_tab_on_show(page, ctx, qtbot):
    page.tabs.setCurrentIndex(CHART_TAB)
    _read(page, qtbot)
    vast = ctx.registry.platforms()[1]
    ctx.ledger.start_rental(vast.id, "0.10", tag="new")  # the page on show follows it
    qtbot.waitUntil(lambda: page.running_model.rowCount() == 2)
    _read(page, qtbot)
    assert page.f_tag.findText("new") > 0  # the filters, the meters and the totals are read
    assert page.history_model.rowCount() == 7  # the hidden history is not
    page.tabs.setCurrentIndex(HISTORY_TAB)
    _read(page, qtbot)
    assert page.history_model.rowCount() == 8


def test_refreshes_while_a_read_runs_coalesce_into_one_more(page, ctx, qtbot, monkeypatch):
    gate = threading.Event()
    read = spend_page.read_view

    def held(*args):  # type: ignore[no-untyped-def]
        """The real read, once the test lets it go."""
        gate.wait(10)
        return read(*args)

    monkeypatch.setattr(spend_page, "read_view", held)
    before = page.reads.started
    page.refresh()
    qtbot.waitUntil(lambda: page.reads.started == before + 1)  # the first read, held
    vast = ctx.registry.platforms()[1]
    assert vast.name == "vast.ai"

    def changes() -> None:  # a provider sync elsewhere: every change posts a refresh
        for _ in range(20):
            ctx.ledger.start_rental(vast.id, "0.10")

    writer = threading.Thread(target=changes)
    writer.start()
    writer.join()
    for _ in range(20):
        page.refresh()
        page.tick()
    qtbot.wait(50)
    assert page.reads.started == before + 1 and page.busy()  # asked for, not queued
    gate.set()
    _read(page, qtbot)
    assert page.reads.started == before + 2  # one more read, for all of them
    assert page.running_model.rowCount() == 21  # and it saw every change


def test_a_change_elsewhere_refreshes_the_page_on_show_only(page, ctx, qtbot):
    vast = ctx.registry.platforms()[1]
    writer = threading.Thread(target=lambda: ctx.ledger.start_rental(vast.id, "0.10"))
    writer.start()
    writer.join()
    qtbot.waitUntil(lambda: page.running_model.rowCount() == 2)
    page.hide()
    before = page.reads.started
    ctx.ledger.start_rental(vast.id, "0.20")
    qtbot.wait(50)
    assert page.reads.started == before and page.running_model.rowCount() == 2
    page.show()  # the window restored from the tray: what changed meanwhile is read
    qtbot.waitUntil(lambda: page.running_model.rowCount() == 3)
    assert page.reads.started == before + 1


def test_showing_the_filled_page_does_not_measure_its_tables(
    ctx, nav, manual_clock, qtbot, monkeypatch
):
    measured: list[int] = []
    data = RowTableModel.data

    def counted(model, index, role=Qt.ItemDataRole.DisplayRole):  # type: ignore[no-untyped-def]
        if role == Qt.ItemDataRole.SizeHintRole and model is page.history_model:
            measured.append(index.row())
        return data(model, index, role)

    # before the models exist: Qt's calls into Python find the method when first made
    monkeypatch.setattr(RowTableModel, "data", counted)
    _ledger(ctx, manual_clock)
    page = SpendPage(ctx, nav)  # built hidden, as after the first paint, and filled
    qtbot.addWidget(page)
    _read(page, qtbot)
    assert page.history_model.rowCount() == 7 and measured  # measured once, as filled
    measured.clear()
    page.show()
    page.resize(900, 600)
    qtbot.wait(20)
    assert measured == []  # shown and laid out with the widths measured when it was filled
    page.f_platform.setCurrentIndex(page.f_platform.findText("Lambda"))
    page.f_platform.activated.emit(page.f_platform.currentIndex())
    _read(page, qtbot)
    assert page.history_model.rowCount() == 3
    assert measured  # new rows: measured once
