"""Spend alerts: budget thresholds, planned runtime, left on overnight, idle GPU on a billed
rental, spot rental without a recent checkpoint sync.

Rules read an injected clock; each alert is remembered in the store the moment it fires, so the
same crossing never repeats, also across restarts. Per-rental alerts can be snoozed or muted.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, time, timedelta
from decimal import Decimal

from gpu_companion.core.common.clock import from_iso, to_iso
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.money import format_money, to_minor
from gpu_companion.core.common.notifier import Level, Message, Notifier
from gpu_companion.core.common.text import format_duration
from gpu_companion.core.spend.budgets import Budgets
from gpu_companion.core.spend.ledger import SpendLedger
from gpu_companion.core.spend.metering import Rental
from gpu_companion.core.storage.store import Store

RENTAL_ALERTS = ("runtime", "overnight", "idle", "spot-sync")
SOURCE = "spend"
QUIET_HOUR_SETTING = "alerts.quiet_hour"
IDLE_MINUTES = "alerts.idle_minutes.host."  # + host id: the wizard's "alert when idle for"
DEFAULT_QUIET_HOUR = "23:00"
QUIET_WINDOW = timedelta(hours=8)  # the night after the quiet hour in which the alert may fire
RUNTIME_WARNING = timedelta(minutes=15)

LastSync = Callable[[int], "datetime | None"]


def _no_sync_known(host_id: int) -> datetime | None:
    return None


def save_idle_minutes(store: Store, host_id: int, minutes: int) -> None:
    """The host's idle-alert threshold as the user chose it (the wizard), kept by host id."""
    store.set_setting(f"{IDLE_MINUTES}{host_id}", str(int(minutes)))


def idle_minutes(store: Store, host_id: int) -> float | None:
    """The host's own idle-alert threshold in minutes; None: the monitor's default."""
    text = store.get_setting(f"{IDLE_MINUTES}{host_id}")
    return float(text) if text and text.isdigit() and int(text) > 0 else None


def rental_name(r: Rental) -> str:
    return r.host_alias or f"{r.platform_name} {r.gpu_model}".strip()


def idle_cost_message(rental: Rental, idle_minutes: float) -> str:
    """'3 h idle = ¥24 so far on vast-4090 (¥8/h)': what an idle stretch has cost."""
    cost = to_minor(rental.hourly_rate() * Decimal(str(idle_minutes)) / 60, rental.currency)
    rate = to_minor(rental.hourly_rate(), rental.currency)
    return _(
        "{duration} idle = {cost} so far on {rental} ({rate}/h). Release it or start work."
    ).format(
        duration=format_duration(timedelta(minutes=idle_minutes)),
        cost=format_money(cost, rental.currency, compact=True),
        rental=rental_name(rental),
        rate=format_money(rate, rental.currency, compact=True),
    )


def parse_quiet_hour(text: str) -> time | None:
    """'23:00' -> 23:00; '' -> None (the overnight alert is off)."""
    if not text.strip():
        return None
    try:
        return time.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            _("the quiet hour {text} is not a time like 23:00").format(text=repr(text))
        ) from None


