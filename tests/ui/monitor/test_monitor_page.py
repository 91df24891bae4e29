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
        view = page.plots.plots[0].getPlotItem().vb.viewRange()[0]
        assert view[1] - view[0] == pytest.approx(seconds, rel=0.01)
    page.window_combo.setCurrentIndex(0)
    plot = page.plots.plots[3]
    vb = plot.getPlotItem().vb
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
