"""The wizard's guard rails: no Next before the host key is trusted (the page offers to trust),
a disabled Next always says why, a port of 70000 is refused with a message, the self-check never
shows a result for other answers, and checkpointing is suggested when it makes the job fit."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWizard

from tests.ui.wizard.test_wizard import (  # noqa: F401  (app_keyring: a fixture)
    _fingerprint,
    _next,
    _ssh_command,
    _trust_first_contact,
    _walk_to_connection,
    _wizard,
    app_keyring,
)


def _next_button(wizard):
    return wizard.button(QWizard.WizardButton.NextButton)


def test_a_disabled_next_says_why_and_the_reason_goes_once_answered(ctx, qtbot):
    wizard = _wizard(ctx, qtbot)
    for _ in range(4):
        _next(wizard, qtbot)
    create = wizard.create_page
    assert not _next_button(wizard).isEnabled()
    assert create.why.text() == "Next is not available yet: name the platform you rent from."
    create.platform.setEditText("vast.ai")
    assert create.why.text().endswith("tick each point of the checklist once it is done (4 left).")
    assert _next_button(wizard).toolTip() == create.why.text()
    for box in create.checks.values():
        box.setChecked(True)
    assert _next_button(wizard).isEnabled() and create.why.text() == ""


@pytest.mark.sshd
@pytest.mark.keyring
@pytest.mark.usefixtures("app_keyring")  # the app's vault on the harness keyring
def test_typing_70000_in_the_port_box_is_refused_with_a_message(ctx, qtbot, sshd):
    wizard = _wizard(ctx, qtbot)
    _walk_to_connection(wizard, qtbot, _ssh_command(sshd), sshd)
    wizard.back()
    conn = wizard.connection_page
    conn.port.clear()
    QTest.keyClicks(conn.port, "70000")
    assert conn.port.text() == "70000"  # not silently 7000
    message = "Port '70000' is not a port number: ports go from 1 to 65535."
    assert conn.error.text() == message
    assert not _next_button(wizard).isEnabled()
    assert conn.why.text() == f"Next is not available yet: {message}"
    assert conn.validatePage() is False
    assert ctx.registry.host("gpu1").port == sshd.port  # the saved host kept its port
    QTest.keyClick(conn.port, Qt.Key.Key_Backspace)
    assert conn.port.value() == 7000 and conn.error.text() == "" and conn.why.text() == ""
    _next(wizard, qtbot)
    assert ctx.registry.host("gpu1").port == 7000
    first = wizard.first_connection_page  # it tries the new port at once
    qtbot.waitUntil(lambda: not first.connecting, timeout=15000)


@pytest.mark.sshd
@pytest.mark.keyring
@pytest.mark.usefixtures("app_keyring")  # the app's vault on the harness keyring
def test_next_waits_for_the_trusted_host_key(ctx, qtbot, sshd):
    wizard = _wizard(ctx, qtbot)
    _walk_to_connection(wizard, qtbot, _ssh_command(sshd), sshd)
    first = wizard.first_connection_page
    qtbot.waitUntil(first.trust_button.isVisible, timeout=10000)
    assert not _next_button(wizard).isEnabled()  # before: Next led to a self-check that failed
    assert "the host key is not trusted yet" in first.why.text()
    assert _fingerprint(sshd) in first.status.text()  # the one the provider's console shows
    first.ask = lambda box: "trust"  # the host-key question, answered
    first.trust_button.click()
    qtbot.waitUntil(lambda: wizard.state.connected, timeout=10000)
    qtbot.waitUntil(_next_button(wizard).isEnabled, timeout=5000)
    assert first.why.text() == ""
    host = ctx.registry.host("gpu1")  # trusted in the app's own known_hosts
    assert ctx.sessions.trusted_fingerprints(host) == [f"ssh-ed25519 {_fingerprint(sshd)}"]


@pytest.mark.sshd
@pytest.mark.keyring
@pytest.mark.usefixtures("app_keyring")  # the app's vault on the harness keyring
def test_the_self_check_shows_no_stale_result_after_going_back(ctx, qtbot, sshd, standin):
    standin.configure(mem_used=3, gpu_count=1)
    wizard = _wizard(ctx, qtbot)
    _walk_to_connection(wizard, qtbot, _ssh_command(sshd), sshd)
    _trust_first_contact(wizard, qtbot, sshd)
    _next(wizard, qtbot)
    view = wizard.selfcheck_page.view
    qtbot.waitUntil(lambda: view.complete, timeout=60000)
    gpus = {s.key: s for s in view.steps}["gpus"]
    assert gpus.evidence.startswith("1 × ")

    # back to the connection details: the host has 2 GPUs rented now
    wizard.back()
    wizard.back()
    wizard.connection_page.gpu_count.setValue(2)
    _next(wizard, qtbot)
    _next(wizard, qtbot)
    assert view.steps == [] and not view.complete  # the old result is gone at once
    assert not _next_button(wizard).isEnabled()
    assert wizard.selfcheck_page.why.text().endswith("the self-check is still running (Cancel "
                                                     "stops it).")  # fmt: skip
    # going back while it runs stops it; coming back runs it again rather than keeping a part
    wizard.back()
    _next(wizard, qtbot)
    qtbot.waitUntil(lambda: view.complete, timeout=60000)
    gpus = {s.key: s for s in view.steps}["gpus"]
    assert "1 GPU(s) instead of the 2 you rented" in gpus.evidence
    assert len([s for s in view.steps if s.key == "gpus"]) == 1  # no step of the stopped run


def test_the_wizard_says_when_gradient_checkpointing_makes_the_job_fit(ctx, qtbot):
    wizard = _wizard(ctx, qtbot)
    task = wizard.task_page
    task.task.setCurrentIndex(task.task.findData("lora"))
    task.model.setCurrentIndex(task.model.findData("qwen2.5-7b"))
    task.context.setValue(8192)
    task.batch.setValue(4)
    task.checkpointing.setChecked(False)  # on by default: the user turned it off
    _next(wizard, qtbot)
    estimate = wizard.estimate_page
    hint = estimate.tip.text()
    assert hint.startswith("Turn on gradient checkpointing: "), hint
    assert "it also fits" in hint and "no card in the catalogue holds it without" in hint
    assert estimate.use_checkpointing.isVisible()
    _next(wizard, qtbot)
    gpu = wizard.gpu_page
    assert gpu.model.rowCount() == 0 and not _next_button(wizard).isEnabled()
    assert gpu.why.text().endswith("no card fits this job: go back and make it smaller.")
    wizard.back()
    estimate.use_checkpointing.click()
    assert task.checkpointing.isChecked()
    assert estimate.tip.text() == "" and not estimate.use_checkpointing.isVisible()
    _next(wizard, qtbot)
    assert gpu.model.rowCount() >= 1 and wizard.state.card is not None


def test_no_checkpointing_hint_for_inference_or_when_it_adds_no_card(ctx, qtbot):
    wizard = _wizard(ctx, qtbot)
    _next(wizard, qtbot)  # the default: inference of Qwen2.5 7B
    assert wizard.estimate_page.tip.text() == ""
    assert not wizard.estimate_page.use_checkpointing.isVisible()
