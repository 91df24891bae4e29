"""What keeps running, and costing, on the provider when the app quits: quitting the app never
stops a rented instance, so the user is told which meters go on before the app goes away."""

from __future__ import annotations

from gpu_companion.core.common.i18n import _, ngettext
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
        if r.platform_name:
            line = _("• {rental} on {platform}: {rate}/h, {duration} so far ({cost})")
        else:
            line = _("• {rental}: {rate}/h, {duration} so far ({cost})")
        lines.append(
            line.format(
                rental=rental_name(r),
                platform=r.platform_name,
                rate=rate,
                duration=format_duration(r.elapsed(now)),
                cost=format_money(r.cost_at(now), r.currency),
            )
        )
    n = len(billed)
    platforms = sorted({r.platform_name for r in billed if r.platform_name})
    provider = _(" and ").join(platforms) or _("the provider")
    head = ngettext("{n} rental is still metered:", "{n} rentals are still metered:", n)
    tail = ngettext(
        "Quitting GPU Companion does not stop it. The instance keeps running, and costing, on "
        "{provider} until you release it there. While the app is closed, no idle or budget "
        "alerts are shown.",
        "Quitting GPU Companion does not stop them. The instances keep running, and costing, "
        "on {provider} until you release them there. While the app is closed, no idle or "
        "budget alerts are shown.",
        n,
    )
    return head.format(n=n) + "\n" + "\n".join(lines) + "\n\n" + tail.format(provider=provider)
