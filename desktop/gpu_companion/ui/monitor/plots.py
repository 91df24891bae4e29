"""The four live plots of one host (utilisation, memory, temperature, power), one colour per GPU.

Imported lazily by the monitor page: pyqtgraph costs 0.25 s at start-up. Curves are redrawn from
history copies by the page's throttled timer; `connect="finite"` leaves gaps where no sample came.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, Qt
from PySide6.QtWidgets import QGraphicsItem, QLabel, QVBoxLayout, QWidget

from gpu_companion.core.monitor.history import METRICS, HostHistory

PALETTE = ("#3182ce", "#dd6b20", "#38a169", "#d53f8c", "#805ad5", "#d69e2e", "#319795",
           "#e53e3e")  # fmt: skip
# (title, translated where shown; unit, solid metric, dashed metric or None)
PANELS = (
    (str(QT_TRANSLATE_NOOP("GpuPlots", "Utilisation")), "%", "util", None),
    (str(QT_TRANSLATE_NOOP("GpuPlots", "Memory used / total")), "GiB", "mem_used", "mem_total"),
    (str(QT_TRANSLATE_NOOP("GpuPlots", "Temperature")), "°C", "temp", None),
    (str(QT_TRANSLATE_NOOP("GpuPlots", "Power / limit")), "W", "power", "power_limit"),
)
_COL = {m: i for i, m in enumerate(METRICS)}
PRECREATED_GPUS = 8
_SCALE = {"mem_used": 1 / 1024, "mem_total": 1 / 1024}


def gpu_color(gpu: int) -> str:
    return PALETTE[gpu % len(PALETTE)]


def bin_means(t: Any, v: Any, since: float, until: float, bins: int) -> tuple[Any, Any]:
    """At most `bins` points: the mean of each time bin (NaN-aware), empty bins left out.
    A plot cannot show more points than it has pixels; fewer points keep a redraw cheap.
    `t` is sorted (history series are), so each bin is one run of rows: one `reduceat` sums
    every column at once."""
    if len(t) <= bins:
        return t, v
    idx = np.clip(((t - since) / max(until - since, 1e-9) * bins).astype(int), 0, bins - 1)
    starts = np.flatnonzero(np.diff(idx, prepend=-1))  # first row of each non-empty bin
    ok = ~np.isnan(v)
    sums = np.add.reduceat(np.where(ok, v, 0.0), starts)
    n = np.add.reduceat(ok.astype(float), starts)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / n
    centers = np.add.reduceat(t, starts) / np.diff(starts, append=len(t))
    return centers, means


class _Curve(pg.PlotCurveItem):  # type: ignore[misc]
    """A curve whose bounds come with its points: pyqtgraph recomputes nanmin/nanmax of every
    curve at each range change and repaint; `redraw` has them already."""

    _bounds: tuple[tuple[float, float], tuple[float, float]] | None = None

    def set_points(self, t: Any, y: Any) -> None:
        self._bounds = None
        if len(t):
            with np.errstate(invalid="ignore"):
                lo, hi = float(np.fmin.reduce(y)), float(np.fmax.reduce(y))
            if np.isfinite(lo) and np.isfinite(hi):
                self._bounds = (float(t[0]), float(t[-1])), (lo, hi)  # t is sorted
        self.setData(t, y, connect="finite")

    def dataBounds(self, ax: int, frac: float = 1.0, orthoRange: Any = None) -> Any:  # noqa: N803
        if self._bounds is not None and frac >= 1.0 and orthoRange is None and ax in (0, 1):
            return self._bounds[ax]
        return super().dataBounds(ax, frac, orthoRange)


def _nice_range(
    lo: float, hi: float, current: tuple[float, float] | None
) -> tuple[float, float] | None:
    """A y range holding [lo, hi]: `current` while the values fill at least half of it, else
    [lo, hi] with an eighth of its span of headroom each side, rounded out to a tenth of a
    decade (None when no reading). The headroom keeps a slowly growing value from moving the
    axis (and re-laying out its ticks) on every redraw."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return None
    if current is not None and current[0] <= lo and hi <= current[1]:
        if 2 * (hi - lo) >= current[1] - current[0]:
            return current
    span = hi - lo
    if span < 1e-9:
        return float(lo - 0.5), float(hi + 0.5)
    lo, hi = lo - span / 8, hi + span / 8
    step = 10.0 ** np.floor(np.log10(hi - lo)) / 10
    return round(float(np.floor(lo / step) * step), 9), round(float(np.ceil(hi / step) * step), 9)


