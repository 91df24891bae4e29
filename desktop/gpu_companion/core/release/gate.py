"""Release itself: only from a passed checklist, or an override typed out with a reason.

Order: run the platform's release command (when one is set and confirmed), then end the meter,
record the evidence, mark the host released and drop its ssh config block. The command goes
first because if the provider refuses, the instance is still billing: the meter must keep going
and the host stays active (the failure is recorded with its evidence).
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.hosts.registry import Host, HostRegistry
from gpu_companion.core.release.checklist import ReleaseChecklist
from gpu_companion.core.release.context import (
    ReleaseRecord,
    RentalLedger,
    SshConfigBlocks,
    utcnow,
)
from gpu_companion.core.release.providers import command_argv, target_of

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Override:
    typed_alias: str
    reason: str


@dataclass(frozen=True)
class CommandResult:
    code: int
    output: str


def validate_override(host: Host, override: Override) -> None:
    if override.typed_alias.strip() != host.alias:
        raise ValidationError(
            "typed_alias", f"Type the host alias exactly ({host.alias}) to release it anyway."
        )
    if not override.reason.strip():
        raise ValidationError("reason", "Say why this host is released without a passed checklist.")


def release_argv(template: str, host: Host) -> list[str]:
    """The release command as argv: split like a shell would, then `{alias}`, `{hostname}`,
    `{port}`, `{user}`, `{instance_id}` filled per word, so a value can never become an extra
    argument."""
    return command_argv(template, target_of(host))


def run_local(argv: Sequence[str], timeout: float = 300) -> CommandResult:
    try:
        done = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout, check=False
        )
    except FileNotFoundError as exc:
        raise UserError(
            f"The release command {argv[0]!r} was not found on this computer.",
            hint="Install the provider's CLI or fix the command in the settings.",
        ) from exc
    except subprocess.TimeoutExpired as exc:
        return CommandResult(124, f"timed out after {timeout:.0f} s: {exc}")
    return CommandResult(done.returncode, (done.stdout + done.stderr)[-4000:])


@dataclass
class ReleaseServices:
    ledger: RentalLedger
    registry: HostRegistry
    ssh_config: SshConfigBlocks
    clock: Callable[[], datetime] = utcnow
    run_command: Callable[[Sequence[str]], CommandResult] = run_local


def failing_items(checklist: ReleaseChecklist) -> tuple[str, ...]:
    out = []
    for it in checklist.blockers():
        summary = f": {it.evidence.summary}" if it.evidence else ""
        out.append(f"{it.title} [{it.state.value}]{summary}")
    return tuple(out)


def release_host(
    checklist: ReleaseChecklist,
    services: ReleaseServices,
    command: Sequence[str] = (),
    override: Override | None = None,
) -> ReleaseRecord:
    host = checklist.host
    if override is None and not checklist.ready():
        names = ", ".join(it.title for it in checklist.blockers())
        raise UserError(
            f"{host.alias} cannot be released yet: {names} not passed.",
            hint="Run the checklist again, or release anyway with a reason.",
        )
    if override is not None:
        validate_override(host, override)
    record = ReleaseRecord(
        host_alias=host.alias,
        kind="release" if override is None else "override",
        at=services.clock().replace(microsecond=0),
        evidence=tuple(e.as_dict() for e in checklist.evidence()),
        failing_items=failing_items(checklist),
        reason=override.reason.strip() if override else "",
        release_command=tuple(command),
    )
    if command:
        result = services.run_command(command)
        record = replace(record, command_output=result.output)
        if result.code != 0:
            services.ledger.record_release(replace(record, kind="failed"))
            raise UserError(
                f"The release command exited {result.code}: {host.alias} may still be running "
                "and billing, so its meter keeps going and it stays active.",
                hint=result.output.strip()[-300:],
            )
    services.ledger.end_meter(host, record)
    record = replace(record, id=services.ledger.record_release(record))
    services.registry.save_host(replace(host, state="released"))
    services.ssh_config.remove_host(host.alias)
    return record
