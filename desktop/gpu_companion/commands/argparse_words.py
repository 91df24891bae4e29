"""argparse's own words (usage, options, its errors), in the app's catalog: argparse reads them
through the module-level gettext functions it imported, which `lend_catalog` points at the app's.
The strings are argparse's (Python 3.10–3.13) exactly; one it changes is simply not translated."""

from __future__ import annotations

import argparse

from gpu_companion.core.common import i18n
from gpu_companion.core.common.i18n import N_

WORDS = (
    N_("usage: "),
    N_("options"),
    N_("positional arguments"),
    N_("show this help message and exit"),
    N_("show program's version number and exit"),
    N_("%(prog)s: error: %(message)s\n"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("the following arguments are required: %s"),
    N_("unrecognized arguments: %s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"),
    N_("expected one argument"),
    N_("expected at least one argument"),
    N_("expected at most one argument"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("not allowed with argument %s"),
    N_("one of the arguments %s is required"),
    N_("ignored explicit argument %r"),
    N_("can't open '%(filename)s': %(error)s"),
)


def lend_catalog() -> None:
    """argparse speaks the app's language from now on (a no-op in English)."""
    if i18n.current() != i18n.DEFAULT:
        argparse._ = i18n._  # type: ignore[attr-defined]
        argparse.ngettext = i18n.ngettext  # type: ignore[attr-defined]
