"""UI fixtures: an AppContext on a temp data dir, and a built main window torn down cleanly."""

from __future__ import annotations

import pytest


@pytest.fixture
def ctx(app_paths, qapp):
    from gpu_companion.app import AppContext

    context = AppContext(app_paths)
    yield context
    context.close()


@pytest.fixture
def window(ctx, qtbot):
    from gpu_companion.app import build_window
    from gpu_companion.ui.common import worker

    win = build_window(ctx)
    qtbot.addWidget(win)
    win.show()
    yield win
    worker.wait_all()
    win.save_state()
