"""The Monitor page against the harness sshd and a 4-GPU stand-in streaming at 200 ms."""

from __future__ import annotations

import shutil
import time

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.monitor.collector import CollectorConfig, HostState, HostStatus, TimedSample
from gpu_companion.core.monitor.live import Monitor
from gpu_companion.core.monitor.nvsmi import ComputeApp, GpuSample
from gpu_companion.ui.monitor.models import FleetModel, SparkRole

CONFIG = CollectorConfig(interval_ms=200, poll_every_s=1.0, backoff_initial_s=0.2,
                         backoff_max_s=1.0)  # fmt: skip


@pytest.fixture
def monitored(ctx, sshd, standin, harness_client_factory):  # type: ignore[no-untyped-def]
    standin.configure(gpu_count=4, processes=[{"gpu": 2, "pid": 4242, "name": "python train.py",
                                               "used_mib": 30000}])  # fmt: skip
    ctx.registry.save_host(Host("gpu1", "127.0.0.1", sshd.port, sshd.user))
    ctx._monitor = Monitor(harness_client_factory, store=ctx.store, notifier=ctx.notifier,
                           config=CONFIG)  # fmt: skip
    yield ctx
    ctx._monitor.stop()


def _page(window):  # type: ignore[no-untyped-def]
    page = window.navigate("monitor")
    return page


def test_four_curves_grow_and_survive_a_cut_connection(monitored, window, qtbot, sshd):
    page = _page(window)
    page.open_host("gpu1")
    assert page.stack.currentIndex() == 1
    window_combo = page.window_combo
    window_combo.setCurrentIndex(0)  # 1 min
    qtbot.waitUntil(lambda: page.plots.curve_count(0) == 4, timeout=15000)
    qtbot.waitUntil(lambda: page.plots.curve_points(0, 3) >= 3, timeout=10000)
    first = [page.plots.curve_points(0, g) for g in range(4)]
    qtbot.waitUntil(
        lambda: all(page.plots.curve_points(0, g) > first[g] + 2 for g in range(4)), timeout=10000
    )
    assert all(page.plots.curve_count(p) == 4 for p in range(4))
    assert "live" in page.status_label.text()
    streaming_since = time.time()  # a slow first connection under load is not what is tested
    qtbot.waitUntil(lambda: page.values_model.rowCount() == 4, timeout=5000)
    qtbot.waitUntil(lambda: page.process_model.rowCount() == 1, timeout=10000)
    assert page.process_model.data(page.process_model.index(0, 0)) == "2"  # GPU index, not uuid

    sshd.kill_sessions()
    qtbot.waitUntil(lambda: "reconnecting" in page.status_label.text(), timeout=10000)
    qtbot.waitUntil(lambda: "live" in page.status_label.text(), timeout=15000)
    before = page.plots.curve_points(0, 0)
    qtbot.waitUntil(lambda: page.plots.curve_points(0, 0) > before + 3, timeout=10000)

    history = monitored._monitor.history("gpu1")
    for gpu in range(4):
        t, _ = history.series(gpu, 0)
        steps = np.diff(t[t >= streaming_since - 1])
        assert (steps > 0).all(), "a timestamp was repeated or went back"
        gaps = steps[steps > 0.6]
        assert len(gaps) == 1, steps  # the reconnection, nothing else lost
        assert (steps[steps <= 0.6] > 0.1).all(), steps
    page.stop()


