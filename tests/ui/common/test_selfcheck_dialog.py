"""The Hosts page's Self-check button: results stream into the dialog, cancel works, and without
the app's own connections the dialog says so instead of pretending."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QItemSelectionModel

from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.selfcheck.rules import Status
from gpu_companion.ui.common import worker
from gpu_companion.ui.common.selfcheck_view import SelfCheckDialog


class _Sessions:
    def __init__(self, connect) -> None:
        self.connect = connect


def _select_host(page, alias: str) -> None:
    page.refresh()
    row = [h.alias for h in page.host_model.rows()].index(alias)
    index = page.host_model.index(row, 0)
    page.host_view.selectionModel().select(
        index,
        QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
    )
    page._last = (page.host_view, page.host_model)


def _dialog(page) -> SelfCheckDialog:
    found = page.findChildren(SelfCheckDialog)
    assert len(found) == 1
    return found[0]


def test_a_host_without_a_key_fails_the_connection_step_with_what_to_do(window, ctx, qtbot):
    from tests.harness.util import free_port

    ctx.registry.save_host(Host(alias="gpu1", hostname="127.0.0.1", port=free_port()))
    page = window.navigate("hosts")
    _select_host(page, "gpu1")
    page.findChild(type(page.empty.buttons[0]), "selfCheck").click()
    dialog = _dialog(page)
    qtbot.waitUntil(lambda: not dialog.view.running, timeout=20000)
    steps = dialog.view.steps
    assert steps[0].status is Status.FAIL and "There is no SSH key for gpu1" in steps[0].evidence
    assert "Keys page" in steps[0].hint
    assert dialog.run_button.isEnabled()
    dialog.reject()


@pytest.mark.sshd
def test_button_runs_the_check_on_the_selected_host(
    window, ctx, qtbot, torch_sshd, standin, ssh_client_factory
):
    from gpu_companion.core.selfcheck.check import SelfCheckOptions

    standin.configure(mem_used=3, processes=[{"pid": 99, "name": "leftover", "used_mib": 500}])
    ctx.sessions = _Sessions(ssh_client_factory(torch_sshd))
    ctx.registry.save_host(
        Host(alias="box", hostname="127.0.0.1", port=torch_sshd.port, user=torch_sshd.user)
    )
    page = window.navigate("hosts")
    _select_host(page, "box")
    page.findChild(type(page.empty.buttons[0]), "selfCheck").click()
    dialog = _dialog(page)
    view = dialog.view
    assert view.running  # started at once
    view.cancel()  # the real-host defaults write 256 MB: run again with a small disk test
    qtbot.waitUntil(lambda: not view.running, timeout=60000)
    dialog.options = SelfCheckOptions(disk_test_mb=2, min_free_gb=0.001)
    dialog.run()
    assert not dialog.run_button.isEnabled()
    qtbot.waitUntil(lambda: not view.running, timeout=60000)
    assert dialog.run_button.isEnabled()
    by_key = {s.key: s for s in view.steps}
    assert by_key["gpus"].status is Status.FAIL and "pid 99 leftover" in by_key["gpus"].evidence
    assert by_key["cuda_available"].status is Status.FAIL
    assert len(view.steps) == 10
    shown = view.results.toPlainText()
    assert all(step.title in shown for step in view.steps)
    assert "Fix: A fresh instance should have no GPU processes" in shown
    assert "failed" in view.status.text()
    dialog.reject()
    worker.wait_all()


@pytest.mark.sshd
def test_cancel_stops_the_check(window, ctx, qtbot, torch_sshd, ssh_client_factory):
    host = Host(alias="box", hostname="127.0.0.1", port=torch_sshd.port, user=torch_sshd.user)
    dialog = SelfCheckDialog(host, ssh_client_factory(torch_sshd))
    qtbot.addWidget(dialog)
    dialog.run()
    qtbot.waitUntil(lambda: len(dialog.view.steps) >= 1, timeout=20000)
    dialog.view.cancel()
    qtbot.waitUntil(lambda: not dialog.view.running, timeout=30000)
    assert dialog.view.status.text() == "Cancelled."
    assert len(dialog.view.steps) < 10
