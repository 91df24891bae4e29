"""The app in Simplified Chinese: the catalogs are finished and compiled, the language follows
--lang, the setting and the system locale, money reads ¥12.50 and ¥3.20/小时, and a ledger CSV
exported in Chinese re-imports identically in English."""

from __future__ import annotations

import ast
import importlib.util
import io
import os
import subprocess
import sys
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from gpu_companion.core.common import i18n, money

REPO = Path(__file__).resolve().parents[2]
PKG = REPO / "desktop" / "gpu_companion"


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("i18n_script", REPO / "scripts" / "i18n.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_every_catalog_is_finished_not_obsolete_and_compiled() -> None:
    """pyside6-lupdate and Babel extract every string again; an entry that is unfinished, a
    string that left the code (obsolete) or a catalog not compiled to .qm/.mo fails."""
    problems = _script().check()
    assert problems == [], "\n".join(problems[:60]) + (
        f"\n… and {len(problems) - 60} more" if len(problems) > 60 else ""
    )


def test_the_catalog_check_finds_an_unfinished_entry(tmp_path: Path) -> None:
    ts = tmp_path / "x.ts"
    ts.write_text(
        '<?xml version="1.0" encoding="utf-8"?><TS version="2.1" language="zh_CN"><context>'
        "<name>Page</name><message><source>Hosts</source>"
        '<translation type="unfinished"></translation></message>'
        "<message><source>Gone</source>"
        '<translation type="vanished">没了</translation></message></context></TS>'
    )
    assert _script().ts_problems(ts) == [
        "unfinished: Page: 'Hosts'",
        "vanished: Page: 'Gone'",
    ]


def _shadowing(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imports_gettext = any(
        isinstance(n, ast.ImportFrom)
        and n.module == "gpu_companion.core.common.i18n"
        and any(a.name == "_" for a in n.names)
        for n in ast.walk(tree)
    )
    if not imports_gettext:
        return []
    return sorted(
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and n.id == "_" and isinstance(n.ctx, ast.Store)
    )


@pytest.mark.parametrize(
    "path", sorted(PKG.rglob("*.py")), ids=lambda p: str(p.relative_to(PKG))
)
def test_no_module_that_translates_uses_underscore_as_a_variable(path: Path) -> None:
    """`for _ in …` or `a, _ = …` in a module that imports gettext's `_` makes `_` a local
    string in that function: the next message raises instead of being shown."""
    assert _shadowing(path) == [], f"{path.relative_to(PKG)} assigns to _ at these lines"


def test_the_language_follows_lang_then_the_setting_then_the_system(tmp_path: Path) -> None:
    assert i18n.system_language({"LANG": "zh_CN.UTF-8"}) == "zh_CN"
    assert i18n.system_language({"LANGUAGE": "fr:zh_CN", "LANG": "en_US.UTF-8"}) == "zh_CN"
    assert i18n.system_language({"LC_ALL": "de_DE.UTF-8", "LANG": "zh_CN"}) == "en"
    assert i18n.system_language({"LANG": "zh_TW.UTF-8"}) == "en"  # Traditional: not shipped
    assert i18n.system_language({}) == "en"
    env = {"LANG": "zh_CN.UTF-8"}
    assert i18n.choose(None, tmp_path, env) == "zh_CN"
    i18n.save_language(tmp_path, "en")
    assert i18n.choose(None, tmp_path, env) == "en"  # the setting beats the locale
    assert i18n.choose("zh-CN", tmp_path, env) == "zh_CN"  # --lang beats the setting
    i18n.save_language(tmp_path, None)
    assert i18n.choose(None, tmp_path, env) == "zh_CN"
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        i18n.choose("fr", tmp_path, env)


def test_money_in_chinese(zh_cn: str) -> None:
    assert money.format_money(1250, "CNY") == "¥12.50"
    assert money.format_rate(320, "CNY") == "¥3.20/小时"
    assert money.rate_derivation(Decimal("2.65"), 8, "CNY") == "8 × ¥2.65 = ¥21.20/小时"
    assert money.default_currency() == "CNY"
    from gpu_companion.core.hosts.registry import Platform

    assert Platform("AutoDL").currency == "CNY"  # a new Chinese renter's platform bills in ¥


def test_money_in_english() -> None:
    assert money.format_rate(320, "USD") == "$3.20/h"
    assert money.default_currency() == "USD"


def test_a_csv_exported_in_chinese_reimports_identically_in_english(
    ledger, manual_clock, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    from gpu_companion.core.spend.ledger import SpendLedger
    from gpu_companion.core.spend.ledger_csv import apply_import, export_csv, parse_csv
    from gpu_companion.core.spend.reports import report
    from gpu_companion.core.storage.store import Store

    pid = ledger.store.db.execute("SELECT id FROM platforms").fetchone()[0]
    r = ledger.start_rental(pid, "1234.5", gpu_model="RTX 4090", tag="微调")
    manual_clock.advance(hours=3, minutes=7)
    ledger.end_rental(r.id)
    ledger.add_charge(pid, "storage", "4.20", description="数据盘 200 GB")
    i18n.install("zh_CN")
    try:
        out = io.StringIO()
        export_csv(ledger, out)
    finally:
        i18n.install("en")
    data = out.getvalue()
    assert "2025-01-15T09:00:00+00:00" in data and "1234.5" in data  # ISO dates, dot decimals
    everything = (
        datetime(2000, 1, 1, tzinfo=timezone.utc),
        datetime(2100, 1, 1, tzinfo=timezone.utc),
    )
    other = SpendLedger(Store(tmp_path / "other.sqlite3"), manual_clock, tz=timezone.utc)
    try:
        preview = parse_csv(other, data.encode())
        assert preview.error_lines() == []
        apply_import(other, preview)
        assert report(other, *everything).totals == report(ledger, *everything).totals
        again = io.StringIO()
        export_csv(other, again)
        strip = [line.split(",", 2)[2] for line in data.splitlines()]
        assert [line.split(",", 2)[2] for line in again.getvalue().splitlines()] == strip
    finally:
        other.store.close()


def _run(*args: str, home: Path, lang: str = "C.UTF-8") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")}
    env.update(LANG=lang, GPU_COMPANION_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    return subprocess.run(
        [sys.executable, "-m", "gpu_companion", *args],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip


def test_the_command_line_speaks_the_chosen_language(tmp_path: Path) -> None:
    english = "language of the window and the commands"
    i18n.install("zh_CN")
    try:
        chinese = i18n._(
            "language of the window and the commands: en or zh_CN (default: the one chosen "
            "in Settings, else the system's)"
        )
    finally:
        i18n.install("en")
    assert english not in chinese
    assert english in _run("--help", home=tmp_path).stdout
    said = _run("--help", home=tmp_path, lang="zh_CN.UTF-8").stdout
    assert chinese[:12] in said.replace("\n", "").replace(" ", "") or chinese[:12] in said
    assert english in _run("--lang", "en", "--help", home=tmp_path, lang="zh_CN.UTF-8").stdout
    bad = _run("--lang", "fr", "hosts", "list", home=tmp_path)
    assert bad.returncode == 2 and "unknown language 'fr'; use one of en, zh_CN" in bad.stderr


def test_a_confirmation_made_in_chinese_counts_in_any_language(zh_cn: str) -> None:
    """The default manual item reads 已拍数据盘快照 in Chinese, but is confirmed under its
    stored English label: the unattended checklist (any language) finds the confirmation."""
    from gpu_companion.core.hosts.registry import Host
    from gpu_companion.core.release.checklist import ReleaseChecklist
    from gpu_companion.core.release.config import ChecklistConfig
    from gpu_companion.core.release.items import ManualConfirmation

    host = Host("gpu1", "127.0.0.1", 22, "root", 1)
    item = next(
        i for i in ReleaseChecklist.build(host, ChecklistConfig()).items
        if isinstance(i, ManualConfirmation)
    )  # fmt: skip
    assert item.title == "已拍数据盘快照" and item.label == "Data disk snapshot taken"
    confirmed = {item.label: ""}  # what the Release page records
    i18n.install("en")
    again = next(
        i for i in ReleaseChecklist.build(host, ChecklistConfig(), confirmed).items
        if isinstance(i, ManualConfirmation)
    )  # fmt: skip
    assert again.ticked_note == ""  # ticked


def test_the_shipped_languages_separators_are_cldrs() -> None:
    """Money is shown without loading Babel for English and Chinese: the table kept for that
    says what Babel's CLDR data says."""
    from babel.numbers import get_decimal_symbol, get_group_symbol

    for locale, symbols in money._KNOWN_SYMBOLS.items():
        assert symbols == (get_decimal_symbol(locale), get_group_symbol(locale)), locale
    assert {"en_US", "zh_CN"} == {
        "en_US" if code == "en" else code for code in i18n.LANGUAGES
    } == set(money._KNOWN_SYMBOLS)


_FIELD = r"\{[A-Za-z_][A-Za-z0-9_]*(?:![rsa])?(?::[^{}]*)?\}|%n|%[0-9]|%\([a-z_]+\)[sdr]|%[sdr]"


def _fields(text: str) -> list[str]:
    import re

    return sorted(re.findall(_FIELD, text))


def _pairs():  # type: ignore[no-untyped-def]
    """(catalog, source, translation) for every finished entry of every zh_CN catalog."""
    import xml.etree.ElementTree as ET

    from babel.messages.pofile import read_po

    folder = REPO / "resources" / "i18n" / "zh_CN"
    for ts in sorted(folder.glob("*.ts")):
        for message in ET.parse(ts).getroot().iter("message"):
            source = message.findtext("source") or ""
            text = message.find("translation")
            forms = [f.text or "" for f in text.iter("numerusform")] if text is not None else []
            for value in forms or [text.text or "" if text is not None else ""]:
                yield ts.name, source, value
    for po in sorted(folder.glob("*.po")):
        with po.open("rb") as fh:
            for m in read_po(fh, locale="zh_CN"):
                if not m.id:
                    continue
                ids = [m.id] if isinstance(m.id, str) else list(m.id)
                strings = [m.string] if isinstance(m.string, str) else list(m.string)
                for value in strings:
                    yield po.name, ids[-1], value


def test_every_translation_keeps_the_fields_of_its_source() -> None:
    """A translation that drops {name} loses what the user needs to know; one that invents a
    field raises KeyError where the message is shown. The Chinese side has exactly the source's
    fields ({name}, {n!r}, %n, %1, %s)."""
    wrong = [
        f"{catalog}: {source!r} -> {value!r}"
        for catalog, source, value in _pairs()
        if value and _fields(value) != _fields(source)
    ]
    assert wrong == [], f"{len(wrong)} translations:\n" + "\n".join(wrong[:40])


def test_a_budget_alert_reaches_the_phone_in_chinese(zh_cn, store, manual_clock) -> None:  # type: ignore[no-untyped-def]
    """The real budget rule over a real ledger, its message as ntfy receives it: the title
    (an RFC 2047 header) and the text are Chinese, the amounts ¥."""
    import base64

    from gpu_companion.core.common.notifier import Notifier
    from gpu_companion.core.hosts.registry import HostRegistry, Platform
    from gpu_companion.core.notify.formats import alert_of, ntfy_request
    from gpu_companion.core.notify.model import NtfyConfig
    from gpu_companion.core.spend.alerts import SpendAlerts
    from gpu_companion.core.spend.budgets import Budgets
    from gpu_companion.core.spend.ledger import SpendLedger

    platform = HostRegistry(store).save_platform(Platform("AutoDL"))  # ¥: the app speaks Chinese
    ledger = SpendLedger(store, manual_clock, tz=timezone.utc)
    budgets = Budgets(ledger)
    budgets.set_budget("month", "10", "CNY")
    ledger.start_rental(platform.id, "3.20", gpu_model="RTX 4090")
    manual_clock.advance(hours=4)
    [message] = [m for m in SpendAlerts(ledger, Notifier(), budgets).check() if "budget" in m.key]
    alert = alert_of(message, manual_clock.now())
    request = ntfy_request(NtfyConfig("https://ntfy.sh", "t"), alert)
    encoded = request.headers["Title"]
    assert encoded.startswith("=?UTF-8?B?")
    title = base64.b64decode(encoded[len("=?UTF-8?B?"):-2]).decode()
    body = request.body.decode()
    assert "预算" in title and "¥" in body and "/小时" in body, (title, body)
    assert not any(word in body for word in ("budget", "Budget", "so far", "Billing")), body


def test_a_platform_added_on_the_command_line_in_chinese_bills_in_yuan(zh_cn: str) -> None:
    from gpu_companion.cli import build_parser

    assert build_parser().parse_args(["platforms", "add", "AutoDL"]).currency == "CNY"
    i18n.install("en")
    assert build_parser().parse_args(["platforms", "add", "Lambda"]).currency == "USD"