def test_fleet_view_rows_sparklines_and_double_click(monitored, window, qtbot, qtmodeltester):
    page = _page(window)
    model = page.fleet_model
    assert model.aliases() == ["local", "gpu1"]
    qtbot.waitUntil(lambda: len(model.row_for("gpu1").spark) >= 3, timeout=15000)
    qtmodeltester.check(model)
    row = model.aliases().index("gpu1")
    cells = [model.data(model.index(row, c)) for c in range(model.columnCount())]
    assert cells[:3] == ["gpu1", "live", "4"]
    assert cells[3].endswith(" %") and "GiB" in cells[5] and cells[7].endswith(" W")
    assert len(model.data(model.index(row, FleetModel.SPARK_COLUMN), SparkRole)) >= 3
    qtbot.waitUntil(lambda: model.row_for("local").status.state != HostState.CONNECTING)
    if shutil.which("nvidia-smi") is None:  # this computer, plainly without a driver
        assert model.data(model.index(0, 1)) == "no NVIDIA driver"
        tip = model.data(model.index(0, 1), Qt.ItemDataRole.ToolTipRole)
        assert "nvidia-smi is not installed on this computer" in tip
    page.fleet_view.grab()  # paints the sparkline delegate
    rect = page.fleet_view.visualRect(model.index(row, 0))
    qtbot.mouseClick(page.fleet_view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(page.fleet_view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert page.selected() == "gpu1" and page.stack.currentIndex() == 1
    page.stop()


def test_window_choice_and_hover_readout(monitored, window, qtbot):
    page = _page(window)
    page.open_host("gpu1")
    qtbot.waitUntil(lambda: page.plots.curve_points(0, 0) >= 3, timeout=15000)
    for i, seconds in enumerate((60.0, 600.0, 3600.0, 86400.0)):
        page.window_combo.setCurrentIndex(i)
        assert page.plots.window_s == seconds
        view = page.plots.plots[0].vb.viewRange()[0]
        assert view[1] - view[0] == pytest.approx(seconds, rel=0.01)
    page.window_combo.setCurrentIndex(0)
    plot = page.plots.plots[3]
    vb = plot.vb
    (x0, x1), (y0, y1) = vb.viewRange()
    scene = vb.mapViewToScene(QPointF(x1 - 2, (y0 + y1) / 2))
    page.plots._hover(plot, scene)
    text = page.plots.readout.text()
    assert "Power / limit" in text and "GPU 0:" in text and "GPU 3:" in text and "/ 700.0 W" in text
    page.stop()


def test_value_and_process_models_pass_the_model_tester(ctx, qtmodeltester):
    from gpu_companion.ui.common.models import RowTableModel
    from gpu_companion.ui.monitor.models import gpu_value_columns, process_columns

    values = RowTableModel(gpu_value_columns())
    values.set_rows([GpuSample(index=0, name="H100", utilization_gpu=None, memory_used_mib=1,
                               memory_total_mib=2)])  # fmt: skip
    qtmodeltester.check(values)
    assert values.data(values.index(0, 2)) == "—"  # no reading, not 0
    procs = RowTableModel(process_columns())
    procs.set_rows([(0, ComputeApp(pid=None, process_name=None, used_memory_mib=None))])
    qtmodeltester.check(procs)
    assert procs.data(procs.index(0, 1)) == "hidden"
    fleet = FleetModel()
    fleet.set_aliases(["a", "b"])
    fleet.add_samples("a", (TimedSample(1.0, GpuSample(index=0, utilization_gpu=50)),))
    fleet.set_status("b", HostStatus(HostState.AUTH_FAILED, "refused", "fix it"))
    qtmodeltester.check(fleet)
    tip = fleet.data(fleet.index(1, 1), Qt.ItemDataRole.ToolTipRole)
    assert tip == "auth failed\nrefused\nfix it"


def test_a_gpu_needing_a_reset_is_shown_on_its_fleet_row_and_gpu_row(
    monitored, window, qtbot, standin
):
    standin.configure(gpu_count=4, bad_gpus={"2": "reset"})
    page = _page(window)
    model = page.fleet_model
    row = model.aliases().index("gpu1")
    qtbot.waitUntil(lambda: bool(model.row_for("gpu1").faults), timeout=15000)
    model.flush()
    assert model.data(model.index(row, 1)) == "live · GPU 2 needs a reset"
    assert model.data(model.index(row, 2)) == "4"
    tip = model.data(model.index(row, 1), Qt.ItemDataRole.ToolTipRole)
    assert "GPU 2 has stopped working and needs a reset." in tip
    page.open_host("gpu1")
    first = [page.plots.curve_points(0, g) for g in (0, 1, 3)]
    qtbot.waitUntil(lambda: all(page.plots.curve_points(0, g) > first[i] + 2
                                for i, g in enumerate((0, 1, 3))), timeout=15000)  # fmt: skip
    values = page.values_model
    qtbot.waitUntil(lambda: values.rowCount() == 4, timeout=5000)
    state_col = values.columnCount() - 1
    states = [values.data(values.index(r, state_col)) for r in range(4)]
    assert states == ["ok", "ok", "needs a reset", "ok"]
    assert values.data(values.index(2, 2)) == "—"  # no utilisation shown for it, not its last one
    standin.configure(gpu_count=4)  # the GPU was reset: its row streams again
    qtbot.waitUntil(lambda: not model.row_for("gpu1").faults, timeout=15000)
    page.stop()


def _ticks(monitor, alias, start, n, gpus=8):  # type: ignore[no-untyped-def]
    """`n` 1 Hz ticks of `gpus` GPUs through the collectors' own path, off the GUI thread."""
    import threading

    from gpu_companion.core.monitor.collector import SamplesEvent

    def feed() -> None:
        for i in range(n):
            monitor.ingest(SamplesEvent(alias, tuple(
                TimedSample(start + i, GpuSample(index=g, utilization_gpu=(i + g) % 100,
                                                 memory_used_mib=1000, memory_total_mib=80000,
                                                 temperature_c=60, power_draw_w=300.0,
                                                 power_limit_w=700.0))
                for g in range(gpus))))  # fmt: skip

    thread = threading.Thread(target=feed)
    thread.start()
    thread.join()


def test_the_fleet_shows_first_and_the_plot_panels_come_one_per_idle_turn(window, qtbot):
    """The first show builds no plot panel (about 15 ms each, 60 ms the four): the fleet view
    paints, then one panel per idle turn of the event loop, so a host opens onto built plots."""
    page = window.navigate("monitor")
    assert page.plots is not None and page.plots.plots == []
    seen: list[int] = []
    page.panel_timer.timeout.connect(lambda: seen.append(len(page.plots.plots)))
    qtbot.waitUntil(lambda: not page.panel_timer.isActive(), timeout=10000)
    assert seen[:4] == [1, 2, 3, 4] and page.plots.built
    # Both ranges come from redraw(): no auto-range pass over every curve on each change.
    for plot in page.plots.plots:
        assert page.plots._curves and not any(plot.vb.autoRangeEnabled())
    page.stop()


def test_opening_a_host_early_builds_every_panel_and_draws_its_history_once(ctx, window, qtbot):
    ctx.registry.save_host(Host("box", "127.0.0.1", 9))  # a closed port: it never answers
    monitor = ctx.monitor()
    start = time.time() - 300
    _ticks(monitor, "box", start, 300)
    page = window.navigate("monitor")
    redraws: list[object] = []
    draw = page.plots.redraw
    page.plots.redraw = lambda now=None: (redraws.append(now), draw(now))[1]
    page.open_host("box")  # before the panels were built one per turn
    assert page.plots.built and len(redraws) == 1
    assert [page.plots.curve_count(p) for p in range(4)] == [8, 8, 8, 8]
    assert page.plots.curve_points(0, 7) >= 140  # 300 s of history in 2 s bins, first draw
    page.stop()


def test_the_four_plots_are_one_view_painted_once_when_a_host_opens(ctx, window, qtbot):
    """One scene in one view: four views (a PlotWidget each) were painted 10 times when the host's
    plots showed again (each view's paint asked the next for another); one view paints once."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication, QGraphicsView

    ctx.registry.save_host(Host("box", "127.0.0.1", 9))  # a closed port: it never answers
    _ticks(ctx.monitor(), "box", time.time() - 300, 300)
    page = window.navigate("monitor")
    qtbot.waitUntil(lambda: page.plots.built, timeout=10000)
    plots = page.plots
    assert page.findChildren(QGraphicsView) == [plots.view]
    assert {plot.scene() for plot in plots.plots} == {plots.view.scene()}

    paints: list[QObject] = []

    class CountPaints(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
            if event.type() == QEvent.Type.Paint:
                paints.append(watched)
            return False

    counter = CountPaints()
    plots.view.viewport().installEventFilter(counter)
    for _ in range(3):  # the first open, then the plots shown again after the fleet view
        page.open_host("__fleet__")
        qtbot.wait(100)
        paints.clear()
        page.open_host("box")  # the click, and the event loop's turn that shows it
        QApplication.processEvents()
        assert plots.curve_count(3) == 8
        assert len(paints) == 1, f"the view was painted {len(paints)} times"
    page.stop()


def test_the_host_side_is_laid_out_at_its_size_before_the_first_click(ctx, window, qtbot):
    """A stacked widget sizes only the page it shows: the hidden host side (640x480 until then)
    was resized in the first click on a host, its four plots laid out and their axes drawn
    afresh there (20-35 ms of that click). It is laid out at the page's size, and painted once
    off screen, right after its panels are built."""
    from PySide6.QtWidgets import QApplication

    ctx.registry.save_host(Host("box", "127.0.0.1", 9))  # a closed port: it never answers
    _ticks(ctx.monitor(), "box", time.time() - 300, 300)
    page = window.navigate("monitor")
    qtbot.waitUntil(lambda: not page.panel_timer.isActive(), timeout=10000)
    host_side, fleet = page.stack.widget(1), page.stack.currentWidget()
    assert host_side.size() == fleet.size() and not host_side.isVisible()
    view = page.plots.view.size()
    assert view.width() == fleet.width() and 0 < view.height() < fleet.height()
    page.open_host("box")
    QApplication.processEvents()
    assert page.plots.curve_count(0) == 8
    page.stop()


def test_a_burst_of_samples_runs_no_query_on_the_gui_thread(ctx, window, qtbot):
    """The GUI thread only redraws: the samples' work (history, minutes, hints, auto-release)
    stays on the thread that took them in."""
    import traceback

    ctx.registry.save_host(Host("box", "127.0.0.1", 9))
    monitor = ctx.monitor()
    ctx.autorelease  # noqa: B018 - fed by the monitor, as at launch
    page = window.navigate("monitor")
    from_monitor: list[str] = []

    def traced(sql: str) -> None:
        stack = "".join(traceback.format_stack())
        if "/monitor/" in stack:
            from_monitor.append(sql)

    conn = ctx.store.db.conn  # the GUI thread's connection
    conn.set_trace_callback(traced)
    try:
        _ticks(monitor, "box", time.time() - 130, 120)
        qtbot.waitUntil(lambda: len(page.fleet_model.row_for("box").spark) >= 100, timeout=10000)
        page.open_host("box")
        _ticks(monitor, "box", time.time() - 10, 10)
        qtbot.waitUntil(lambda: page.values_model.rowCount() == 8, timeout=10000)
        qtbot.wait(2 * 500)  # two of the page's redraws
    finally:
        conn.set_trace_callback(None)
    assert from_monitor == []
    page.stop()


def test_the_sparkline_points_equal_one_qpointf_per_value(qapp):
    """The fleet view's sparkline is written through numpy; the points are those of the plain
    loop it replaced (newest at the right edge, clamped to 0-100 %), on random values."""
    from PySide6.QtCore import QPointF

    from gpu_companion.ui.monitor.models import SPARK_POINTS, spark_polygon

    rng = np.random.default_rng(3)
    for n in (1, 2, 57, SPARK_POINTS):
        values = list(rng.uniform(-20, 130, n))
        right, bottom, width, height = 412, 96, 300, 24
        step = width / (SPARK_POINTS - 1)
        x0 = right - step * (n - 1)
        plain = [QPointF(x0 + i * step, bottom - height * min(max(v, 0), 100) / 100)
                 for i, v in enumerate(values)]  # fmt: skip
        got = spark_polygon(values, right, bottom, width, height)
        assert len(got) == n
        for a, b in zip(got, plain, strict=True):
            assert a.x() == pytest.approx(b.x(), abs=1e-9)
            assert a.y() == pytest.approx(b.y(), abs=1e-9)
