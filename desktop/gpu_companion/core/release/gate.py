"""Release itself: only from a passed checklist, or an override typed out with a reason.

With a provider (an API account, or a custom platform's commands): the instance is read first
(an id the provider does not have is refused), the intent is journaled, the destroy or stop is
asked, and the instance is read back until the provider reports it gone (or stopped). Only then
does the meter end, the host count as released and its ssh config block go. A refusal, an
unconfirmed state or a timeout keeps the meter running and the host active, records what the
provider said, and is raised in words. Without a provider the user released it by hand.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import Host, HostRegistry
from gpu_companion.core.providers.confirm import confirmed, read_back
from gpu_companion.core.providers.model import (
    Action,
    Provider,
    ProviderError,
    Reading,
    action_words,
    state_words,
)
from gpu_companion.core.release.checklist import ReleaseChecklist
from gpu_companion.core.release.context import (
    ReleaseRecord,
    RentalLedger,
    SshConfigBlocks,
    utcnow,
)
from gpu_companion.core.release.journal import ReleaseJournal

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Override:
    typed_alias: str
    reason: str


def validate_override(host: Host, override: Override) -> None:
    if override.typed_alias.strip() != host.alias:
        raise ValidationError(
            "typed_alias",
            _("Type the host alias exactly ({host}) to release it anyway.").format(host=host.alias),
        )
    if not override.reason.strip():
        raise ValidationError(
            "reason", _("Say why this host is released without a passed checklist.")
        )


class Withdrawn(Exception):  # noqa: N818 - not an error: someone said no in time
    """`may_proceed()` said no right before the provider would have been asked: nothing was
    sent, nothing changed."""


@dataclass(frozen=True)
class InstanceAction:
    """What to ask of which provider for the host's instance."""

    provider: Provider
    instance_id: str
    action: Action = "destroy"

    def describe(self) -> str:
        want = state_words("gone" if self.action == "destroy" else "stopped")
        return _(
            "ask {provider} to {action} instance {id}, then read it back until {provider} "
            "reports it {state}"
        ).format(
            provider=self.provider.name,
            action=action_words(self.action),
            id=self.instance_id,
            state=want,
        )

    def with_action(self, action: Action) -> InstanceAction:
        return replace(self, action=action)


@dataclass
class ReleaseServices:
    ledger: RentalLedger
    registry: HostRegistry
    ssh_config: SshConfigBlocks
    journal: ReleaseJournal | None = None
    clock: Callable[[], datetime] = utcnow
    confirm_within_s: float = 180.0
    confirm_every_s: float = 3.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)
    mono: Callable[[], float] = field(default=time.monotonic, repr=False)


def failing_items(checklist: ReleaseChecklist) -> tuple[str, ...]:
    out = []
    for it in checklist.blockers():
        summary = f": {it.evidence.summary}" if it.evidence else ""
        out.append(f"{it.title} [{it.state.text}]{summary}")
    return tuple(out)


def release_host(
    checklist: ReleaseChecklist,
    services: ReleaseServices,
    action: InstanceAction | None = None,
    override: Override | None = None,
    kind: str = "",
    may_proceed: Callable[[], bool] | None = None,
) -> ReleaseRecord:
    """Release `checklist.host` (or stop it, by `action`); `kind` names an unattended one.
    `may_proceed()` is asked last, right before the provider is (the unattended release asks
    whether the user kept the instance meanwhile): False raises `Withdrawn`, nothing sent."""
    host = checklist.host
    if override is None and not checklist.ready():
        names = ", ".join(it.title for it in checklist.blockers())
        raise UserError(
            _("{host} cannot be released yet: {items} not passed.").format(
                host=host.alias, items=names
            ),
            hint=_("Run the checklist again, or release anyway with a reason."),
        )
    if override is not None:
        validate_override(host, override)
    record = ReleaseRecord(
        host_alias=host.alias,
        kind=kind or ("release" if override is None else "override"),
        at=services.clock().replace(microsecond=0),
        evidence=tuple(e.as_dict() for e in checklist.evidence()),
        failing_items=failing_items(checklist),
        reason=override.reason.strip() if override else "",
        release_command=(action.describe(),) if action else (),
    )
    if action is None:
        if may_proceed is not None and not may_proceed():
            raise Withdrawn(host.alias)
        return finish_release(services, host, record, "destroy", None)
    return _through_provider(services, host, record, action, may_proceed)


