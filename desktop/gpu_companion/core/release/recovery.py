"""The next start after a crash mid-release: each journal entry whose process died is resolved by
reading the instance back. Gone (or stopped, for a stop): the release is finished and metered to
the time it was confirmed. Still there: it is recorded unconfirmed and said in words, the meter
keeps going. A provider that cannot be read now leaves the entry for the next start."""

from __future__ import annotations

import logging
from dataclasses import replace

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.common.notifier import Notifier
from gpu_companion.core.providers.confirm import confirmed
from gpu_companion.core.providers.model import ProviderError, state_words
from gpu_companion.core.release.gate import finish_release, record_from_json
from gpu_companion.core.release.journal import JournalEntry
from gpu_companion.core.release.wiring import ReleaseWiring

log = logging.getLogger(__name__)


def resolve_interrupted(wiring: ReleaseWiring, notifier: Notifier) -> list[str]:
    """Resolve every entry left open by a dead process; what happened, one line per entry."""
    said = []
    for entry in wiring.journal.orphaned():
        if not wiring.journal.adopt(entry.id):
            continue  # another process took it
        try:
            text = _resolve(wiring, entry, notifier)
        except (UserError, LookupError) as exc:
            text = _(
                "The interrupted release of {host} could not be checked yet: {error} It is "
                "checked again at the next start."
            ).format(host=entry.host_alias, error=exc)
            notifier.warning(text, source="release", key=f"journal:{entry.id}")
        said.append(text)
    return said


def _resolve(wiring: ReleaseWiring, entry: JournalEntry, notifier: Notifier) -> str:
    host = next((h for h in wiring.registry.hosts() if h.id == entry.host_id), None)
    if host is None:
        raise LookupError(_("host {host} no longer exists.").format(host=entry.host_alias))
    action = wiring.instance_action(replace(host, instance_id=entry.instance_id), "destroy")
    if action is None:
        raise LookupError(
            _("{provider} is no longer set up for {host}.").format(
                provider=entry.provider, host=host.alias
            )
        )
    try:
        reading = action.provider.read(entry.instance_id)
    except ProviderError as exc:
        raise UserError(f"{exc.message} {exc.said}".strip()) from exc
    services = wiring.services()
    record = record_from_json(entry.record)
    verb = entry.action
    if confirmed("stop" if verb == "stop" else "destroy", reading):
        at = services.clock().replace(microsecond=0)
        record = replace(
            record,
            at=max(at, record.at),
            command_output=f"resolved at start-up: {reading.state}. {reading.said}".strip(),
        )
        finish_release(
            services, host, record, "stop" if reading.state == "stopped" else "destroy", reading
        )
        wiring.journal.resolve(entry.id, "confirmed", reading.said)
        text = _(
            "The interrupted release of {host} is confirmed: {provider} reports instance {id} "
            "{state}; its meter ended at {at} UTC."
        ).format(
            host=host.alias,
            provider=entry.provider,
            id=entry.instance_id,
            state=state_words(reading.state),
            at=f"{record.at:%Y-%m-%d %H:%M}",
        )
        notifier.info(text, source="release", key=f"journal:{entry.id}")
        return text
    words = state_words("running" if reading.state in ("running", "starting") else reading.state)
    services.ledger.record_release(
        replace(
            record,
            kind="unconfirmed",
            at=services.clock().replace(microsecond=0),
            command_output=f"interrupted at step {entry.step}; read back: {reading.said}",
        )
    )
    wiring.journal.resolve(entry.id, "unconfirmed", reading.said)
    text = _(
        "{provider} still reports instance {id} {state}: the release of {host} was interrupted "
        "({step}) and it is still billing. Release it again."
    ).format(
        provider=entry.provider,
        id=entry.instance_id,
        state=words,
        host=host.alias,
        step=entry.step,
    )
    notifier.warning(text, source="release", key=f"journal:{entry.id}")
    return text
