"""The Spend page as a user meets it: start and stop a meter, live cost, filters, chart, CSV."""

from datetime import timedelta, timezone

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox

from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.ui.spend.dialogs import BudgetDialog, OutcomeDialog, StartRentalDialog


def _page(window, ctx, manual_clock, qtbot):
    ctx.ledger.clock = manual_clock
    ctx.ledger.tz = timezone.utc
    ctx.store.set_setting("alerts.quiet_hour", "")
    p = ctx.registry.save_platform(Platform("vast.ai", "", "minute", "USD"))
    ctx.registry.save_host(Host("vast-4090", "ssh4.vast.ai", 41022, "root", p.id, "RTX 4090", 2))
    page = window.navigate("spend")
    _read(page, qtbot)
    return page, p


def _read(page, qtbot):
    """The page reads the ledger off the GUI thread: wait until what it shows is in."""
    qtbot.waitUntil(lambda: not page.busy(), timeout=10000)


def _cell(model, row, col):
    return model.data(model.index(row, col), Qt.ItemDataRole.DisplayRole)


def test_empty_until_a_platform_exists(window, qtbot):
    page = window.navigate("spend")
    _read(page, qtbot)
    assert page.stack.currentWidget() is page.empty


def test_start_a_rental_by_hand_watch_it_meter_and_stop_it(
    window, ctx, manual_clock, qtbot, qtmodeltester, monkeypatch
):
    page, p = _page(window, ctx, manual_clock, qtbot)
    assert page.stack.currentIndex() == 1
    dialog = StartRentalDialog(ctx, page)
    qtbot.addWidget(dialog)
    assert dialog.host.currentText() == "vast-4090" and dialog.gpu_model.text() == "RTX 4090"
    dialog.rate.setText("abc")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert "not a number" in dialog.error.text() and not dialog.error.isHidden()
    dialog.rate.setText("1.20")
    dialog.runtime.setValue(3)
    dialog.tag.setText("lora-a")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert dialog.result() == dialog.DialogCode.Accepted
    page.refresh()
    _read(page, qtbot)

    model = page.running_model
    qtmodeltester.check(model)
    assert model.rowCount() == 1
    assert _cell(model, 0, 2) == "2 × RTX 4090" and _cell(model, 0, 6) == "$0.00"
    manual_clock.advance(minutes=90, seconds=5)  # 91 started minutes at $1.20/h
    changed = []
    model.dataChanged.connect(lambda a, b: changed.append((a.column(), b.column())))
    page.tick()
    assert changed == [(5, 6)]
    assert (_cell(model, 0, 5), _cell(model, 0, 6)) == ("1 h 30 min", "$1.82")
    assert page.meter.isActive()  # the page is on show: the meter ticks
    assert "burning $1.20/h" in page.summary.text()
    for _ in range(9):  # every 10 s the totals are read again
        page.tick()
    _read(page, qtbot)
    assert page.summary.text().startswith("Today $1.82 · this month $1.82")

    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    page.buttons["stop"].click()
    _read(page, qtbot)
    assert model.rowCount() == 0
    (r,) = ctx.ledger.history()
    assert (r.cost_minor, r.end_reason) == (182, "stopped on the Spend page")
    assert "nothing billing now" in page.summary.text()
    window.navigate("hosts")
    assert not page.meter.isActive()


