"""Entry points: the window by default, headless subcommands over the same core."""

from __future__ import annotations

import argparse
import importlib
import os
import sqlite3
import sys
from collections.abc import Sequence

from gpu_companion import __version__
from gpu_companion.core.common.i18n import _

# Each module in gpu_companion.commands exposes register(subparsers).
COMMAND_MODULES: list[str] = [
    "estimate",
    "ledger",
    "ssh_config",
    "doctor",
    "inspect",
    "fleet",
    "run",
    "hosts",
    "platforms",
    "keys",
    "transfer",
    "tunnel",
    "open",
    "watch",
    "providers",
    "release",
    "notify",
]


# Options of the window itself: with nothing else on the command line, no command parser is built.
GUI_OPTIONS = frozenset({"--smoke-test", "--background"})


def take_language(given: list[str]) -> tuple[str | None, list[str]]:
    """`--lang X` / `--lang=X` anywhere before a bare `--`, and the rest of the command line:
    the language is chosen before any parser is built, so help texts are translated too."""
    rest: list[str] = []
    lang = None
    it = iter(given)
    for arg in it:
        if arg == "--":
            rest += [arg, *it]
            break
        if arg == "--lang":
            lang = next(it, "")
        elif arg.startswith("--lang="):
            lang = arg.split("=", 1)[1]
        else:
            rest.append(arg)
    return lang, rest


def choose_language(lang: str | None) -> str:
    """Install the language for this process (`--lang`, else Settings, else the system)."""
    from gpu_companion.core.common import i18n
    from gpu_companion.core.common.paths import AppPaths

    language = i18n.choose(lang, AppPaths.default().config_dir)
    i18n.install(language)
    from gpu_companion.commands.argparse_words import lend_catalog

    lend_catalog()
    return language


def build_parser(commands: bool = True) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpu-companion",
        description=_(
            "GPU Companion: keys, ssh config, live GPU graphs, transfers, release gate "
            "and spend ledger for rented GPUs. Without a command, opens the window."
        ),
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"gpu-companion {__version__}",
        help=_("show program's version number and exit"),
    )
    parser.add_argument(
        "--lang",
        metavar="LANG",
        help=_(
            "language of the window and the commands: en or zh_CN (default: the one chosen "
            "in Settings, else the system's)"
        ),
    )
    parser.add_argument(
        "--smoke-test",
        action="store_true",
        help=_("start the whole app, render every page once and exit 0 (works offscreen)"),
    )
    parser.add_argument(
        "--background",
        action="store_true",
        help=_(
            "start in the tray without opening the window (start at login uses it); "
            "the window opens anyway when the desktop has no tray"
        ),
    )
    if not commands:
        return parser
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"gpu_companion.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from gpu_companion.core.system.platform_support import support

    lang, given = take_language(sys.argv[1:] if argv is None else list(argv))
    try:
        language = choose_language(lang)  # first: every word below is in it
    except ValueError as exc:
        print(f"gpu-companion: {exc}", file=sys.stderr)
        return 2
    kind, said = support()
    if kind == "unsupported":  # the window and every command alike: plainly, before anything
        print(f"gpu-companion: {said}", file=sys.stderr)
        return 2
    if kind == "untested":
        print(f"gpu-companion: {said}", file=sys.stderr)
    # the window starts without importing every command module (benchmarks/startup.py)
    args = build_parser(commands=not GUI_OPTIONS.issuperset(given)).parse_args(given)
    handler = getattr(args, "handler", None)
    if handler is not None:
        try:
            return int(handler(args))
        except BrokenPipeError:  # `gpu-companion ledger report | head`: the reader has enough
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # the exit's own flush must not fail again
            return 141
        except sqlite3.DatabaseError as exc:  # a page damaged mid-file: read only when used
            print(_("error: {problem}").format(problem=_store_problem(exc)), file=sys.stderr)
            return 2
    import gpu_companion.services  # noqa: F401  # before Qt: see below

    # Every module imported after PySide6 has its source read by PySide6's feature check; the
    # Qt-free services and core come first so only the ui modules pay for it.
    from gpu_companion.app import run_gui

    if args.smoke_test and not os.environ.get("QT_QPA_PLATFORM") and not os.environ.get("DISPLAY"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    elif no_display():
        print(
            _(
                "gpu-companion: there is no display here (neither DISPLAY nor WAYLAND_DISPLAY is "
                "set), so the window cannot open. Start it from your desktop session, or over ssh "
                "use the commands instead: `gpu-companion --help` lists them, and `gpu-companion "
                "watch` keeps the alert and auto-release rules running without a window."
            ),
            file=sys.stderr,
        )
        return 2
    return run_gui(
        [sys.argv[0]], smoke_test=args.smoke_test, background=args.background, language=language
    )


def _store_problem(exc: sqlite3.DatabaseError) -> str:
    """The one line every command prints for a database that fails under it, as the window
    says it: a full disk or a read-only folder by name, anything else as a damaged file."""
    from gpu_companion.core.common.paths import AppPaths
    from gpu_companion.core.storage.store import damaged, explain

    path = AppPaths.default().database
    problem = explain(exc, path) or damaged(path, exc)
    return str(problem)


def no_display() -> bool:
    """Linux without an X11 or Wayland display and no Qt platform chosen: Qt would abort with
    its own message and a hint about libxcb that is not the problem."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return False
    return not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def gui_main() -> int:
    return main([])
