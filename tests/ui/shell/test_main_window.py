"""The shell: pages, empty states, remembered geometry and page, banners."""

from __future__ import annotations

import sys

from PySide6.QtCore import QRect

from gpu_companion.core.common.notifier import Level, Message
from gpu_companion.services import build_services
from gpu_companion.ui.shell.build import PAGES, build_window

EXPECTED = ["hosts", "keys", "monitor", "transfers", "release", "runs", "spend", "settings"]


def test_sidebar_lists_every_page_in_order(window):
    assert list(window.pages) == EXPECTED
    titles = [window.sidebar.item(i).text() for i in range(window.sidebar.count())]
    assert titles == [
        "Hosts",
        "Keys",
        "Monitor",
        "Transfers",
        "Release",
        "Runs",
        "Spend",
        "Settings",
    ]


def test_the_gui_thread_waits_at_most_a_millisecond_for_the_gil(ctx, qtbot):
    """Python's default hands the GIL to a waiting thread after 5 ms: the GUI thread, entering
    Python many times per paint while workers run Python, waited that long each time."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)
    try:
        win = build_window(ctx)
        qtbot.addWidget(win)
        assert sys.getswitchinterval() <= 0.001
    finally:
        sys.setswitchinterval(before)


def test_every_placeholder_page_says_what_to_do_next(window, qtbot):
    for key in ("transfers", "release", "spend"):  # spend: until a platform
        page = window.navigate(key)
        assert page.empty.heading.text()
        assert page.empty.buttons[0].text() == "Add a host"
        page.empty.buttons[0].click()
        assert window.current_key() == "hosts"


def test_last_page_and_geometry_survive_a_restart(app_paths, qapp, qtbot):
    ctx = build_services(app_paths)
    win = build_window(ctx)
    qtbot.addWidget(win)
    win.show()
    win.setGeometry(QRect(10, 20, 760, 530))
    win.navigate("spend")
    win.save_state()
    size = win.size()
    win.close()
    ctx.close()

    ctx2 = build_services(app_paths)
    win2 = build_window(ctx2)
    qtbot.addWidget(win2)
    assert win2.current_key() == "spend"
    assert win2.size() == size
    ctx2.close()


def test_warnings_become_banners_when_there_is_no_tray(window, ctx, qtbot):
    assert window.tray is not None and not window.tray.available  # offscreen has no tray
    ctx.notifier.post(Message(Level.WARNING, "Budget 80% reached", key="budget"))
    qtbot.waitUntil(lambda: len(window.banners.banners()) == 1)
    ctx.notifier.post(Message(Level.WARNING, "Budget 100% reached", key="budget"))
    qtbot.wait(20)
    assert [b.label.text() for b in window.banners.banners()] == ["Budget 100% reached"]
    ctx.notifier.info("Saved.")
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == "Saved.")
    assert len(window.banners.banners()) == 1


def test_banners_are_capped_and_the_newest_stay(window, ctx, qtbot):
    for i in range(5):
        ctx.notifier.warning(f"alert {i}")
    qtbot.waitUntil(lambda: window.statusBar().currentMessage() == "alert 4")
    texts = [b.label.text() for b in window.banners.banners()]
    assert sorted(texts) == ["alert 2", "alert 3", "alert 4"]


def test_wizard_entry_opens_the_first_rental_wizard(window, ctx, qtbot):
    from gpu_companion.ui.wizard import FirstRentalWizard

    window.navigate("settings")
    window.wizard_action.trigger()
    assert isinstance(window.wizard, FirstRentalWizard) and window.wizard.isVisible()
    assert window.wizard.currentPage() is window.wizard.task_page
    window.wizard.reject()
    assert window.current_key() == "hosts"  # where the new host will show


def test_settings_page_shows_where_files_live(window, ctx):
    from PySide6.QtWidgets import QLabel

    page = window.navigate("settings")
    texts = {label.text() for label in page.findChildren(QLabel)}
    assert str(ctx.paths.data_dir) in texts and str(ctx.paths.log_dir) in texts


def test_closing_without_a_tray_quits(window, ctx):
    quit_calls = []
    window.quit_app = lambda: quit_calls.append(1)
    window.keep_in_tray = True  # even with a rental running, no tray means quit
    window.close()
    assert quit_calls == [1]


def test_pages_list_matches_the_design():
    assert [p.key for p in PAGES] == EXPECTED


def test_an_unexpected_exception_shows_the_log_path(window, ctx, monkeypatch):
    import logging

    from PySide6.QtWidgets import QMessageBox

    from gpu_companion.app import _install_excepthook
    from gpu_companion.logsetup import setup_logging

    handler = setup_logging(ctx.paths.log_file)
    shown = []
    monkeypatch.setattr(QMessageBox, "critical", lambda _parent, title, text: shown.append(text))
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    _install_excepthook(ctx.paths, window)
    try:
        raise RuntimeError("kaboom")
    except RuntimeError:
        sys.excepthook(*sys.exc_info())
    handler.flush()
    logging.getLogger().removeHandler(handler)
    handler.close()
    assert len(shown) == 1 and "kaboom" in shown[0] and str(ctx.paths.log_file) in shown[0]
    logged = ctx.paths.log_file.read_text()
    assert "RuntimeError: kaboom" in logged and "Traceback" in logged


def test_no_page_is_built_before_the_first_paint_and_the_start_page_first_after_it(
    app_paths, qapp, qtbot
):
    """The first frame is the window with the start page's place empty (the page would cost
    20-30 ms of start-up): the start page is the first step after the paint, shown as a click
    on it shows it."""
    ctx = build_services(app_paths)
    ctx.store.set_setting("ui.last_page", "keys")
    win = build_window(ctx)
    qtbot.addWidget(win)
    try:
        assert [k for k in win.pages if win.pages.built(k)] == []
        assert win.current_key() == "keys"  # the sidebar already says where the window opens
        win.after_first_paint()  # as the first paint does; its first step runs at once
        assert [k for k in win.pages if win.pages.built(k)] == ["keys"]
        assert win.stack.currentWidget() is win.pages["keys"]
        win.show()
        qtbot.waitUntil(lambda: win.first_paint_done, timeout=5000)
        assert all(win.pages.built(k) for k in win.pages)  # right after it, every page exists
        for key in win.pages:  # each in its sidebar place
            assert win.navigate(key) is win.stack.currentWidget() is win.pages[key]
    finally:
        win.close()
        ctx.close()


def test_a_start_page_built_before_the_first_paint_is_still_refreshed_after_it(
    app_paths, qapp, qtbot
):
    """Something may build the start page before the paint (a tray action, a test): the first
    step still refreshes it, as opening the window on it did."""
    ctx = build_services(app_paths)
    ctx.store.set_setting("ui.last_page", "keys")
    win = build_window(ctx)
    qtbot.addWidget(win)
    try:
        page = win.pages["keys"]  # built, not refreshed
        refreshed: list[str] = []
        original = page.refresh
        page.refresh = lambda: (refreshed.append("keys"), original())  # type: ignore[method-assign]
        win.after_first_paint()
        assert refreshed == ["keys"] and win.stack.currentWidget() is page
    finally:
        win.close()
        ctx.close()


def test_one_failing_start_up_step_does_not_hold_back_the_others(app_paths, qapp, qtbot):
    """E.g. the ledger cannot be read: the single-instance socket, the agent and auto-release
    still start, and the failure is reported as any unexpected error is."""
    ctx = build_services(app_paths)
    win = build_window(ctx)
    qtbot.addWidget(win)
    ran: list[str] = []

    def broken() -> None:
        raise RuntimeError("the ledger is unreadable")

    win.after_first_paint_calls[:0] = [broken]
    win.after_first_paint_calls.append(lambda: ran.append("later step"))
    try:
        with qtbot.capture_exceptions() as raised:
            win.after_first_paint()
            qtbot.waitUntil(lambda: win.first_paint_done, timeout=10000)  # a step per turn
        assert [str(e[1]) for e in raised] == ["the ledger is unreadable"]
        assert ran == ["later step"] and all(win.pages.built(k) for k in win.pages)
    finally:
        ctx.close()


def test_the_deferred_start_up_gives_the_event_loop_a_turn_between_steps(app_paths, qapp, qtbot):
    """Right after the first paint the window answers: the other pages and the start-up calls
    run one per turn of the event loop, never all in one go (which froze it for ~1 s)."""
    from PySide6.QtCore import QTimer

    ctx = build_services(app_paths)
    win = build_window(ctx)
    qtbot.addWidget(win)
    order: list[str] = []
    ticker = QTimer()
    ticker.timeout.connect(lambda: order.append("event loop"))
    ticker.start(0)
    win.after_first_paint_calls.append(lambda: order.append("call"))
    try:
        win.after_first_paint()
        assert order == []  # one step ran at most; the rest wait for their turns
        qtbot.waitUntil(lambda: win.first_paint_done, timeout=10000)
        ticker.stop()
        assert "event loop" in order[: order.index("call")]  # the loop ran between steps
        assert all(win.pages.built(k) for k in win.pages)
    finally:
        ctx.close()


def test_a_window_started_in_the_tray_builds_its_pages_without_a_paint(app_paths, qapp, qtbot):
    ctx = build_services(app_paths)
    win = build_window(ctx)
    qtbot.addWidget(win)
    ran: list[int] = []
    win.after_first_paint_calls.append(lambda: ran.append(1))
    try:
        qtbot.waitUntil(lambda: win.first_paint_done, timeout=5000)  # never shown: the fallback
        assert ran == [1] and all(win.pages.built(k) for k in win.pages)
    finally:
        ctx.close()
