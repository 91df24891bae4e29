"""`gpu-companion ledger report | export FILE | import FILE`: the spend ledger without a window."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _, ngettext

if TYPE_CHECKING:  # the handlers import the ledger: `gpu-companion` parses its arguments first
    from gpu_companion.core.spend.ledger import SpendLedger


def register(sub: Any) -> None:
    p = sub.add_parser("ledger", help=_("spend ledger: report, CSV export and import"))
    cmds = p.add_subparsers(dest="ledger_command", metavar="ACTION", required=True)
    rep = cmds.add_parser("report", help=_("spend per platform for a day, week or month"))
    rep.add_argument("--period", choices=("day", "week", "month"), default="month")
    rep.add_argument("--at", help=_("a date inside the period (YYYY-MM-DD); default: today"))
    rep.set_defaults(handler=_report)
    exp = cmds.add_parser("export", help=_("write every rental and charge to a CSV file"))
    exp.add_argument("file", help=_("the CSV file to write ('-' for standard output)"))
    exp.set_defaults(handler=_export)
    imp = cmds.add_parser(
        "import", help=_("read rentals and charges from a CSV file (bad rows are refused)")
    )
    imp.add_argument("file", help=_("a CSV file: the export's format or a provider's bill"))
    imp.add_argument("--platform",
                     help=_("the platform of rows that name none (a provider's bill)"))  # fmt: skip
    imp.add_argument("--currency", help=_("the currency of rows that name none, e.g. USD"))
    imp.add_argument("--dry-run", action="store_true", help=_("check the file, store nothing"))
    imp.set_defaults(handler=_import)


def _ledger() -> SpendLedger | None:
    from gpu_companion.commands.opening import open_services

    services = open_services()
    return None if services is None else services.ledger


def _fail(message: str) -> int:
    print(_("error: {problem}").format(problem=message), file=sys.stderr)
    return 2


def _report(args: argparse.Namespace) -> int:
    at = None
    if args.at:
        try:
            at = datetime.fromisoformat(args.at).replace(tzinfo=timezone.utc)
        except ValueError:
            return _fail(
                _("--at {value} is not a date like 2025-01-31").format(value=repr(args.at))
            )
    from gpu_companion.core.common.money import format_money, format_totals
    from gpu_companion.core.spend.budgets import Budgets
    from gpu_companion.core.spend.reports import burn_text, period_report

    ledger = _ledger()
    if ledger is None:
        return 2
    try:
        rep = period_report(ledger, args.period, at)
        start = rep.start.astimezone(ledger.tz)
        last = (rep.end - timedelta(seconds=1)).astimezone(ledger.tz)
        print(
            _("Spend {start} – {last} ({period})").format(
                start=f"{start:%Y-%m-%d}", last=f"{last:%Y-%m-%d}", period=args.period
            )
        )
        if not rep.lines:
            print(_("  nothing recorded"))
        for ln in rep.lines:
            print(
                _(
                    "  {platform} {count} rentals {hours} h  rentals {rentals}  charges {charges}  "
                    "total {total}"
                ).format(
                    platform=f"{ln.platform:<20}",
                    count=f"{ln.rentals:>5}",
                    hours=f"{ln.hours:>10}",
                    rentals=f"{format_money(ln.rentals_minor, ln.currency):>12}",
                    charges=f"{format_money(ln.charges_minor, ln.currency):>10}",
                    total=f"{format_money(ln.total_minor, ln.currency):>12}",
                )
            )
        print(_("Total: {totals}").format(totals=format_totals(rep.totals)))
        running = ledger.running()
        if running:
            burn = burn_text(ledger) or _("nothing")
            print(_("Running now: {n} rental(s), burning {burn}").format(n=len(running), burn=burn))
        for st in Budgets(ledger).statuses():
            b = st.budget
            print(
                _("{title}: {percent}% — {spent} of {amount}").format(
                    title=b.title,
                    percent=st.percent,
                    spent=format_money(st.spent_minor, b.currency),
                    amount=format_money(b.amount_minor, b.currency),
                )
            )
        return 0
    finally:
        ledger.store.close()


def _export(args: argparse.Namespace) -> int:
    from gpu_companion.core.spend.ledger_csv import export_csv

    ledger = _ledger()
    if ledger is None:
        return 2
    try:
        if args.file == "-":
            count = export_csv(ledger, sys.stdout)
        else:
            dest = Path(args.file)
            fd, tmp = tempfile.mkstemp(prefix=".", suffix=".csv", dir=dest.parent or ".")
            try:
                with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
                    count = export_csv(ledger, out)
                os.replace(tmp, dest)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        print(ngettext("Exported {n} row to {file}.", "Exported {n} rows to {file}.", count)
              .format(n=count, file=args.file), file=sys.stderr)  # fmt: skip
        return 0
    except OSError as exc:
        return _fail(
            _("could not write {file}: {problem}").format(
                file=args.file, problem=exc.strerror or exc
            )
        )
    finally:
        ledger.store.close()


def _show_progress(line: int, lines: int) -> None:
    """The import's progress on one line of the terminal, written over."""
    text = (
        _("Saving the imported rows…")
        if line >= lines
        else _("Importing: line {line} of about {lines}…").format(line=line, lines=lines)
    )
    print("\r" + text + "\x1b[K", end="", file=sys.stderr, flush=True)


def _import(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        path.open("rb").close()  # before the ledger is opened: a typo changes nothing
    except OSError as exc:
        return _fail(
            _("could not read {file}: {problem}").format(
                file=args.file, problem=exc.strerror or exc
            )
        )
    # streamed: a bill of a million rows is read a batch at a time, in bounded memory
    from gpu_companion.core.spend.ledger_import import import_csv

    ledger = _ledger()
    if ledger is None:
        return 2
    try:
        defaults = {"platform": args.platform or "", "currency": args.currency or ""}
        tty = sys.stderr.isatty()
        shown = _show_progress if tty else None
        try:
            done = import_csv(ledger, path, defaults, dry_run=args.dry_run, progress=shown)
        except OSError as exc:
            return _fail(
                _("could not read {file}: {problem}").format(
                    file=args.file, problem=exc.strerror or exc
                )
            )
        except KeyboardInterrupt:  # the transaction rolled back, the file's reader stopped
            print("\n" + _("The import was cancelled: nothing was stored."), file=sys.stderr)
            return 130
        finally:
            if tty:
                print("\r\x1b[K", end="", file=sys.stderr, flush=True)  # the progress line
        if done.understood:
            print(f"{args.file}: {done.understood}")
        for line in done.error_lines():
            print(f"{args.file}: {line}", file=sys.stderr)
        if done.info.file_errors:
            print(_("Nothing was imported."), file=sys.stderr)
            return 1
        result = done.result
        if args.dry_run:
            n = result.rentals + result.charges
            print(
                ngettext("Dry run: {n} row would be imported, {bad} refused.",
                         "Dry run: {n} rows would be imported, {bad} refused.", n)
                .format(n=n, bad=result.refused)
            )  # fmt: skip
            return 1 if result.refused else 0
        print(
            _(
                "Imported {rentals} rentals and {charges} charges; {duplicates} already in the "
                "ledger; {refused} refused."
            ).format(
                rentals=result.rentals,
                charges=result.charges,
                duplicates=result.duplicates,
                refused=result.refused,
            )
        )
        if result.platforms_created:
            print(_("New platforms: {names}").format(names=", ".join(result.platforms_created)))
        return 1 if result.refused else 0
    except UserError as exc:
        return _fail(str(exc))
    finally:
        ledger.store.close()
