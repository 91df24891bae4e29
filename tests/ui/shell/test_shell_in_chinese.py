"""The shell in Simplified Chinese: the sidebar's page names, the tray's tooltip, menu and balloon
titles, and the welcome's plural (English is tested by the other shell tests)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QSystemTrayIcon

from gpu_companion.core.common.notifier import Level, Message
from gpu_companion.ui.shell.tray import Tray, notification_for
from gpu_companion.ui.shell.tray_model import TrayModel
from tests.ui.shell.test_tray import _setup


@pytest.mark.qt_log_ignore("This plugin does not support")
def test_sidebar_and_status_bar_in_chinese(qapp, zh_cn, window) -> None:  # type: ignore[no-untyped-def]
    names = [window.sidebar.item(i).text() for i in range(window.sidebar.count())]
    assert names == ["主机", "密钥", "监控", "传输", "释放", "任务", "花费", "设置"]
    assert window.wizard_action.text() == "首次租用向导"


def test_tray_in_chinese(qapp, zh_cn, ctx, manual_clock, qtbot) -> None:  # type: ignore[no-untyped-def]
    p, h = _setup(ctx, manual_clock)
    ctx.ledger.start_rental(p.id, "2.40", host_id=h.id)
    manual_clock.advance(hours=1)
    tray = Tray(
        lambda: None,
        lambda: None,
        lambda m: None,
        available=False,
        model=TrayModel(ctx.ledger, ctx.budgets),
        alerts=ctx.alerts,
    )
    qtbot.waitUntil(lambda: not tray.busy(), timeout=10000)  # read off the GUI thread
    assert tray.tooltip.startswith("GPU Companion — 1 台运行中，")
    assert "\n今日：" in tray.tooltip
    texts = [a.text() for a in tray.actions() if a.text()]
    assert texts[0] == "打开 GPU Companion" and texts[-2:] == ["花费", "退出"]
    assert {"打开监控", "释放清单", "提醒暂停 1 小时", "静音提醒"} <= set(texts)
    title, _text, kind = notification_for(Message(Level.ERROR, "超出预算", source="spend"))
    assert (title, kind) == ("GPU Companion — 花费", QSystemTrayIcon.MessageIcon.Critical)


def test_an_over_budget_tooltip_in_chinese(qapp, zh_cn, ctx, manual_clock) -> None:  # type: ignore[no-untyped-def]
    p, h = _setup(ctx, manual_clock)
    ctx.ledger.start_rental(p.id, "2.40", host_id=h.id)
    ctx.budgets.set_budget("day", "1", "USD")
    manual_clock.advance(hours=1)
    snap = TrayModel(ctx.ledger, ctx.budgets).snapshot()
    assert snap.state == "over" and snap.tooltip.endswith("\n超出预算")
