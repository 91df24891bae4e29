"""The budget page's idle minutes become the host's auto-release policy when the user ticks
"release it for me when idle"; unticked, no policy is saved (auto-release stays off)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QWizard

from gpu_companion.core.autorelease.policy import Policy
from gpu_companion.core.autorelease.service import load_policy
from tests.ui.wizard.test_wizard import _to_budget_page, app_keyring  # noqa: F401  (a fixture)


@pytest.mark.sshd
@pytest.mark.keyring
@pytest.mark.usefixtures("app_keyring")  # the app's vault on the harness keyring
@pytest.mark.parametrize("ticked", [True, False])
def test_the_idle_minutes_and_the_box_become_the_policy(ctx, qtbot, sshd, ticked):
    wizard = _to_budget_page(ctx, qtbot, sshd)
    page = wizard.budget_page
    assert not page.auto_release.isChecked()  # offered, never assumed
    page.idle.setValue(25)
    page.auto_release.setChecked(ticked)
    wizard.button(QWizard.WizardButton.FinishButton).click()
    assert wizard.result() == QWizard.DialogCode.Accepted
    host = ctx.registry.host("gpu1")
    expected = Policy(idle_minutes=25) if ticked else None
    assert load_policy(ctx.store, host.id) == expected
