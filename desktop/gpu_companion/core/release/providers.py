"""Provider commands that address one instance by its id: presets for the providers' own CLIs
(their credentials stay in the CLI's own config), custom templates, and a dry run that shows the
argv and makes only a read-only call."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.hosts.registry import Host

PLACEHOLDERS = ("alias", "hostname", "port", "user", "instance_id")


@dataclass(frozen=True)
class ProviderPreset:
    name: str
    release: str
    stop: str
    show: str  # read-only: what the dry run calls
    install_hint: str


PRESETS: dict[str, ProviderPreset] = {
    "vast.ai": ProviderPreset(
        "vast.ai",
        release="vastai destroy instance {instance_id}",
        stop="vastai stop instance {instance_id}",
        show="vastai show instance {instance_id}",
        install_hint="pip install vastai; vastai set api-key YOUR_KEY",
    ),
    "runpod": ProviderPreset(
        "RunPod",
        release="runpodctl remove pod {instance_id}",
        stop="runpodctl stop pod {instance_id}",
        show="runpodctl get pod {instance_id}",
        install_hint="install runpodctl, then: runpodctl config --apiKey YOUR_KEY",
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


def command_argv(template: str, target: Target) -> list[str]:
    """Split like a shell, then fill `{alias}`, `{hostname}`, `{port}`, `{user}`,
    `{instance_id}` per word, so a value can never become an extra argument."""
    try:
        words = shlex.split(template)
    except ValueError as exc:
        raise ValidationError(
            "release_command", f"The release command does not parse: {exc}."
        ) from exc
    if not words:
        raise ValidationError("release_command", "The release command is empty.")
    if "{instance_id}" in template and not target.instance_id.strip():
        raise UserError(
            f"{target.alias} has no instance id, and the command needs one.",
            hint="Edit the host and paste the instance id from the provider's console.",
        )
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
                f"Unknown placeholder in {word!r} ({exc}); use {{"
                + "}, {".join(PLACEHOLDERS)
                + "}.",
            ) from exc
    return argv


@dataclass(frozen=True)
class DryRun:
    argv: list[str]  # what the action would run (never run here)
    check_argv: list[str]  # the read-only call made instead, when the preset has one
    check_code: int | None = None
    check_output: str = ""


def dry_run(
    action_template: str,
    target: Target,
    run: Callable[[Sequence[str]], tuple[int, str]],
    show_template: str = "",
) -> DryRun:
    """ "Test the command": the action's argv as data, plus the provider's read-only "show"
    call where one is known, so a wrong id or a missing API key shows before it matters."""
    argv = command_argv(action_template, target)
    if not show_template:
        return DryRun(argv, [])
    check = command_argv(show_template, target)
    try:
        code, output = run(check)
    except FileNotFoundError:
        return DryRun(argv, check, 127, f"{check[0]} is not installed on this computer.")
    return DryRun(argv, check, code, output[-2000:])


def run_check(argv: Sequence[str], timeout: float = 60) -> tuple[int, str]:
    """Run the read-only call for `dry_run`; a missing program raises FileNotFoundError, which
    `dry_run` turns into words."""
    try:
        done = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return 124, f"{argv[0]} did not answer within {timeout:g} s."
    return done.returncode, done.stdout + done.stderr


def preset_for(command: str) -> ProviderPreset | None:
    """The preset a command template comes from (by its program), for the read-only call."""
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return None
    return next((p for p in PRESETS.values() if p.release.split()[0] == program), None)
