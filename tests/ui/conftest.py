"""UI fixtures: the app's Services on a temp data dir, and a built main window torn down cleanly."""

from __future__ import annotations

import pytest


@pytest.fixture
def ctx(app_paths, qapp):
    from gpu_companion.services import build_services

    context = build_services(app_paths)
    yield context
    context.close()


@pytest.fixture
def window(ctx, qtbot):
    from gpu_companion.ui.common import worker
    from gpu_companion.ui.shell.build import build_window

    win = build_window(ctx)
    win.show()
    # as the app is once shown: painted, the other pages built, the tray reading the ledger
    qtbot.waitUntil(lambda: win.first_paint_done, timeout=10000)
    yield win
    worker.wait_all()
    win.save_state()
    # closed here rather than by qtbot (which closes before any fixture ends): without asking
    # whether to quit while a rental is metered, and before the services close
    win.quitting = True
    win.close()
    win.deleteLater()


class RecordingNavigator:
    """A page shown alone (no main window around it) records where it asked to go."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def navigate(self, key: str):  # type: ignore[no-untyped-def]
        self.calls.append(("navigate", key))

    def open_release(self, alias: str) -> None:
        self.calls.append(("open_release", alias))

    def open_wizard(self) -> None:
        self.calls.append(("open_wizard", ""))

    def refresh_tray(self) -> None:
        self.calls.append(("refresh_tray", ""))


@pytest.fixture
def nav() -> RecordingNavigator:
    return RecordingNavigator()
