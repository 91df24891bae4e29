"""The words the Spend page shows for the ledger's stored values (billing modes, outcomes, row
kinds, end reasons) and a rate with its unit. The stored values stay English (the database, CSV
exports and the code compare them); only what is shown is translated."""

from __future__ import annotations

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from gpu_companion.core.common.money import per_hour
from gpu_companion.core.spend.metering import BILLING_MODES, CHARGE_KINDS, OUTCOMES, rate_unit

RENTAL_KIND = "rental"  # an import row that is a rental, not a charge

# Keyed by the core's own tuples, so a new stored value cannot be left without a word.
BILLING_MODE_LABELS = dict(
    zip(
        BILLING_MODES,
        (
            str(QT_TRANSLATE_NOOP("SpendLabels", "on-demand")),
            str(QT_TRANSLATE_NOOP("SpendLabels", "spot")),
            str(QT_TRANSLATE_NOOP("SpendLabels", "weekly")),
            str(QT_TRANSLATE_NOOP("SpendLabels", "monthly")),
            str(QT_TRANSLATE_NOOP("SpendLabels", "bought")),
            str(QT_TRANSLATE_NOOP("SpendLabels", "stopped")),
        ),
        strict=True,
    )
)
OUTCOME_LABELS = dict(
    zip(
        OUTCOMES,  # "", "success", "failure"
        (
            str(QT_TRANSLATE_NOOP("SpendLabels", "(not decided)")),
            str(QT_TRANSLATE_NOOP("SpendLabels", "success")),
            str(QT_TRANSLATE_NOOP("SpendLabels", "failure")),
        ),
        strict=True,
    )
)
KIND_LABELS = dict(  # an import row's type: a rental or one of the charge kinds
    zip(
        (RENTAL_KIND, *CHARGE_KINDS),
        (
            str(QT_TRANSLATE_NOOP("SpendLabels", "rental")),
            str(QT_TRANSLATE_NOOP("SpendLabels", "storage")),
            str(QT_TRANSLATE_NOOP("SpendLabels", "traffic")),
            str(QT_TRANSLATE_NOOP("SpendLabels", "fee")),
            str(QT_TRANSLATE_NOOP("SpendLabels", "credit")),
        ),
        strict=True,
    )
)
# The short end reasons the app itself stores (the database keeps the English); any other
# reason (an auto-release rule's, an import's) is shown as stored.
END_REASONS = {
    "stopped on the Spend page": str(QT_TRANSLATE_NOOP("SpendLabels", "stopped on the Spend page")),
    "stopped": str(QT_TRANSLATE_NOOP("SpendLabels", "stopped")),
    "released": str(QT_TRANSLATE_NOOP("SpendLabels", "released")),
    "price change": str(QT_TRANSLATE_NOOP("SpendLabels", "price change")),
    "restarted": str(QT_TRANSLATE_NOOP("SpendLabels", "restarted")),
    "gone": str(QT_TRANSLATE_NOOP("SpendLabels", "gone")),
    "imported": str(QT_TRANSLATE_NOOP("SpendLabels", "imported")),
}
RATE_FORMATS = {  # an amount already formatted by core.common.money, per unit of the plan
    # (per hour: core.common.money.per_hour)
    "week": str(QT_TRANSLATE_NOOP("SpendLabels", "{amount}/week")),
    "month": str(QT_TRANSLATE_NOOP("SpendLabels", "{amount}/month")),
}


def _shown(labels: dict[str, str], value: str) -> str:
    label = labels.get(value)
    return value if label is None else QCoreApplication.translate("SpendLabels", label)


def billing_mode_text(mode: str) -> str:
    return _shown(BILLING_MODE_LABELS, mode)


def outcome_text(outcome: str, undecided: bool = False) -> str:
    """An outcome's word; no outcome is '' in a table, '(not decided)' as a choice."""
    return _shown(OUTCOME_LABELS, outcome) if outcome or undecided else ""


def kind_text(kind: str) -> str:
    return _shown(KIND_LABELS, kind)


def end_reason_text(reason: str) -> str:
    return _shown(END_REASONS, reason)


def rate_text(amount: str, billing_mode: str) -> str:
    """'$2.65/h', '¥300/month': `amount` from format_amount/format_money, with its plan's unit."""
    fmt = RATE_FORMATS.get(rate_unit(billing_mode))
    if fmt is None:
        return per_hour(amount)
    return QCoreApplication.translate("SpendLabels", fmt).format(amount=amount)
