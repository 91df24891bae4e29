"""What an alert is about (its kind), which kinds are about money, and quiet hours.

The kind comes from the message's key (`budget:<id>`, `autorelease:<alias>`, ...) the way the
notifier's posters already name them, then from its source; everything else is `other` (the
window's own "Host added." and the monitor's memory or throttle hints), which no channel gets
unless the user asks for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, tzinfo

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.common.notifier import Level, Message

KINDS: tuple[str, ...] = (
    "budget",
    "runtime",
    "overnight",
    "idle",
    "spot-sync",
    "autorelease",
    "unreachable",
    "orphan",
    "gone",
    "release",
    "other",
)
# What a new channel gets: every alert about a rental, none of the window's own chatter.
DEFAULT_KINDS: frozenset[str] = frozenset(KINDS) - {"other"}
# What still passes in quiet hours (with any Level.ERROR): a budget crossed, an auto-release
# counting down, done or blocked, a forgotten billed instance, a billed host that stopped answering.
MONEY_CRITICAL: frozenset[str] = frozenset({"budget", "autorelease", "orphan", "unreachable"})

# The notification title of each kind, marked here and translated where shown (`_(TITLES[k])`).
TITLES: dict[str, str] = {
    "budget": N_("Budget"),
    "runtime": N_("Planned runtime"),
    "overnight": N_("Left on overnight"),
    "idle": N_("Idle GPUs"),
    "spot-sync": N_("Spot checkpoint"),
    "autorelease": N_("Auto-release"),
    "unreachable": N_("Host unreachable"),
    "orphan": N_("Forgotten instance"),
    "gone": N_("Instance gone"),
    "release": N_("Release"),
    "other": N_("Notice"),
}

_BY_KEY: dict[str, str] = {
    "budget": "budget",
    "runtime": "runtime",
    "overnight": "overnight",
    "idle": "idle",
    "wake": "idle",  # idle while the computer slept; the countdown that follows is `autorelease`
    "spot-sync": "spot-sync",
    "autorelease": "autorelease",
    "unreachable": "unreachable",
    "orphan": "orphan",
    "gone": "gone",
    "journal": "release",
    "release-error": "release",
}
_BY_SOURCE: dict[str, str] = {"release": "release", "autorelease": "autorelease"}


def alert_kind(message: Message) -> str:
    """One of KINDS: by the key's prefix, then by the source, else `other`. The live monitor's
    own hints are `other` (window chatter): an idle hint on a billed host is followed by the spend
    alert under the same key, which carries the cost and honours snooze and mute."""
    if message.source == "monitor":
        return "other"
    prefix = message.key.split(":", 1)[0]
    return _BY_KEY.get(prefix) or _BY_SOURCE.get(message.source, "other")


def is_money_critical(message: Message, kind: str | None = None) -> bool:
    """Whether the alert passes quiet hours."""
    return message.level is Level.ERROR or (kind or alert_kind(message)) in MONEY_CRITICAL


def parse_kinds(text: str) -> frozenset[str]:
    """`budget,idle`, `all` (every kind, `other` included) or `default`; ValidationError else."""
    words = [w.strip().lower() for w in text.replace(" ", ",").split(",") if w.strip()]
    if not words:
        raise ValidationError("kinds", _("Name at least one alert kind (or 'all')."))
    chosen: set[str] = set()
    for word in words:
        if word == "all":
            chosen |= set(KINDS)
        elif word == "default":
            chosen |= DEFAULT_KINDS
        elif word in KINDS:
            chosen.add(word)
        else:
            raise ValidationError(
                "kinds",
                _("Unknown alert kind {kind}; the kinds are: {kinds}, all.").format(
                    kind=repr(word), kinds=", ".join(KINDS)
                ),
            )
    return frozenset(chosen)


def format_kinds(kinds: frozenset[str]) -> str:
    """In KINDS order, comma-separated (the stored form)."""
    return ",".join(k for k in KINDS if k in kinds)


_QUIET_RE = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)\s*-\s*([01]?\d|2[0-3]):([0-5]\d)$")


@dataclass(frozen=True)
class QuietHours:
    """A daily stretch of local time, `start` included, `end` excluded; it may span midnight."""

    start: time
    end: time

    @classmethod
    def parse(cls, text: str) -> QuietHours:
        match = _QUIET_RE.match(text.strip())
        if not match:
            raise ValidationError(
                "quiet",
                _(
                    "Quiet hours are HH:MM-HH:MM in local time (e.g. 23:00-07:00), not {text}."
                ).format(text=repr(text)),
            )
        h1, m1, h2, m2 = (int(g) for g in match.groups())
        quiet = cls(time(h1, m1), time(h2, m2))
        if quiet.start == quiet.end:
            raise ValidationError("quiet", _("Quiet hours must start and end at different times."))
        return quiet

    def __str__(self) -> str:
        return f"{self.start:%H:%M}-{self.end:%H:%M}"

    def contains(self, moment: datetime, tz: tzinfo | None = None) -> bool:
        """Whether `moment` (timezone-aware) falls in the stretch, read in `tz` (None: this
        computer's local time, daylight saving included)."""
        local = moment.astimezone(tz).time().replace(tzinfo=None)
        if self.start < self.end:
            return self.start <= local < self.end
        return local >= self.start or local < self.end
