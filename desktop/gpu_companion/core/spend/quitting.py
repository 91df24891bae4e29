"""What keeps running, and costing, on the provider when the app quits: quitting the app never
stops a rented instance, so the user is told which meters go on before the app goes away."""

from __future__ import annotations

from gpu_companion.core.common.money import format_money, to_minor
from gpu_companion.core.common.text import format_duration
from gpu_companion.core.spend.alerts import rental_name
from gpu_companion.core.spend.ledger import SpendLedger


def still_running_text(ledger: SpendLedger) -> str:
    """The warning to show before quitting, or "" when no billed rental is metered."""
    now = ledger.now()
    billed = [r for r in ledger.running() if r.billed]
    if not billed:
        return ""
    lines = []
    for r in billed:
        rate = format_money(to_minor(r.hourly_rate(), r.currency), r.currency)
        where = f" on {r.platform_name}" if r.platform_name else ""
        lines.append(
            f"• {rental_name(r)}{where}: {rate}/h, {format_duration(r.elapsed(now))} so far "
            f"({format_money(r.cost_at(now), r.currency)})"
        )
    one = len(billed) == 1
    platforms = sorted({r.platform_name for r in billed if r.platform_name})
    provider = " and ".join(platforms) or "the provider"
    head = "1 rental is" if one else f"{len(billed)} rentals are"
    it, instance = ("it", "The instance keeps") if one else ("them", "The instances keep")
    return (
        f"{head} still metered:\n" + "\n".join(lines) + "\n\n"
        f"Quitting GPU Companion does not stop {it}. {instance} running, and costing, on "
        f"{provider} until you release {it} there. While the app is closed, no idle or budget "
        "alerts are shown."
    )
