"""The wizard's money: a per-GPU price metered for every GPU rented, the billing mode chosen is
the one metered, a decimal comma typed in a price field, and an existing budget kept unless the
user ticks the box to replace it. All through the wizard as the app builds it: the key from the
keyring, the harness host connected and self-checked, the real spend ledger."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from PySide6.QtCore import QLocale
from PySide6.QtWidgets import QWizard

from gpu_companion.core.hosts.registry import Platform
from gpu_companion.ui.common.money_input import parse_user_amount
from tests.ui.wizard.test_wizard import (  # noqa: F401  (app_keyring: a fixture)
    _connect_and_check,
    _next,
    _ssh_command,
    _walk_to_connection,
    _wizard,
    app_keyring,
)


def _to_billing_page(ctx, qtbot, server):
    wizard = _wizard(ctx, qtbot)
    _walk_to_connection(wizard, qtbot, _ssh_command(server), server)
    for _ in range(3):
        wizard.back()
    assert wizard.currentPage() is wizard.billing_page
    return wizard


def _to_budget_page(ctx, qtbot, server, gpus=1, prices=None, mode="on-demand"):
    wizard = _to_billing_page(ctx, qtbot, server)
    billing = wizard.billing_page
    for name, text in (prices or {}).items():
        billing.fields[name].setText(text)
    billing.rent_as.setCurrentIndex(billing.rent_as.findData(mode))
    _next(wizard, qtbot)
    _next(wizard, qtbot)
    wizard.connection_page.gpu_count.setValue(gpus)
    _next(wizard, qtbot)
    _connect_and_check(wizard, qtbot, server)
    return wizard


def _finish(wizard) -> None:
    wizard.button(QWizard.WizardButton.FinishButton).click()
    assert wizard.result() == QWizard.DialogCode.Accepted, wizard.budget_page.notice.text()


@pytest.mark.sshd
@pytest.mark.keyring
@pytest.mark.usefixtures("app_keyring")  # the app's vault on the harness keyring
def test_eight_gpus_are_metered_at_eight_times_the_per_gpu_price(ctx, qtbot, sshd):
    wizard = _to_budget_page(ctx, qtbot, sshd, gpus=8)
    budget = wizard.budget_page
    budget.budget.setText("500")
    budget.hours.setValue(2)
    assert budget.rate_note.text() == "Metered on demand at 8 × $2.65 = $21.20/h."
    assert budget.summary.text() == "2 h on demand ≈ $42.40, 8% of this budget."
    _finish(wizard)
    host = ctx.registry.host("gpu1")
    rental = ctx.ledger.running_for_host(host.id)
    assert (rental.rate, rental.gpu_count, rental.billing_mode) == (
        Decimal("21.20"),
        8,
        "on-demand",
    )
    assert rental.cost_at(rental.started_at + timedelta(hours=1)) == 2120  # not $2.65


@pytest.mark.sshd
@pytest.mark.keyring
@pytest.mark.usefixtures("app_keyring")  # the app's vault on the harness keyring
def test_the_billing_mode_and_price_chosen_are_metered_with_a_decimal_comma(ctx, qtbot, sshd):
    wizard = _to_budget_page(ctx, qtbot, sshd, gpus=2, prices={"spot": "0,39"}, mode="spot")
    modes = wizard.billing_page.rent_as
    assert [modes.itemData(i) for i in range(modes.count())] == ["on-demand", "spot"]
    budget = wizard.budget_page
    budget.budget.setText("0,50")  # a budget with a decimal comma: 0.50, not 50
    assert budget.rate_note.text() == "Metered on spot at 2 × $0.39 = $0.78/h."
    assert budget.summary.text() == "6 h on spot ≈ $4.68, 936% of this budget."
    _finish(wizard)
    rental = ctx.ledger.running_for_host(ctx.registry.host("gpu1").id)
    assert (rental.rate, rental.billing_mode) == (Decimal("0.78"), "spot")
    [kept] = ctx.budgets.all()
    assert kept.amount_minor == 50


@pytest.mark.sshd
@pytest.mark.keyring
@pytest.mark.usefixtures("app_keyring")  # the app's vault on the harness keyring
def test_a_monthly_plan_is_metered_per_period(ctx, qtbot, sshd):
    wizard = _to_budget_page(ctx, qtbot, sshd, gpus=4, prices={"monthly": "1,200"}, mode="monthly")
    budget = wizard.budget_page
    budget.budget.setText("10000")
    assert (
        budget.rate_note.text() == "Metered on a monthly plan at 4 × $1,200.00 = $4,800.00/month."
    )
    _finish(wizard)
    rental = ctx.ledger.running_for_host(ctx.registry.host("gpu1").id)
    assert (rental.rate, rental.billing_mode) == (Decimal("4800"), "monthly")


@pytest.mark.sshd
@pytest.mark.keyring
@pytest.mark.usefixtures("app_keyring")  # the app's vault on the harness keyring
def test_a_typo_in_a_price_is_named_and_blocks_next(ctx, qtbot, sshd):
    wizard = _to_billing_page(ctx, qtbot, sshd)
    billing = wizard.billing_page
    billing.fields["on_demand"].setText("2,6,5")
    assert "'On-demand price per GPU-hour' '2,6,5' is not a number" in billing.result.toPlainText()
    assert not wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    billing.fields["on_demand"].setText("2,65")
    assert wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    assert wizard.state.prices.on_demand_per_hour == Decimal("2.65")


@pytest.mark.sshd
@pytest.mark.keyring
@pytest.mark.usefixtures("app_keyring")  # the app's vault on the harness keyring
@pytest.mark.parametrize("replace", [False, True])
def test_an_existing_budget_is_replaced_only_when_the_user_says_so(ctx, qtbot, sshd, replace):
    platform = ctx.registry.save_platform(Platform(name="vast.ai"))
    ctx.budgets.set_budget("month", "100", "USD", platform_id=platform.id)
    wizard = _to_budget_page(ctx, qtbot, sshd)
    budget = wizard.budget_page
    assert budget.replace_budget.isVisible() and not budget.replace_budget.isChecked()
    assert "Replace the monthly budget of $100.00 already set for vast.ai" in (
        budget.replace_budget.text()
    )
    budget.budget.setText("120")
    budget.replace_budget.setChecked(replace)
    _finish(wizard)
    [kept] = ctx.budgets.all()
    assert kept.amount_minor == (12000 if replace else 10000)
    assert ctx.ledger.running_for_host(ctx.registry.host("gpu1").id) is not None


@pytest.fixture
def german_locale():
    before = QLocale()
    QLocale.setDefault(QLocale(QLocale.Language.German, QLocale.Country.Germany))
    yield
    QLocale.setDefault(before)


def test_the_ui_reads_amounts_in_the_users_locale(german_locale):
    assert parse_user_amount("0,39", "the rate") == Decimal("0.39")
    assert parse_user_amount("1.234", "the rate") == Decimal("1234")  # thousands in German
    assert parse_user_amount("1.234,56", "the rate") == Decimal("1234.56")
    assert parse_user_amount("0.39", "the rate") == Decimal("0.39")
    with pytest.raises(ValueError, match="the rate '1,2,3' is not a number; write digits"):
        parse_user_amount("1,2,3", "the rate")


def test_in_an_english_locale_the_comma_groups_thousands_unless_it_cannot(german_locale):
    QLocale.setDefault(QLocale(QLocale.Language.English, QLocale.Country.UnitedStates))
    assert parse_user_amount("1,234", "the budget") == Decimal("1234")
    assert parse_user_amount("0,39", "the rate") == Decimal("0.39")