class SpendAlerts:
    """Evaluates the rules (`check()`, e.g. once a minute) and posts new alerts to the notifier."""

    def __init__(
        self,
        ledger: SpendLedger,
        notifier: Notifier,
        budgets: Budgets | None = None,
        last_sync: LastSync | None = None,
        spot_sync_max_age: timedelta = timedelta(minutes=30),
    ) -> None:
        self.ledger = ledger
        self.store = ledger.store
        self.notifier = notifier
        self.budgets = budgets or Budgets(ledger)
        self.last_sync: LastSync = last_sync or _no_sync_known
        self.spot_sync_max_age = spot_sync_max_age

    # --- user controls --------------------------------------------------------------------
    def snooze(self, rental_id: int, kind: str, duration: timedelta) -> datetime:
        until = self.ledger.now() + duration
        self._set_pref(rental_id, kind, snoozed_until=to_iso(until))
        return until

    def mute(self, rental_id: int, kind: str, muted: bool = True) -> None:
        self._set_pref(rental_id, kind, muted=int(muted))

    def _set_pref(self, rental_id: int, kind: str, **values: object) -> None:
        if kind not in RENTAL_ALERTS:
            raise ValueError(f"unknown alert kind {kind!r}")
        with self.store.transaction() as db:
            db.table("alert_prefs").upsert(
                {"rental_id": rental_id, "kind": kind, **values}, pk=("rental_id", "kind")
            )

    def muted(self, rental_id: int, kind: str) -> bool:
        row = self.store.db.execute(
            "SELECT muted FROM alert_prefs WHERE rental_id = ? AND kind = ?", [rental_id, kind]
        ).fetchone()
        return bool(row and row[0])

    def suppressed(self, rental_id: int, kind: str) -> bool:
        row = self.store.db.execute(
            "SELECT muted, snoozed_until FROM alert_prefs WHERE rental_id = ? AND kind = ?",
            [rental_id, kind],
        ).fetchone()
        if row is None:
            return False
        if row[0]:
            return True
        return bool(row[1]) and from_iso(row[1]) > self.ledger.now()

    @property
    def quiet_hour(self) -> time | None:
        text = self.store.get_setting(QUIET_HOUR_SETTING, DEFAULT_QUIET_HOUR) or ""
        try:
            return parse_quiet_hour(text)
        except ValueError:
            return None

    def set_quiet_hour(self, text: str) -> None:
        parse_quiet_hour(text)  # raises with a message
        self.store.set_setting(QUIET_HOUR_SETTING, text.strip())

    # --- firing ---------------------------------------------------------------------------
    def _fire_once(self, log_key: str, message: Message) -> bool:
        with self.store.transaction() as db:
            cur = db.execute(
                "INSERT OR IGNORE INTO alert_log (key, fired_at) VALUES (?, ?)",
                [log_key, to_iso(self.ledger.now())],
            )
            fresh = cur.rowcount == 1
        if fresh:
            self.notifier.post(message)
        return fresh

    def _already(self, keys: list[str]) -> set[str]:
        if not keys:
            return set()
        marks = ",".join("?" * len(keys))
        rows = self.store.db.execute(
            f"SELECT key FROM alert_log WHERE key IN ({marks})", keys
        ).fetchall()
        return {r[0] for r in rows}

    def check(self) -> list[Message]:
        """Run every rule once; returns the messages posted now."""
        posted: list[Message] = []
        posted += self._check_budgets()
        for rental in self.ledger.running():
            posted += self._check_runtime(rental)
            posted += self._check_overnight(rental)
            posted += self._check_spot_sync(rental)
        return posted

    def _post(self, log_key: str, level: Level, text: str, key: str) -> list[Message]:
        message = Message(level, text, SOURCE, key, at=self.ledger.now())
        return [message] if self._fire_once(log_key, message) else []

    # --- rules ----------------------------------------------------------------------------
    def _check_budgets(self) -> list[Message]:
        out: list[Message] = []
        for st in self.budgets.statuses():
            b = st.budget
            period = to_iso(st.start)
            keys = [f"budget:{b.id}:{b.currency}:{period}:{t}" for t in st.crossed()]
            done = self._already(keys)
            new = [k for k in keys if k not in done]
            if not new:
                continue
            top = int(new[-1].rsplit(":", 1)[1])
            with self.store.transaction() as db:
                for k in new[:-1]:  # a jump past several thresholds says the highest once
                    db.execute(
                        "INSERT OR IGNORE INTO alert_log (key, fired_at) VALUES (?, ?)",
                        [k, to_iso(self.ledger.now())],
                    )
            spent = format_money(st.spent_minor, b.currency)
            limit = format_money(b.amount_minor, b.currency)
            text = _("{budget}: {percent}% used — {spent} of {limit}.").format(
                budget=b.title, percent=top, spent=spent, limit=limit
            )
            if st.forecast is not None and st.percent < 100:
                local = st.forecast.astimezone(self.ledger.tz)
                text += " " + _("At the current burn rate it runs out {when}.").format(
                    when=f"{local:%a %d %b %H:%M}"
                )
            text += " " + self._billing_now(b.currency, b.platform_id)
            level = Level.ERROR if top >= 100 else Level.WARNING
            out += self._post(new[-1], level, text, f"budget:{b.id}")
        return out

    def _billing_now(self, currency: str, platform_id: int | None) -> str:
        """'Billing now: vast-4090 at ¥8.00/h, ¥24.00 so far.': what spends the budget (an
        alert read on a phone has to say which instance to release)."""
        now = self.ledger.now()
        parts = [
            _("{rental} at {rate}/h, {cost} so far").format(
                rental=rental_name(r),
                rate=format_money(to_minor(r.hourly_rate(), r.currency), r.currency),
                cost=format_money(r.cost_at(now), r.currency),
            )
            for r in self.ledger.running()
            if r.currency == currency and r.billed and platform_id in (None, r.platform_id)
        ]
        if not parts:
            return _("Nothing is billing now.")
        return _("Billing now: {rentals}.").format(rentals="; ".join(parts))

    def _check_runtime(self, r: Rental) -> list[Message]:
        if r.planned_end is None or r.id is None or self.suppressed(r.id, "runtime"):
            return []
        now = self.ledger.now()
        plan = to_iso(r.planned_end)
        cost = format_money(r.cost_at(now), r.currency)
        if now >= r.planned_end:
            late = format_duration(now - r.planned_end)
            rate = format_money(to_minor(r.hourly_rate(), r.currency), r.currency)
            return self._post(
                f"runtime-over:{r.id}:{plan}",
                Level.WARNING,
                _(
                    "{rental} is {late} past its planned runtime and still billing ({rate}/h, "
                    "{cost} so far). Release it, or extend the plan."
                ).format(rental=rental_name(r), late=late, rate=rate, cost=cost),
                f"runtime:{r.id}",
            )
        if now >= r.planned_end - RUNTIME_WARNING:
            left = format_duration(r.planned_end - now)
            return self._post(
                f"runtime-soon:{r.id}:{plan}",
                Level.WARNING,
                _(
                    "{rental} reaches its planned runtime in {left} ({cost} so far): sync your "
                    "checkpoints before you release it."
                ).format(rental=rental_name(r), left=left, cost=cost),
                f"runtime:{r.id}",
            )
        return []

    def _check_overnight(self, r: Rental) -> list[Message]:
        quiet = self.quiet_hour
        if quiet is None or r.id is None or not r.billed or self.suppressed(r.id, "overnight"):
            return []
        now = self.ledger.now()
        local = now.astimezone(self.ledger.tz)
        q = local.replace(hour=quiet.hour, minute=quiet.minute, second=0, microsecond=0)
        if q > local:
            q -= timedelta(days=1)
        if now - q >= QUIET_WINDOW or r.started_at >= q:
            return []
        rate = format_money(to_minor(r.hourly_rate(), r.currency), r.currency)
        return self._post(
            f"overnight:{r.id}:{q.date().isoformat()}",
            Level.WARNING,
            _(
                "{rental} is still running at {time} — left on overnight? It bills {rate}/h "
                "({cost} so far)."
            ).format(
                rental=rental_name(r),
                time=f"{quiet:%H:%M}",
                rate=rate,
                cost=format_money(r.cost_at(now), r.currency),
            ),
            f"overnight:{r.id}",
        )

    def _check_spot_sync(self, r: Rental) -> list[Message]:
        if r.billing_mode != "spot" or r.id is None or r.host_id is None:
            return []
        if self.suppressed(r.id, "spot-sync"):
            return []
        now = self.ledger.now()
        last = self.last_sync(r.host_id)
        since = last or r.started_at
        if now - since < self.spot_sync_max_age:
            return []
        if last:
            text = _(
                "Spot rental {rental} has no checkpoint synced for {duration}: an interruption "
                "would lose that work. Sync checkpoints now."
            ).format(rental=rental_name(r), duration=format_duration(now - since))
        else:
            text = _(
                "Spot rental {rental} has no checkpoint synced since it started: an "
                "interruption would lose that work. Sync checkpoints now."
            ).format(rental=rental_name(r))
        return self._post(
            f"spot-sync:{r.id}:{to_iso(last) if last else 'never'}",
            Level.WARNING,
            text,
            f"spot-sync:{r.id}",
        )

    def on_idle(self, host_alias: str, idle_since: datetime) -> Message | None:
        """The GPU monitor's entry point: the host's GPUs have been idle since `idle_since`.
        Posts the cost of the idle stretch once per stretch, under the monitor's key
        `idle:<alias>` so the same banner updates; None when nothing is billed."""
        r = self.ledger.running_for_alias(host_alias)
        if r is None or r.id is None or not r.computing or self.suppressed(r.id, "idle"):
            return None
        minutes = max((self.ledger.now() - idle_since).total_seconds() / 60, 0)
        message = Message(
            Level.WARNING,
            idle_cost_message(r, int(minutes)),
            SOURCE,
            f"idle:{host_alias}",
            at=self.ledger.now(),
        )
        return message if self._fire_once(f"idle:{r.id}:{to_iso(idle_since)}", message) else None