class GpuPlots(QWidget):
    """The four panels. `GpuPlots(build=False)` is only the frame: the monitor page builds the
    panels one per idle moment after its first show (a panel with its curves costs ~15 ms,
    all four ~60 ms), so neither the page's first show nor the first click on a host pays it."""

    def __init__(self, parent: QWidget | None = None, build: bool = True) -> None:
        super().__init__(parent)
        pg.setConfigOptions(antialias=False, background="w", foreground="#4a5568")
        # One view and one scene for the four plots: four views (PlotWidgets) each repainted
        # 2-3 times whenever the host's plots were shown again (10 paints instead of 1).
        self.view = pg.GraphicsLayoutWidget()
        self.view.setObjectName("gpuPlotsView")
        self.view.scene().sigMouseMoved.connect(self._mouse_moved)
        self.plots: list[pg.PlotItem] = []
        self._curves: dict[tuple[int, int, bool], _Curve] = {}
        self.legend = QLabel()  # above the plots, so it never hides a curve
        self.legend.setObjectName("gpuLegend")
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.readout = QLabel(self.tr("Hover over a plot to read the values."))
        self.readout.setObjectName("hoverReadout")
        self.readout.setTextFormat(Qt.TextFormat.RichText)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.legend)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.readout)
        self.history: HostHistory | None = None
        self.window_s = 600.0
        self._data: dict[int, tuple[Any, Any]] = {}
        self.max_points = 300  # per curve: about one point per two pixels of a panel
        self._x_end = 0.0
        self._y_ranges: dict[int, tuple[float, float]] = {}
        if build:
            self.build_all()

    @property
    def built(self) -> bool:
        return len(self.plots) == len(PANELS)

    def build_next(self) -> bool:
        """Build the next panel with its curves for `PRECREATED_GPUS` GPUs; False when every
        panel was already built."""
        i = len(self.plots)
        if i >= len(PANELS):
            return False
        title, unit, _, dashed = PANELS[i]
        plot = self.view.addPlot(row=i // 2, col=i % 2, axisItems={"bottom": pg.DateAxisItem()})
        plot.setTitle(QCoreApplication.translate("GpuPlots", title), size="9pt")
        plot.setLabel(axis="left", text=unit)  # a unit: the same in every language
        plot.showGrid(x=False, y=True, alpha=0.15)
        # Grid lines at major and minor ticks only: the third tick level's near-invisible
        # lines made replaying the axis picture about half of every repaint.
        plot.getAxis("left").setStyle(maxTickLevel=1)
        # Axes (with the grid) change only when a range moves: keep them as cached pixmaps
        # instead of replaying their tick and text drawing on every repaint of the curves.
        for side in ("left", "bottom"):
            plot.getAxis(side).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        plot.setMouseEnabled(x=False, y=False)
        # Both ranges are set by `redraw` from the binned points: no auto-range pass over every
        # curve's bounds each time a curve changes (about 6 ms of opening a host's plots).
        plot.disableAutoRange()
        plot.setMenuEnabled(False)
        plot.hideButtons()
        if i == 0:  # utilisation
            plot.setYRange(0, 100, padding=0.02)
        if self._x_end:
            plot.setXRange(self._x_end - self.window_s, self._x_end, padding=0)
        self.plots.append(plot)
        for gpu in range(PRECREATED_GPUS):  # made now, not when a host opens
            self._curve(i, gpu, False).hide()
            if dashed is not None:
                self._curve(i, gpu, True).hide()
        return True

    def build_all(self) -> None:
        while self.build_next():
            pass

    def set_time_axis(self, now: float | None = None) -> None:
        """Give the built panels the time axis a host opened now would have, applied (the
        Monitor page then lays them out at their size and paints them once, off screen)."""
        if self.built:
            self._set_x_end(time.time() if now is None else now)
            self._prepare_paint()

    def curve_count(self, panel: int = 0) -> int:
        curves = self._curves.items()
        return sum(1 for (p, _, d), c in curves if p == panel and not d and c.isVisible())

    def curve_points(self, panel: int, gpu: int) -> int:
        """The points `gpu`'s curve in `panel` shows (binned: at most `max_points`)."""
        curve = self._curves.get((panel, gpu, False))
        if curve is None or not curve.isVisible() or gpu not in self._data:
            return 0
        return len(self._data[gpu][0])

    def set_source(self, history: HostHistory | None, window_s: float | None = None) -> None:
        """Show `history` (None: nothing); the caller redraws (the page: once, on its tick).
        The axes keep their ranges (and their painted ticks) until the next redraw finds the
        new host's values or the window outside them: hosts of one fleet share the time axis
        and often the scales."""
        self.history = history
        if window_s is not None and window_s != self.window_s:
            self.window_s = window_s
            self._x_end = 0.0
        for curve in self._curves.values():
            if curve.isVisible():  # hidden, a curve keeps its old points until drawn again
                curve.hide()
        self._data.clear()

    def _curve(self, panel: int, gpu: int, dashed: bool) -> _Curve:
        key = (panel, gpu, dashed)
        curve = self._curves.get(key)
        if curve is None:
            # The limit as a faint solid line: dashed pens cost 10x more to paint in software.
            color = pg.mkColor(gpu_color(gpu))
            if dashed:
                color.setAlpha(110)
            pen = pg.mkPen(color, width=1)
            # A bare curve item, not plot()'s PlotDataItem: the points are already binned, and
            # the wrapper's setData (downsampling, log/fft checks, bounds) cost 10x the curve's.
            curve = _Curve(pen=pen, connect="finite")
            self.plots[panel].addItem(curve)
            self._curves[key] = curve
        return curve

    def redraw(self, now: float | None = None) -> None:
        """Re-read the history for the visible window and update every curve."""
        history = self.history
        if history is None:
            return
        self.build_all()
        now = time.time() if now is None else now
        since = now - self.window_s
        gpus = history.gpus()
        legend = "  ".join(
            f'<span style="color:{gpu_color(g)}">&#9632; GPU {g}</span>' for g in gpus
        )
        faint = self.tr("(faint line: memory total, power limit)")
        legend += f"  <span style='color:#718096'>{faint}</span>"
        if legend != self.legend.text():
            self.legend.setText(legend)
        lows: dict[int, list[float]] = {}
        highs: dict[int, list[float]] = {}
        for gpu in gpus:
            t, v = history.series(gpu, since)
            t, v = bin_means(t, v, since, now, self.max_points)
            self._data[gpu] = (t, v)
            if len(t):
                with np.errstate(invalid="ignore"):
                    lo, hi = np.fmin.reduce(v, axis=0), np.fmax.reduce(v, axis=0)
                for panel, (_, _, solid, dashed) in enumerate(PANELS):
                    for metric in (solid, dashed):
                        if metric is not None:
                            scale = _SCALE.get(metric, 1.0)
                            lows.setdefault(panel, []).append(lo[_COL[metric]] * scale)
                            highs.setdefault(panel, []).append(hi[_COL[metric]] * scale)
            for panel, (_, _, solid, dashed) in enumerate(PANELS):
                for metric, is_dashed in ((solid, False), (dashed, True)):
                    if metric is None:
                        continue
                    curve = self._curve(panel, gpu, is_dashed)
                    y = v[:, _COL[metric]] * _SCALE.get(metric, 1.0)
                    curve.set_points(t, y)
                    if not curve.isVisible():
                        curve.show()
        # The x range moves in steps of 1/120 of the window: between steps the axes keep their
        # painted ticks (re-laying out tick text on every redraw was most of its cost).
        self._set_x_end(now)
        # Y ranges set here from the binned points, with headroom: no auto-range pass over every
        # curve's bounds at each paint, and axes that keep their ticks while values wander
        # inside the range. Utilisation keeps its fixed 0-100.
        for panel, plot in enumerate(self.plots):
            if panel == 0 or panel not in lows:
                continue
            y_range = _nice_range(
                np.fmin.reduce(lows[panel]), np.fmax.reduce(highs[panel]), self._y_ranges.get(panel)
            )
            if y_range is not None and y_range != self._y_ranges.get(panel):
                self._y_ranges[panel] = y_range
                plot.setYRange(*y_range, padding=0.05)
        self._prepare_paint()

    def _set_x_end(self, now: float) -> None:
        step = self.window_s / 120
        end = (now // step + 1) * step
        if end != self._x_end:
            self._x_end = end
            for plot in self.plots:
                plot.setXRange(end - self.window_s, end, padding=0)

    def _prepare_paint(self) -> None:
        """Apply the new ranges now rather than inside the next paint: pyqtgraph moves a
        view's curves to a new range from the paint itself, which asks for a second paint
        (and its axes for a third). Done here, each plot is painted once."""
        if self.plots:
            self.view.scene().prepareForPaint()

    def _mouse_moved(self, pos: Any) -> None:
        for plot in self.plots:
            if plot.sceneBoundingRect().contains(pos):
                self._hover(plot, pos)
                return

    def _hover(self, plot: pg.PlotItem, pos: Any) -> None:
        if not plot.sceneBoundingRect().contains(pos) or not self._data:
            return
        x = plot.vb.mapSceneToView(pos).x()
        panel = self.plots.index(plot)
        title, unit, solid, dashed = PANELS[panel]
        parts = []
        for gpu, (t, v) in sorted(self._data.items()):
            if not len(t):
                continue
            i = int(np.clip(np.searchsorted(t, x), 0, len(t) - 1))
            value = v[i, _COL[solid]] * _SCALE.get(solid, 1.0)
            text = "—" if np.isnan(value) else f"{value:.1f}"
            if dashed is not None:
                limit = v[i, _COL[dashed]] * _SCALE.get(dashed, 1.0)
                text += "" if np.isnan(limit) else f" / {limit:.1f}"
            parts.append(f'<span style="color:{gpu_color(gpu)}">GPU {gpu}: {text} {unit}</span>')
        when = time.strftime("%H:%M:%S", time.localtime(x)) if x > 0 else ""
        self.readout.setText(
            self.tr("<b>{title}</b> at {when} — {values}").format(
                title=QCoreApplication.translate("GpuPlots", title),
                when=when,
                values=" · ".join(parts),
            )
        )
