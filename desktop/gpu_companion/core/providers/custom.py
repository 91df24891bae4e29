"""A custom platform's commands: a release command template and a read-only verify template
(e.g. `mycloud show {instance_id}`) with the words its output shows once the instance is gone.

Each command runs with stdin closed (no prompt can be reached), a deadline, and placeholders
filled per word, so a value never becomes an extra argument. Its exit status is only a claim:
the release counts when the verify command's output says the instance is gone."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.providers.model import Action, Instance, ProviderError, Reading

PLACEHOLDERS = ("alias", "hostname", "port", "user", "instance_id")

# The providers' own CLIs cannot be trusted to release: `vastai destroy instance` answers a closed
# stdin with "Aborted." and exit 0, and exits 0 on a refused key or a wrong id; `runpodctl`'s
# legacy `remove/stop pod` are hidden and `stop pod` exits 0 on failure. Their API accounts do it.
UNTRUSTED_CLIS = {"vastai": "vast.ai", "runpodctl": "runpod"}
WHY_UNTRUSTED = {
    "vast.ai": N_(
        "without a terminal it answers 'Aborted.' and exits 0, and exits 0 on a refused key or "
        "a wrong id"
    ),
    "runpod": N_(
        "its legacy 'stop pod' exits 0 on failure and 'get pod' prints an empty table for a "
        "wrong id"
    ),
}


@dataclass(frozen=True)
class Target:
    """What a template may name about the instance."""

    alias: str
    hostname: str
    port: int
    user: str
    instance_id: str = ""


def target_of(host: Host) -> Target:
    return Target(host.alias, host.hostname, host.port, host.user, host.instance_id)


def check_instance_id(instance_id: str) -> str:
    """Any provider's id: one word, no leading '-' (it would read as an option)."""
    value = instance_id.strip()
    if not value:
        raise ValidationError("instance_id", _("The host has no instance id."))
    if value.startswith("-") or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValidationError(
            "instance_id",
            _(
                "{id} is not an instance id: it must be one word that does not start with '-', "
                "as the provider's console shows it."
            ).format(id=repr(value)),
        )
    return value


def command_argv(template: str, target: Target, what: str = N_("release command")) -> list[str]:
    """Split like a shell, then fill `{alias}`, `{hostname}`, `{port}`, `{user}`,
    `{instance_id}` per word, so a value can never become an extra argument. `what`: the
    command's name, marked with N_() (translated here)."""
    what = _(what)
    try:
        words = shlex.split(template)
    except ValueError as exc:
        raise ValidationError(
            "release_command", _("The {what} does not parse: {error}.").format(what=what, error=exc)
        ) from exc
    if not words:
        raise ValidationError("release_command", _("The {what} is empty.").format(what=what))
    if "{instance_id}" in template:
        if not target.instance_id.strip():
            raise UserError(
                _("{host} has no instance id, and the command needs one.").format(
                    host=target.alias
                ),
                hint=_("Edit the host and paste the instance id from the provider's console."),
            )
        check_instance_id(target.instance_id)
    values = {
        "alias": target.alias,
        "hostname": target.hostname,
        "port": str(target.port),
        "user": target.user,
        "instance_id": target.instance_id.strip(),
    }
    argv = []
    for word in words:
        try:
            argv.append(word.format_map(values))
        except (KeyError, ValueError, IndexError) as exc:
            raise ValidationError(
                "release_command",
                _("Unknown placeholder in {word} ({error}); use {placeholders}.").format(
                    word=repr(word),
                    error=exc,
                    placeholders=", ".join("{" + p + "}" for p in PLACEHOLDERS),
                ),
            ) from exc
    return argv


def untrusted_cli(template: str) -> str:
    """The provider whose own CLI the template calls ("" for none)."""
    try:
        program = shlex.split(template)[0].rsplit("/", 1)[-1]
    except (ValueError, IndexError):
        return ""
    return UNTRUSTED_CLIS.get(program, "")


