"""What the app knows of a provider's instance, and the one interface every provider adapter
(vast.ai, RunPod, a custom platform's command templates) answers.

An adapter never prompts, never trusts an exit code, and turns every refusal into a
`ProviderError` whose message says what the provider said; the caller reads the instance back
to learn what really happened."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal, Protocol

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import N_, _

# What the app makes of a provider's own words for an instance's state.
State = Literal["running", "starting", "stopped", "gone", "other"]
Action = Literal["destroy", "stop"]

# The states and actions in a sentence a user reads ("reports instance 123 running"); the
# values themselves stay the app's own words (compared, stored).
_STATE_WORDS = {
    "running": N_("running"),
    "starting": N_("starting"),
    "stopped": N_("stopped"),
    "gone": N_("gone"),
    "other": N_("other"),
}
_ACTION_WORDS = {"destroy": N_("destroy"), "stop": N_("stop")}


def state_words(state: str) -> str:
    """A state (the app's or the provider's own word) as the user reads it."""
    return _(_STATE_WORDS[state]) if state in _STATE_WORDS else state


def action_words(action: str) -> str:
    """'destroy' or 'stop' as the user reads it."""
    return _(_ACTION_WORDS[action]) if action in _ACTION_WORDS else action


class ProviderError(UserError):
    """The provider refused, could not be reached, or answered something the app cannot read.
    `said` is the provider's own answer (trimmed), kept on the release record."""

    def __init__(self, message: str, *, hint: str = "", said: str = "") -> None:
        super().__init__(message, hint=hint)
        self.said = said


@dataclass(frozen=True)
class Instance:
    """One instance as the provider lists it. Money is the provider's own price, as a Decimal
    per hour for the whole instance (all its GPUs), in `currency`."""

    id: str
    state: State
    provider_state: str = ""  # the provider's own word, shown to the user ("exited", "EXITED")
    label: str = ""
    ssh_host: str = ""
    ssh_port: int = 0
    ssh_user: str = "root"
    gpu_model: str = ""
    gpu_count: int = 0
    hourly: Decimal | None = None  # while running
    storage_hourly: Decimal | None = None  # what it costs while stopped (disk), when known
    currency: str = "USD"
    billing_mode: str = "on-demand"  # "on-demand" | "spot" (interruptible, bid)


@dataclass(frozen=True)
class Reading:
    """One read-back of one instance: its state (`gone` when the provider no longer has it) and
    what the provider said, for the record."""

    state: State
    said: str = ""
    instance: Instance | None = None


class Provider(Protocol):
    """One provider account. Every call is non-interactive and bounded in time; a refusal,
    an unreachable API or an unreadable answer raises `ProviderError`."""

    name: str  # "vast.ai", "RunPod", or the custom platform's name

    def check_id(self, instance_id: str) -> str:
        """The id, stripped, when it has the provider's shape; ValidationError otherwise (an id
        starting with '-' or with spaces is never sent anywhere)."""
        ...

    def instances(self) -> list[Instance]:
        """Every instance of the account, whatever its state."""
        ...

    def read(self, instance_id: str) -> Reading:
        """The instance's state now; `gone` when the provider answers that it does not have it
        (a 404, an empty answer): never `gone` on an error."""
        ...

    def request(self, instance_id: str, action: Action) -> str:
        """Ask for a destroy or a stop; returns what the provider said. Success here is only a
        claim: the caller reads the instance back."""
        ...