def _through_provider(
    services: ReleaseServices,
    host: Host,
    record: ReleaseRecord,
    act: InstanceAction,
    may_proceed: Callable[[], bool] | None = None,
) -> ReleaseRecord:
    provider, name = act.provider, act.provider.name
    instance_id = provider.check_id(act.instance_id)
    try:
        before = provider.read(instance_id)
    except ProviderError as exc:
        raise UserError(
            _(
                "{provider} could not be read before the release: {error} Nothing was sent, and "
                "{host}'s meter keeps going."
            ).format(provider=name, error=exc.message, host=host.alias),
            hint=exc.hint,
        ) from exc
    if before.state == "gone":
        raise UserError(
            _(
                "{provider} has no instance {id}: nothing was released, and {host}'s meter "
                "keeps going."
            ).format(provider=name, id=instance_id, host=host.alias),
            hint=_(
                "Check the host's instance id against the provider's console (Hosts page → "
                "Edit host), or sync the provider account: an instance it no longer has is "
                "marked gone and its meter ends."
            ),
        )
    if confirmed(act.action, before):  # already stopped: nothing to ask
        return _confirmed(services, host, record, act, before, None)
    if may_proceed is not None and not may_proceed():
        raise Withdrawn(host.alias)
    entry = None
    if services.journal is not None:
        entry = services.journal.open(
            host_id=host.id,
            host_alias=host.alias,
            platform_id=host.platform_id,
            provider=name,
            instance_id=instance_id,
            action=act.action,
            kind=record.kind,
            at=record.at,
            record=_record_json(record),
        )
    try:
        said = provider.request(instance_id, act.action)
    except ProviderError as exc:  # refused, or no answer: maybe it happened all the same
        said = f"{exc.message} {exc.said}".strip()
        after = _read_once(provider, instance_id)
        if not confirmed(act.action, after):
            _unconfirmed(services, entry, record, "refused", said)
            raise UserError(
                _(
                    "{provider} did not {action} instance {id}: {error} {host} may still be "
                    "billing, so its meter keeps going and it stays active."
                ).format(
                    provider=name,
                    action=action_words(act.action),
                    id=instance_id,
                    error=exc.message,
                    host=host.alias,
                ),
                hint=_(
                    "Nothing changed in the app. Look at the instance in the provider's console, "
                    "then release again."
                ),
            ) from exc
        return _confirmed(services, host, record, act, after, entry)
    if services.journal is not None and entry is not None:
        services.journal.step(entry, "requested", said)
    back = read_back(
        provider,
        instance_id,
        act.action,
        within_s=services.confirm_within_s,
        every_s=services.confirm_every_s,
        sleep=services.sleep,
        mono=services.mono,
    )
    if not back.ok:
        state = back.last.state
        words = state_words("running" if state in ("running", "starting") else state)
        _unconfirmed(services, entry, record, "unconfirmed", f"{said}\n{back.last.said}".strip())
        raise UserError(
            _(
                "{provider} still reports instance {id} {state} after the {action} request "
                "({reads} reads in {seconds} s): {host} stays active and its meter keeps going."
            ).format(
                provider=name,
                id=instance_id,
                state=words,
                action=action_words(act.action),
                reads=back.reads,
                seconds=f"{services.confirm_within_s:g}",
                host=host.alias,
            ),
            hint=_(
                "Look at the instance in the provider's console; release again once it is gone."
            ),
        )
    return _confirmed(services, host, record, act, back.last, entry, said)


def _read_once(provider: Provider, instance_id: str) -> Reading:
    try:
        return provider.read(instance_id)
    except ProviderError as exc:
        return Reading("other", exc.message)


def _record_json(record: ReleaseRecord) -> dict[str, object]:
    data = asdict(record)
    data["at"] = record.at.isoformat()
    return data


def record_from_json(data: dict[str, object]) -> ReleaseRecord:
    def strings(key: str) -> tuple[str, ...]:
        value = data.get(key) or ()
        return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()

    evidence = data.get("evidence") or ()
    return ReleaseRecord(
        host_alias=str(data.get("host_alias", "")),
        kind=str(data.get("kind", "release")),
        at=datetime.fromisoformat(str(data["at"])),
        evidence=tuple(e for e in evidence if isinstance(e, dict))
        if isinstance(evidence, list | tuple)
        else (),
        failing_items=strings("failing_items"),
        reason=str(data.get("reason", "")),
        release_command=strings("release_command"),
    )


def _unconfirmed(
    services: ReleaseServices, entry: int | None, record: ReleaseRecord, outcome: str, said: str
) -> None:
    services.ledger.record_release(
        replace(record, kind="failed" if outcome == "refused" else "unconfirmed",
                command_output=said[-4000:])
    )  # fmt: skip
    if services.journal is not None and entry is not None:
        services.journal.resolve(entry, outcome, said)


def _confirmed(
    services: ReleaseServices,
    host: Host,
    record: ReleaseRecord,
    act: InstanceAction,
    reading: Reading,
    entry: int | None,
    said: str = "",
) -> ReleaseRecord:
    at = services.clock().replace(microsecond=0)
    output = "\n".join(x for x in (said, f"read back: {reading.state}. {reading.said}") if x)
    record = replace(record, at=max(at, record.at), command_output=output.strip()[-4000:])
    if services.journal is not None and entry is not None:
        services.journal.step(entry, "confirmed", reading.said)
    done = finish_release(
        services, host, record, "stop" if reading.state == "stopped" else "destroy", reading
    )
    if services.journal is not None and entry is not None:
        services.journal.resolve(entry, "confirmed", reading.said)
    return done


def finish_release(
    services: ReleaseServices,
    host: Host,
    record: ReleaseRecord,
    action: Action,
    reading: Reading | None,
) -> ReleaseRecord:
    """End the meter at `record.at`, keep the record, mark the host released (or stopped, its
    disk metered at the storage rate) and drop its ssh config block. Safe to run again after a
    crash: an ended meter is not ended twice."""
    services.ledger.end_meter(host, record)
    if action == "stop":
        services.ledger.start_stopped(host, record.at, reading.instance if reading else None)
    record = replace(record, id=services.ledger.record_release(record))
    current = services.registry.host(host.alias) or host
    state = "stopped" if action == "stop" else "released"
    services.registry.save_host(replace(current, state=state))
    services.ssh_config.remove_host(host.alias)
    return record