@dataclass(frozen=True)
class CustomCommands:
    """A platform's templates; `gone_when` is text the verify output shows once the instance is
    gone, `running_when` text it shows while it still exists (either may be empty)."""

    release: str = ""
    verify: str = ""
    gone_when: str = ""
    running_when: str = ""

    def validated(self) -> CustomCommands:
        probe = Target("check", "example.org", 22, "root", "12345")
        release, verify = self.release.strip(), self.verify.strip()
        gone, running = self.gone_when.strip(), self.running_when.strip()
        if release:
            provider = untrusted_cli(release)
            if provider:
                raise ValidationError(
                    "release_command",
                    _(
                        "The {provider} CLI cannot be trusted to release ({why}): add a "
                        "{provider} provider account instead (gpu-companion providers add "
                        "{provider})."
                    ).format(provider=provider, why=_(WHY_UNTRUSTED[provider])),
                )
            command_argv(release, probe)
            if not verify or not (gone or running):
                raise ValidationError(
                    "verify_command",
                    _(
                        "A release command needs a read-only verify command and the words its "
                        "output shows once the instance is gone (or while it still runs): "
                        "without them the release could never be confirmed."
                    ),
                )
        if verify:
            command_argv(verify, probe, N_("verify command"))
        return CustomCommands(release, verify, gone, running)


@dataclass(frozen=True)
class CommandResult:
    code: int
    output: str


def run_local(argv: Sequence[str], timeout: float = 120) -> CommandResult:
    """Run with stdin closed: a command that asks a question reads end-of-file at once."""
    try:
        done = subprocess.run(
            list(argv),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError as exc:
        raise ProviderError(
            _("The command {command} was not found on this computer.").format(
                command=repr(argv[0])
            ),
            hint=_("Install the provider's CLI or fix the command in the release settings."),
        ) from exc
    except subprocess.TimeoutExpired:
        return CommandResult(
            124,
            _("{command} did not answer within {seconds} s.").format(
                command=argv[0], seconds=f"{timeout:g}"
            ),
        )
    return CommandResult(done.returncode, (done.stdout + done.stderr)[-4000:])


class CustomProvider:
    """The `Provider` of a platform without an API account, for one host's instance."""

    def __init__(
        self,
        name: str,
        commands: CustomCommands,
        target: Target,
        run: Callable[[Sequence[str]], CommandResult] = run_local,
    ) -> None:
        self.name, self.commands, self.target, self._run = name, commands, target, run

    def check_id(self, instance_id: str) -> str:
        return check_instance_id(instance_id) if instance_id.strip() else ""

    def instances(self) -> list[Instance]:
        raise ProviderError(
            _("{platform} has no API account: its instances cannot be listed.").format(
                platform=self.name
            )
        )

    def read(self, instance_id: str) -> Reading:
        c = self.commands
        if not c.verify:
            raise ProviderError(_("{platform} has no verify command.").format(platform=self.name))
        argv = command_argv(c.verify, self.target, N_("verify command"))
        result = self._run(argv)
        said = result.output.strip()[-500:]
        if c.gone_when and c.gone_when in result.output:
            return Reading("gone", said)
        if c.running_when and c.running_when in result.output:
            return Reading("running", said)
        if c.running_when and not c.gone_when and result.code == 0:
            return Reading("gone", said)  # it answered, and no longer says it runs
        if result.code != 0:
            raise ProviderError(
                _("The verify command exited {code}.").format(code=result.code),
                hint=said[-300:],
                said=said,
            )
        return Reading("other", said)

    def request(self, instance_id: str, action: Action) -> str:
        if action != "destroy" or not self.commands.release:
            if action == "stop":
                text = _("{platform} has no stop command.")
            else:
                text = _("{platform} has no release command.")
            raise ProviderError(
                text.format(platform=self.name),
                hint=_("Stopping needs a vast.ai or RunPod provider account."),
            )
        result = self._run(command_argv(self.commands.release, self.target))
        if result.code != 0:
            said = result.output.strip()[-500:]
            raise ProviderError(
                _("The release command exited {code}.").format(code=result.code),
                hint=said[-300:],
                said=said,
            )
        return result.output.strip()[-500:]


@dataclass(frozen=True)
class DryRun:
    argv: list[str]  # what the action would run (never run here)
    check_argv: list[str]  # the read-only verify call made instead
    check_code: int | None = None
    check_output: str = ""


def dry_run(
    commands: CustomCommands,
    target: Target,
    run: Callable[[Sequence[str]], CommandResult] = run_local,
) -> DryRun:
    """ "Test the command": the release argv as data, plus the read-only verify call, so a wrong
    id or a missing login shows before it matters."""
    argv = command_argv(commands.release, target) if commands.release else []
    if not commands.verify:
        return DryRun(argv, [])
    check = command_argv(commands.verify, target, N_("verify command"))
    try:
        result = run(check)
    except ProviderError as exc:
        return DryRun(argv, check, 127, str(exc))
    return DryRun(argv, check, result.code, result.output[-2000:])
