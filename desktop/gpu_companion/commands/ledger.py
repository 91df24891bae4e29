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

if TYPE_CHECKING:  # the handlers import the ledger: `gpu-companion` parses its arguments first
    from gpu_companion.core.spend.ledger import SpendLedger


def register(sub: Any) -> None:
    p = sub.add_parser("ledger", help="spend ledger: report, CSV export and import")
    cmds = p.add_subparsers(dest="ledger_command", metavar="ACTION", required=True)
    rep = cmds.add_parser("report", help="spend per platform for a day, week or month")
    rep.add_argument("--period", choices=("day", "week", "month"), default="month")
    rep.add_argument("--at", help="a date inside the period (YYYY-MM-DD); default: today")
    rep.set_defaults(handler=_report)
    exp = cmds.add_parser("export", help="write every rental and charge to a CSV file")
    exp.add_argument("file", help="the CSV file to write ('-' for standard output)")
    exp.set_defaults(handler=_export)
    imp = cmds.add_parser(
        "import", help="read rentals and charges from a CSV file (bad rows are refused)"
    )
    imp.add_argument("file", help="a CSV file: the export's format or a provider's bill")
    imp.add_argument("--platform", help="the platform of rows that name none (a provider's bill)")
    imp.add_argument("--currency", help="the currency of rows that name none, e.g. USD")
    imp.add_argument("--dry-run", action="store_true", help="check the file, store nothing")
    imp.set_defaults(handler=_import)


def _ledger() -> SpendLedger | None:
    from gpu_companion.commands.opening import open_services

    services = open_services()
    return None if services is None else services.ledger


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def _report(args: argparse.Namespace) -> int:
    at = None
    if args.at:
        try:
            at = datetime.fromisoformat(args.at).replace(tzinfo=timezone.utc)
        except ValueError:
            return _fail(f"--at {args.at!r} is not a date like 2025-01-31")
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
        print(f"Spend {start:%Y-%m-%d} – {last:%Y-%m-%d} ({args.period})")
        if not rep.lines:
            print("  nothing recorded")
        for ln in rep.lines:
            print(
                f"  {ln.platform:<20} {ln.rentals:>5} rentals {ln.hours:>10} h  "
                f"rentals {format_money(ln.rentals_minor, ln.currency):>12}  "
                f"charges {format_money(ln.charges_minor, ln.currency):>10}  "
                f"total {format_money(ln.total_minor, ln.currency):>12}"
            )
        print(f"Total: {format_totals(rep.totals)}")
        running = ledger.running()
        if running:
            burn = burn_text(ledger) or "nothing"
            print(f"Running now: {len(running)} rental(s), burning {burn}")
        for st in Budgets(ledger).statuses():
            b = st.budget
            print(
                f"{b.title}: {st.percent}% — {format_money(st.spent_minor, b.currency)} of "
                f"{format_money(b.amount_minor, b.currency)}"
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
        print(f"Exported {count} row{'' if count == 1 else 's'} to {args.file}.", file=sys.stderr)
        return 0
    except OSError as exc:
        return _fail(f"could not write {args.file}: {exc.strerror or exc}")
    finally:
        ledger.store.close()


def _import(args: argparse.Namespace) -> int:
    try:
        data = Path(args.file).read_bytes()
    except OSError as exc:
        return _fail(f"could not read {args.file}: {exc.strerror or exc}")
    from gpu_companion.core.spend.ledger_csv import apply_import, parse_csv

    ledger = _ledger()
    if ledger is None:
        return 2
    try:
        defaults = {"platform": args.platform or "", "currency": args.currency or ""}
        preview = parse_csv(ledger, data, defaults)
        if preview.understood:
            print(f"{args.file}: {preview.understood}")
        for line in preview.error_lines():
            print(f"{args.file}: {line}", file=sys.stderr)
        if preview.file_errors:
            print("Nothing was imported.", file=sys.stderr)
            return 1
        if args.dry_run:
            print(
                f"Dry run: {len(preview.good)} row{'' if len(preview.good) == 1 else 's'} would be "
                f"imported, {len(preview.bad)} refused."
            )
            return 1 if preview.bad else 0
        result = apply_import(ledger, preview)
        print(
            f"Imported {result.rentals} rentals and {result.charges} charges; "
            f"{result.duplicates} already in the ledger; {result.refused} refused."
        )
        if result.platforms_created:
            print(f"New platforms: {', '.join(result.platforms_created)}")
        return 1 if result.refused else 0
    except UserError as exc:
        return _fail(str(exc))
    finally:
        ledger.store.close()
