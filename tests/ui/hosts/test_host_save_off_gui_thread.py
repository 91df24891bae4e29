"""Saving a host in the Host dialog returns at once, even when `ssh -G` is slow."""

from __future__ import annotations

import time

from PySide6.QtWidgets import QDialog

from tests.integration.test_host_save_sync import slow_ssh  # noqa: F401  (fixture)
from tests.ui.hosts.test_hosts_page import fill, press_save


def test_the_host_dialog_does_not_wait_for_ssh(window, ctx, qtbot, slow_ssh) -> None:  # noqa: F811
    from gpu_companion.ui.hosts.page import HostDialog

    dialog = HostDialog(ctx, None, window)
    qtbot.addWidget(dialog)
    fill(dialog, alias="gpu1", hostname="10.0.0.5", port="2222", user="root")
    start = time.monotonic()
    press_save(qtbot, dialog)  # on the GUI thread, as a click is
    took = time.monotonic() - start
    assert dialog.result() == QDialog.DialogCode.Accepted, dialog.error.text()
    assert took < 0.5, f"the Save click blocked the window for {took:.1f} s"
    assert ctx.ssh_sync.flush(30)
    assert "Host gpu1\n" in ctx.ssh_config.config_path.read_text()
    assert "-G" in slow_ssh.read_text()


def test_adding_a_host_on_the_page_renders_the_config_once(window, ctx, qtbot, slow_ssh) -> None:  # noqa: F811
    """The registry asks for the sync when a host is saved; the page does not add a second pass
    (each pass runs `ssh -G` once per host)."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from gpu_companion.ui.common import worker

    page = window.navigate("hosts")
    assert ctx.ssh_sync.flush(30)
    before = slow_ssh.read_text().count("-G") if slow_ssh.exists() else 0

    def fill_and_save() -> None:
        dialog = QApplication.activeModalWidget()
        fill(dialog, alias="gpu1", hostname="10.0.0.5", port="2222", user="root")
        press_save(qtbot, dialog)

    QTimer.singleShot(0, fill_and_save)
    page.add_host()
    assert ctx.ssh_sync.flush(30)
    worker.wait_all()
    assert "Host gpu1\n" in ctx.ssh_config.config_path.read_text()
    assert slow_ssh.read_text().count("-G") - before == 1
