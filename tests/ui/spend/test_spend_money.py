"""The Spend page's dialogs read money in the user's locale and meter a per-GPU price for the
whole instance, showing how the instance rate was derived."""

from datetime import timedelta, timezone
from decimal import Decimal

import pytest
from PySide6.QtCore import QLocale
from PySide6.QtWidgets import QDialogButtonBox

from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.ui.spend.dialogs import BudgetDialog, StartRentalDialog


@pytest.fixture
def platform(ctx, manual_clock):
    ctx.ledger.clock = manual_clock
    ctx.ledger.tz = timezone.utc
    p = ctx.registry.save_platform(Platform("lambda", "", "second", "USD"))
    ctx.registry.save_host(Host("h100x8", "1.2.3.4", 22, "ubuntu", p.id, "H100 SXM", 8))
    return p


@pytest.fixture
def german_locale():
    before = QLocale()
    QLocale.setDefault(QLocale(QLocale.Language.German, QLocale.Country.Germany))
    yield
    QLocale.setDefault(before)


def _save(dialog) -> None:
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()


def test_a_per_gpu_price_is_metered_for_all_gpus_with_its_derivation(ctx, platform, qtbot):
    dialog = StartRentalDialog(ctx)
    qtbot.addWidget(dialog)
    assert dialog.gpu_count.value() == 8
    dialog.rate.setText("2,65")  # a decimal comma in an English locale: 2.65, not 265
    assert dialog.derivation.text() == "Metered at $2.65/h for the instance."
    dialog.rate_basis.setCurrentIndex(dialog.rate_basis.findData("gpu"))
    assert dialog.derivation.text() == "Metered at 8 × $2.65 = $21.20/h for the instance."
    _save(dialog)
    assert dialog.result() == dialog.DialogCode.Accepted
    rental = dialog.result_value
    assert (rental.rate, rental.gpu_count) == (Decimal("21.20"), 8)
    assert rental.cost_at(rental.started_at + timedelta(hours=2)) == 4240


def test_a_rate_that_cannot_be_read_is_named_and_nothing_is_metered(ctx, platform, qtbot):
    dialog = StartRentalDialog(ctx)
    qtbot.addWidget(dialog)
    dialog.rate.setText("2,6,5")
    assert "not a number" in dialog.derivation.text()
    _save(dialog)
    assert "The rate '2,6,5' is not a number" in dialog.error.text()
    assert dialog.result() != dialog.DialogCode.Accepted and not ctx.ledger.running()


def test_the_budget_dialog_reads_the_users_locale(ctx, platform, qtbot, german_locale):
    dialog = BudgetDialog(ctx)
    qtbot.addWidget(dialog)
    dialog.amount.setText("1.234,50")
    _save(dialog)
    assert dialog.result() == dialog.DialogCode.Accepted
    assert dialog.result_value.amount_minor == 123450
    again = BudgetDialog(ctx)
    qtbot.addWidget(again)
    again.amount.setText("1.234")  # thousands in German: 1,234.00
    _save(again)
    assert again.result_value.amount_minor == 123400
