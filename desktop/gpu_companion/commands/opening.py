"""Opening the app's services for a headless command: a database the app cannot use (newer,
corrupt, read-only, disk full) is reported with the message the window shows, not a traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from gpu_companion.core.common.i18n import _

if TYPE_CHECKING:
    from gpu_companion.services import Services


def open_services() -> Services | None:
    """The app's `Services`, or None once the reason it cannot open was printed on stderr."""
    from gpu_companion.core.storage.store import StoreError
    from gpu_companion.services import build_services

    try:
        return build_services()
    except StoreError as exc:
        print(_("error: {problem}").format(problem=exc), file=sys.stderr)
        return None


@contextmanager
def english() -> Iterator[None]:
    """Messages built inside are English whatever the language: --json output is for scripts
    and stays locale-neutral (texts, labels and error messages in it included)."""
    from gpu_companion.core.common import i18n

    language = i18n.current()
    if language == i18n.DEFAULT:
        yield
        return
    i18n.install(i18n.DEFAULT)
    try:
        yield
    finally:
        i18n.install(language)


def run_action(
    command: str,
    actions: Mapping[str, Callable[[Services, argparse.Namespace], int]],
    name: str,
    args: argparse.Namespace,
) -> int:
    """Open the services, run the action `name`, close them; the exit codes every setup command
    shares: 1 refused (`refused (field): … Nothing was changed.`) or a user error, 2 an unusable
    data dir or keyring (one `error:` line)."""
    from gpu_companion.core.common.errors import UserError, ValidationError
    from gpu_companion.core.ssh.keyring_errors import KeyringUnavailable

    services = open_services()
    if services is None:
        return 2
    try:
        return actions[name](services, args)
    except KeyringUnavailable as exc:
        print(_("error: {problem}").format(problem=exc), file=sys.stderr)
        return 2
    except ValidationError as exc:
        print(_("gpu-companion {command}: refused ({field}): {message} Nothing was changed.")
              .format(command=command, field=exc.field, message=exc.message),
              file=sys.stderr)  # fmt: skip
        return 1
    except UserError as exc:
        print(
            _("gpu-companion {command}: {problem}").format(command=command, problem=exc),
            file=sys.stderr,
        )
        return 1
    finally:
        services.close()  # writes the managed ssh config for a change made here