def test_history_filters_experiments_budget_and_chart(
    window, ctx, manual_clock, qtbot, qtmodeltester
):
    page, p = _page(window, ctx, manual_clock, qtbot)
    lam = ctx.registry.save_platform(Platform("Lambda", "", "second", "USD"))
    start = manual_clock.now() - timedelta(days=3)
    for i, (pid, gpu, tag) in enumerate(
        [(p.id, "RTX 4090", "a"), (lam.id, "H100", "a"), (p.id, "H100", "b")]
    ):
        r = ctx.ledger.start_rental(
            pid, "2", gpu_model=gpu, tag=tag, started_at=start + timedelta(hours=5 * i)
        )
        ctx.ledger.end_rental(r.id, at=r.started_at + timedelta(hours=2))
    page.refresh()
    _read(page, qtbot)
    qtmodeltester.check(page.history_model)
    assert page.history_model.rowCount() == 3
    page.f_platform.setCurrentIndex(page.f_platform.findText("Lambda"))
    page.f_platform.activated.emit(page.f_platform.currentIndex())
    _read(page, qtbot)
    assert page.history_model.rowCount() == 1
    page.f_platform.setCurrentIndex(0)
    page.f_gpu.setCurrentIndex(page.f_gpu.findText("H100"))
    page.f_gpu.activated.emit(0)
    _read(page, qtbot)
    assert page.history_model.rowCount() == 2
    page.f_tag.setCurrentIndex(page.f_tag.findText("b"))
    page.f_tag.activated.emit(0)
    _read(page, qtbot)
    assert page.history_model.rowCount() == 1
    assert page.history_total.text() == "1 rentals: $4.00"
    page.f_period.setCurrentIndex(page.f_period.findText("Last month"))
    page.f_period.activated.emit(0)
    _read(page, qtbot)
    assert page.history_model.rowCount() == 0

    # outcome on one rental -> cost per success
    page.f_period.setCurrentIndex(page.f_period.findText("This month"))
    page.f_tag.setCurrentIndex(page.f_tag.findText("a"))
    page.f_gpu.setCurrentIndex(0)
    page.f_tag.activated.emit(0)
    _read(page, qtbot)
    page.history_view.selectRow(0)
    dialog = OutcomeDialog(ctx, page.history_model.row(0), page)
    qtbot.addWidget(dialog)
    dialog.outcome.setCurrentIndex(1)  # success
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    page.refresh()
    page.tabs.setCurrentIndex(2)  # the Experiments tab: built and summed when shown
    # summed off the GUI thread: the success counts once the new sum is in
    _read(page, qtbot)
    exp_model = page.experiments.model
    qtmodeltester.check(exp_model)
    assert [_cell(exp_model, 0, c) for c in range(5)] == ["a", "2", "1", "$8.00", "$8.00"]
    assert _cell(exp_model, 1, 4) == "no success yet"
    page.tabs.setCurrentIndex(0)

    budget = BudgetDialog(ctx, page)
    qtbot.addWidget(budget)
    budget.amount.setText("-3")
    budget.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert "more than zero" in budget.error.text()
    budget.amount.setText("20")
    budget.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    page.refresh()
    page.refresh()
    _read(page, qtbot)
    page.refresh()
    _read(page, qtbot)
    assert page.budget_box.count() == 1
    (bar,) = page.budget_bars
    assert bar.value() == 60 and bar.text().startswith("Monthly budget (all platforms): 60%")

    page.tabs.setCurrentIndex(1)
    _read(page, qtbot)
    chart = page.chart_tab.chart
    assert len(chart.bars) == 2
    assert chart.note.text() == "30 periods, $12.00 in all"  # format_money


def test_alerts_dialog_sets_the_quiet_hour_and_mutes_one_rental(window, ctx, manual_clock, qtbot):
    from gpu_companion.ui.spend.dialogs import AlertsDialog

    page, p = _page(window, ctx, manual_clock, qtbot)
    r = ctx.ledger.start_rental(p.id, "1")
    dialog = AlertsDialog(ctx, r, page)
    qtbot.addWidget(dialog)
    dialog.quiet.setText("half past ten")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert "is not a time like 23:00" in dialog.error.text()
    dialog.quiet.setText("22:30")
    dialog.mute.setChecked(True)
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    assert dialog.result() == dialog.DialogCode.Accepted
    assert ctx.alerts.quiet_hour.strftime("%H:%M") == "22:30"
    assert ctx.alerts.muted(r.id, "overnight") and ctx.alerts.suppressed(r.id, "idle")
