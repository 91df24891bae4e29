"""Every page and the main dialogs are usable in a 1100×700 window: no visible button is cut off
or squeezed below its size, and no dialog asks for more than 700 px of height."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from PySide6.QtWidgets import QDialog, QWidget

from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.ui.shell.build import PAGES
from tests.ui.layout_check import clipped_buttons

SIZE = (1100, 700)


def _populate(ctx):  # type: ignore[no-untyped-def]
    """A real week's worth: two platforms, two hosts, a past and a running rental, a budget."""
    vast = ctx.registry.save_platform(Platform("vast.ai", "https://cloud.vast.ai", "second", "USD"))
    lam = ctx.registry.save_platform(Platform("Lambda", "", "minute", "USD"))
    host = ctx.registry.save_host(
        Host("vast-4090", "ssh4.vast.ai", 41022, "root", vast.id, "RTX 4090", 2, "LoRA runs")
    )
    ctx.registry.save_host(
        Host("lambda-h100", "192.0.2.10", 22, "ubuntu", lam.id, "H100 SXM", 8, "team")
    )
    past = ctx.ledger.start_rental(
        lam.id, "2.49", gpu_model="H100", started_at=ctx.ledger.now() - timedelta(hours=5)
    )
    ctx.ledger.end_rental(past.id, reason="released")
    ctx.ledger.start_rental(vast.id, "0.78", host_id=host.id, gpu_model="RTX 4090", gpu_count=2,
                            max_runtime=timedelta(hours=6), tag="dpo")  # fmt: skip
    ctx.budgets.set_budget("month", "150", "USD")
    return host


def test_every_page_fits_a_1100x700_window(window, ctx, qtbot) -> None:
    _populate(ctx)
    window.resize(*SIZE)
    problems: list[str] = []
    for page in PAGES:
        window.navigate(page.key)
        qtbot.wait(30)  # the layouts settle
        assert window.size().toTuple() == SIZE, page.key  # nothing forced the window bigger
        problems += [f"{page.key}: {p}" for p in clipped_buttons(window)]
    assert problems == []


def _failing(ctx, host) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    """What the release flow passes the override dialog: the failing items as it words them."""
    from gpu_companion.core.release.checklist import ReleaseChecklist
    from gpu_companion.core.release.gate import failing_items

    checklist = ReleaseChecklist.build(host, ctx.release.settings.config(host.alias))
    return failing_items(checklist)[:2]


def _dialogs(ctx, window, host) -> dict[str, Callable[[], QDialog]]:  # type: ignore[no-untyped-def]
    from gpu_companion.ui.common.access import NoBrowserDialog
    from gpu_companion.ui.hosts.connection import SshOptionsDialog
    from gpu_companion.ui.hosts.page import HostDialog, PlatformDialog
    from gpu_companion.ui.hosts.providers import (
        AddAccountDialog,
        OrphansDialog,
        ProviderAccountsDialog,
    )
    from gpu_companion.ui.hosts.tunnels import TunnelDialog
    from gpu_companion.ui.keys.dialogs import GenerateKeyDialog, ImportKeyDialog
    from gpu_companion.ui.release.dialogs import ChecklistSettingsDialog, OverrideDialog
    from gpu_companion.ui.release.policy_dialog import PolicyDialog
    from gpu_companion.ui.spend.dialogs import AlertsDialog, BudgetDialog, StartRentalDialog
    from gpu_companion.ui.transfers.dialogs import SyncCheckpointsDialog, TransferDialog

    hosts = ctx.registry.hosts()
    settings = ctx.release.settings
    return {
        "platform": lambda: PlatformDialog(ctx, None, window),
        "host": lambda: HostDialog(ctx, host, window),
        "ssh-options": lambda: SshOptionsDialog(ctx, host, window),
        "tunnel": lambda: TunnelDialog(ctx, host, window),
        "add-account": lambda: AddAccountDialog(ctx, window),
        "accounts": lambda: ProviderAccountsDialog(ctx, window),
        "orphans": lambda: OrphansDialog(ctx, None, window),
        "generate-key": lambda: GenerateKeyDialog("vast.ai", window),
        "import-key": lambda: ImportKeyDialog("vast.ai", window),
        "checklist": lambda: ChecklistSettingsDialog(settings, host, window, ctx.release.accounts),
        "override": lambda: OverrideDialog(host, _failing(ctx, host), window),
        "policy": lambda: PolicyDialog(ctx.store, host, window),
        "start-rental": lambda: StartRentalDialog(ctx, window),
        "budget": lambda: BudgetDialog(ctx, window),
        "alerts": lambda: AlertsDialog(ctx, ctx.ledger.running()[0], window),
        "upload": lambda: TransferDialog(hosts, "upload", lambda h: None, window),
        "download": lambda: TransferDialog(hosts, "download", lambda h: None, window),
        "sync": lambda: SyncCheckpointsDialog(hosts, lambda h: None, "/tmp/bk", window),
        "no-browser": lambda: NoBrowserDialog("http://127.0.0.1:8888/?token=x", window),
    }


@pytest.mark.qt_log_ignore("This plugin does not support")
def test_the_main_dialogs_fit_700_pixels_high(window, ctx, qtbot) -> None:
    host = _populate(ctx)
    window.resize(*SIZE)
    problems: list[str] = []
    for name, make in _dialogs(ctx, window, host).items():
        dialog = make()
        try:
            hint = dialog.sizeHint()
            if hint.height() > SIZE[1]:
                problems.append(f"{name}: sizeHint {hint.toTuple()} taller than {SIZE[1]}")
            dialog.show()
            dialog.resize(dialog.sizeHint().boundedTo(dialog.maximumSize()))
            qtbot.wait(10)
            if dialog.height() > SIZE[1]:
                problems.append(f"{name}: shown {dialog.size().toTuple()}")
            problems += [f"{name}: {p}" for p in clipped_buttons(dialog)]
        finally:
            dialog.close()
            dialog.deleteLater()
    assert problems == []


def test_the_checker_sees_a_cut_off_button(qtbot) -> None:
    """The check itself: a button placed past its parent's edge is reported."""
    from PySide6.QtWidgets import QPushButton

    parent = QWidget()
    qtbot.addWidget(parent)
    parent.resize(200, 100)
    button = QPushButton("Release", parent)
    button.setGeometry(150, 10, 100, 30)
    parent.show()
    assert clipped_buttons(parent) and "Release" in clipped_buttons(parent)[0]
    button.setGeometry(10, 10, 100, 30)
    assert clipped_buttons(parent) == []
