"""What a rental costs at any instant, computed from timestamps alone (right after a restart,
a sleep or a crash), and how a cost is booked to days, weeks and months."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from decimal import Decimal
from typing import Any

from gpu_companion.core.common.money import to_minor

# "stopped": a stopped instance's disk, billed at the provider's storage rate until it is destroyed
BILLING_MODES = ("on-demand", "spot", "weekly", "monthly", "bought", "stopped")
HOURLY_MODES = ("on-demand", "spot", "bought")
CHARGE_KINDS = ("storage", "traffic", "fee", "credit")
OUTCOMES = ("", "success", "failure")
BUCKETS = ("day", "week", "month")
_STEP = {"second": 1, "minute": 60, "hour": 3600}
_PERIOD = {"weekly": 7 * 86400, "monthly": 30 * 86400}


def rate_unit(billing_mode: str) -> str:
    return {"weekly": "week", "monthly": "month"}.get(billing_mode, "hour")


def billed_seconds(elapsed: int, granularity: str) -> int:
    """Seconds charged for `elapsed` seconds: each started second, minute or hour counts whole."""
    if elapsed <= 0:
        return 0
    step = _STEP[granularity]
    return -(-elapsed // step) * step


def accrued_minor(
    rate: Decimal,
    currency: str,
    billing_mode: str,
    granularity: str,
    started_at: datetime,
    until: datetime,
) -> int:
    """The meter at `until`: hourly modes by the platform's granularity; weekly and monthly
    plans charge each started period (a week, a 30-day month) in full."""
    elapsed = int((until - started_at).total_seconds())
    if elapsed <= 0:
        return 0
    if billing_mode in _PERIOD:
        periods = -(-elapsed // _PERIOD[billing_mode])
        return to_minor(rate * periods, currency)
    return to_minor(rate * billed_seconds(elapsed, granularity) / 3600, currency)


def planned_cost(
    rate: Decimal, currency: str, billing_mode: str, granularity: str, hours: int | Decimal
) -> int:
    """What `hours` of a rental at `rate` will cost, metered exactly as the ledger will."""
    start = datetime(2000, 1, 1, tzinfo=timezone.utc)
    end = start + timedelta(seconds=int(Decimal(hours) * 3600))
    return accrued_minor(rate, currency, billing_mode, granularity, start, end)


@dataclass(frozen=True)
class Rental:
    """One metered rental. `rate` is per instance-hour (all its GPUs together), per week or
    month for those plans; a per-GPU price is multiplied out before it is stored."""

    platform_id: int
    rate: Decimal
    currency: str
    started_at: datetime
    billing_mode: str = "on-demand"
    granularity: str = "second"
    host_id: int | None = None
    host_alias: str = ""
    gpu_model: str = ""
    gpu_count: int = 1
    planned_end: datetime | None = None
    ended_at: datetime | None = None
    cost_minor: int | None = None  # fixed when the meter stops (or given by an imported bill)
    tag: str = ""
    outcome: str = ""
    notes: str = ""
    end_reason: str = ""
    evidence: dict[str, Any] = field(default_factory=dict, compare=False)
    ref: str = ""
    id: int | None = None
    platform_name: str = field(default="", compare=False)

    @property
    def running(self) -> bool:
        return self.ended_at is None

    @property
    def billed(self) -> bool:
        """Whether a running rental costs money by the hour (bought hardware may not)."""
        return self.rate > 0

    @property
    def computing(self) -> bool:
        """Billed for a running machine (a stopped one bills its disk, but nothing runs)."""
        return self.billed and self.billing_mode != "stopped"

    def elapsed(self, now: datetime) -> timedelta:
        end = self.ended_at or now
        return max(end - self.started_at, timedelta(0))

    def cost_at(self, now: datetime) -> int:
        """The accrued cost at `now` (the final cost once the meter has stopped)."""
        if self.ended_at is not None and self.cost_minor is not None:
            return self.cost_minor
        until = min(now, self.ended_at) if self.ended_at else now
        return accrued_minor(
            self.rate,
            self.currency,
            self.billing_mode,
            self.granularity,
            self.started_at,
            until,
        )

    def booked_until(self, t: datetime, now: datetime) -> int:
        """How much of the cost is booked before instant `t`: the meter for a running rental,
        the final cost spread evenly over its time for an ended one. Differences of this
        function split a cost across periods and always add up to the whole."""
        if t <= self.started_at:
            return 0
        if self.ended_at is None:
            return self.cost_at(min(t, now))
        total = self.cost_at(now)
        duration = int((self.ended_at - self.started_at).total_seconds())
        if t >= self.ended_at or duration <= 0:
            return total
        part = int((t - self.started_at).total_seconds())
        return total * part // duration

    def cost_between(self, start: datetime, end: datetime, now: datetime) -> int:
        return self.booked_until(end, now) - self.booked_until(start, now)

    def hourly_rate(self) -> Decimal:
        """The rate per hour (weekly and monthly plans spread over their period)."""
        if self.billing_mode in _PERIOD:
            return self.rate * 3600 / _PERIOD[self.billing_mode]
        return self.rate


@dataclass(frozen=True)
class Charge:
    platform_id: int
    kind: str
    amount_minor: int  # credits are negative
    currency: str
    at: datetime
    description: str = ""
    rental_id: int | None = None
    ref: str = ""
    id: int | None = None
    platform_name: str = field(default="", compare=False)


# --- periods ----------------------------------------------------------------------------------


def bucket_start(when: datetime, bucket: str, tz: tzinfo) -> datetime:
    """The start (UTC) of the local day, week (Monday) or month containing `when`."""
    local = when.astimezone(tz)
    day = local.replace(hour=0, minute=0, second=0, microsecond=0)
    if bucket == "week":
        day -= timedelta(days=day.weekday())
    elif bucket == "month":
        day = day.replace(day=1)
    elif bucket != "day":
        raise ValueError(f"unknown period {bucket!r}")
    return day.astimezone(timezone.utc)


def next_bucket(start: datetime, bucket: str, tz: tzinfo) -> datetime:
    local = start.astimezone(tz)
    if bucket == "day":
        nxt = local + timedelta(days=1)
    elif bucket == "week":
        nxt = local + timedelta(days=7)
    else:
        nxt = local.replace(year=local.year + local.month // 12, month=local.month % 12 + 1)
    return nxt.astimezone(timezone.utc)


def bucket_label(start: datetime, bucket: str, tz: tzinfo) -> str:
    local = start.astimezone(tz)
    return local.strftime("%Y-%m") if bucket == "month" else local.strftime("%Y-%m-%d")


def period_of(when: datetime, bucket: str, tz: tzinfo) -> tuple[datetime, datetime]:
    start = bucket_start(when, bucket, tz)
    return start, next_bucket(start, bucket, tz)
