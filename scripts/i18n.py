#!/usr/bin/env python3
"""Keeps the translation catalogs under resources/i18n/<language>/.

    python scripts/i18n.py update [NAME ...]   extract the strings into the catalogs (new ones
                                              unfinished, vanished ones dropped)
    python scripts/i18n.py compile             .ts -> .qm (pyside6-lrelease), .po -> .mo (Babel)
    python scripts/i18n.py check               what is unfinished, obsolete or not compiled
    python scripts/i18n.py todo NAME           the unfinished entries of one catalog, as JSON
    python scripts/i18n.py fill NAME FILE      write translations from a JSON file shaped like
                                              `todo`'s output, "translation" filled in
    python scripts/i18n.py reuse               fill unfinished entries that another catalog
                                              already translates (a string moved between areas)

One catalog per area, so areas can be translated side by side: `ui_<package>.ts` for each
package under ui/ (Qt's tr(), extracted by pyside6-lupdate), `core_<package>.po` for each
package under core/ and `commands.po` for the CLI (gettext's _(), extracted by Babel).
Locations are not written (-locations none / no #: lines): a moved line changes no catalog.
tests/unit/test_i18n.py runs `check` and fails on anything it reports.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PKG = REPO / "desktop" / "gpu_companion"
I18N = REPO / "resources" / "i18n"
LANGUAGES = ["zh_CN"]
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Area:
    name: str
    kind: str  # "qt" or "gettext"
    sources: tuple[Path, ...]

    def files(self) -> list[Path]:
        found: list[Path] = []
        for src in self.sources:
            found += sorted(src.rglob("*.py")) if src.is_dir() else [src]
        return found

    def catalog(self, language: str) -> Path:
        return I18N / language / f"{self.name}.{'ts' if self.kind == 'qt' else 'po'}"

    def compiled(self, language: str) -> Path:
        return self.catalog(language).with_suffix(".qm" if self.kind == "qt" else ".mo")


def areas() -> list[Area]:
    found = []
    for d in sorted(p for p in (PKG / "ui").iterdir() if (p / "__init__.py").exists()):
        extra = (PKG / "app.py",) if d.name == "shell" else ()
        found.append(Area(f"ui_{d.name}", "qt", (d, *extra)))
    for d in sorted(p for p in (PKG / "core").iterdir() if (p / "__init__.py").exists()):
        found.append(Area(f"core_{d.name}", "gettext", (d,)))
    top = tuple(PKG / f for f in ("cli.py", "services.py", "logsetup.py", "__main__.py"))
    found.append(Area("commands", "gettext", (PKG / "commands", *top)))
    return found


def _tool(name: str) -> str:
    path = BIN / name
    return str(path) if path.exists() else (shutil.which(name) or name)


# -- Qt ---------------------------------------------------------------------------------------
def lupdate(area: Area, ts: Path, keep_obsolete: bool = False, language: str = "zh_CN") -> None:
    ts.parent.mkdir(parents=True, exist_ok=True)
    argv = [_tool("pyside6-lupdate"), *map(str, area.files()), "-ts", str(ts)]
    argv += ["-target-language", language]
    argv += ["-locations", "none", "-silent"] + ([] if keep_obsolete else ["-no-obsolete"])
    subprocess.run(argv, check=True, cwd=REPO)


def ts_problems(ts: Path) -> list[str]:
    """Each message of a .ts that is unfinished, obsolete or vanished, as 'context: source'."""
    problems = []
    for context in ET.parse(ts).getroot().iter("context"):
        name = context.findtext("name") or ""
        for message in context.iter("message"):
            text = message.find("translation")
            kind = text.get("type") if text is not None else "unfinished"
            if kind in ("unfinished", "obsolete", "vanished"):
                problems.append(f"{kind}: {name}: {message.findtext('source')!r}")
    return problems


def lrelease(ts: Path, qm: Path) -> None:
    subprocess.run(
        [_tool("pyside6-lrelease"), "-silent", str(ts), "-qm", str(qm)], check=True, cwd=REPO
    )


# -- gettext ----------------------------------------------------------------------------------
def extract(area: Area):  # type: ignore[no-untyped-def]
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_from_file

    template = Catalog(project="gpu-companion", fuzzy=False)
    for path in area.files():
        for _line, message, comments, context in extract_from_file(
            "python", str(path), keywords=KEYWORDS, comment_tags=("i18n:",)
        ):
            template.add(message, None, auto_comments=comments, context=context)
    return template


def read_po(po: Path, language: str):  # type: ignore[no-untyped-def]
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po as _read

    if not po.exists():
        return Catalog(locale=language, project="gpu-companion", fuzzy=False)
    with po.open("rb") as fh:
        return _read(fh, locale=language)


def write_po(catalog, po: Path) -> None:  # type: ignore[no-untyped-def]
    from babel.messages.pofile import write_po as _write

    po.parent.mkdir(parents=True, exist_ok=True)
    buf = BytesIO()
    _write(buf, catalog, no_location=True, omit_header=False, sort_output=True, width=100)
    po.write_bytes(buf.getvalue())


def po_problems(area: Area, language: str) -> list[str]:
    template = extract(area)
    catalog = read_po(area.catalog(language), language)
    wanted = {m.id for m in template if m.id}
    have = {m.id: m for m in catalog if m.id}
    problems = []
    for mid in sorted(wanted, key=str):
        m = have.get(mid)
        strings = [m.string] if m is not None and isinstance(m.string, str) else (
            list(m.string) if m is not None else []
        )
        if m is None or m.fuzzy or not strings or not all(strings):
            problems.append(f"unfinished: {mid!r}")
    problems += [f"obsolete: {mid!r}" for mid in sorted(set(have) - wanted, key=str)]
    return problems


def mo_bytes(po: Path, language: str) -> bytes:
    from babel.messages.mofile import write_mo

    buf = BytesIO()
    write_mo(buf, read_po(po, language), use_fuzzy=False)
    return buf.getvalue()


# -- commands ---------------------------------------------------------------------------------
def update(names: list[str]) -> None:
    for area in areas():
        if names and area.name not in names:
            continue
        for language in LANGUAGES:
            if area.kind == "qt":
                lupdate(area, area.catalog(language), language=language)
            else:
                catalog = read_po(area.catalog(language), language)
                catalog.update(extract(area), no_fuzzy_matching=True)
                catalog.obsolete.clear()
                write_po(catalog, area.catalog(language))
            print(f"updated {area.catalog(language).relative_to(REPO)}")


def compile_all() -> None:
    for area in areas():
        for language in LANGUAGES:
            src = area.catalog(language)
            if not src.exists():
                continue
            if area.kind == "qt":
                lrelease(src, area.compiled(language))
            else:
                area.compiled(language).write_bytes(mo_bytes(src, language))


def check() -> list[str]:
    """Everything wrong with the catalogs, one line each (empty: all finished and compiled)."""
    out: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for area in areas():
            for language in LANGUAGES:
                src = area.catalog(language)
                rel = src.relative_to(REPO)
                if area.kind == "qt":
                    copy = Path(tmp) / src.name
                    if src.exists():
                        shutil.copy(src, copy)
                    lupdate(area, copy, keep_obsolete=True, language=language)
                    problems = ts_problems(copy)
                    if not problems and not src.exists():
                        continue  # an area with no strings needs no catalog
                    out += [f"{rel}: {p}" for p in problems]
                    if src.exists() and not problems:
                        qm = Path(tmp) / (src.stem + ".qm")
                        lrelease(src, qm)
                        compiled = area.compiled(language)
                        if not compiled.exists() or compiled.read_bytes() != qm.read_bytes():
                            out.append(f"{rel}: not compiled (python scripts/i18n.py compile)")
                else:
                    problems = po_problems(area, language)
                    if not problems and not src.exists():
                        continue
                    out += [f"{rel}: {p}" for p in problems]
                    if src.exists() and not problems:
                        compiled = area.compiled(language)
                        if not compiled.exists() or compiled.read_bytes() != mo_bytes(
                            src, language
                        ):
                            out.append(f"{rel}: not compiled (python scripts/i18n.py compile)")
    return out


def _area(name: str) -> Area:
    for area in areas():
        if area.name == name:
            return area
    raise SystemExit(f"no catalog {name!r}; there are: {', '.join(a.name for a in areas())}")


def todo(name: str, language: str = "zh_CN") -> list[dict[str, object]]:
    """Unfinished entries: {"context", "source", "plural", "translation": ""} each."""
    area = _area(name)
    out: list[dict[str, object]] = []
    if area.kind == "qt":
        for context in ET.parse(area.catalog(language)).getroot().iter("context"):
            for message in context.iter("message"):
                text = message.find("translation")
                if text is not None and text.get("type") == "unfinished":
                    out.append({
                        "context": context.findtext("name"),
                        "source": message.findtext("source"),
                        "plural": message.get("numerus") == "yes",
                        "translation": "",
                    })
        return out
    for m in read_po(area.catalog(language), language):
        if not m.id:
            continue
        strings = list(m.string) if isinstance(m.string, tuple | list) else [m.string]
        if m.fuzzy or not all(strings):
            out.append({"context": m.context, "source": m.id if isinstance(m.id, str) else list(
                m.id), "plural": not isinstance(m.id, str), "translation": ""})
    return out


def fill(name: str, path: Path, language: str = "zh_CN") -> int:
    """Write the translations of a filled-in `todo` file; returns how many were written.
    For a plural entry give one string (Chinese has one form)."""
    import json

    area = _area(name)
    given = {
        (e.get("context"), e["source"] if isinstance(e["source"], str) else e["source"][0]):
            e["translation"] for e in json.loads(path.read_text(encoding="utf-8"))
        if e.get("translation")
    }
    count = 0
    src = area.catalog(language)
    if area.kind == "qt":
        tree = ET.parse(src)
        for context in tree.getroot().iter("context"):
            for message in context.iter("message"):
                key = (context.findtext("name"), message.findtext("source"))
                if key not in given:
                    continue
                text = message.find("translation")
                assert text is not None
                text.attrib.pop("type", None)
                value = given[key]
                if message.get("numerus") == "yes":
                    for child in list(text):
                        text.remove(child)
                    text.text = None
                    form = ET.SubElement(text, "numerusform")
                    form.text = value if isinstance(value, str) else value[0]
                else:
                    text.text = value if isinstance(value, str) else value[0]
                count += 1
        tree.write(src, encoding="utf-8", xml_declaration=True)
        lupdate(area, src, language=language)  # back to lupdate's own layout
        return count
    catalog = read_po(src, language)
    for m in catalog:
        key_id = m.id if isinstance(m.id, str) else (m.id[0] if m.id else "")
        if not key_id or (m.context, key_id) not in given:
            continue
        value = given[(m.context, key_id)]
        if isinstance(m.id, str):
            m.string = value if isinstance(value, str) else value[0]
        else:
            m.string = (value if isinstance(value, str) else value[0],)
        m.flags.discard("fuzzy")
        count += 1
    write_po(catalog, src)
    return count


def known(language: str = "zh_CN") -> tuple[dict[tuple[str, str], str], dict[str, str]]:
    """Every finished translation: Qt's by (context, source), gettext's by msgid."""
    qt: dict[tuple[str, str], str] = {}
    po: dict[str, str] = {}
    for area in areas():
        src = area.catalog(language)
        if not src.exists():
            continue
        if area.kind == "qt":
            for context in ET.parse(src).getroot().iter("context"):
                for message in context.iter("message"):
                    text = message.find("translation")
                    if text is None or text.get("type") in ("unfinished", "obsolete", "vanished"):
                        continue
                    forms = [f.text or "" for f in text.iter("numerusform")]
                    value = forms[0] if forms else (text.text or "")
                    key = (context.findtext("name") or "", message.findtext("source") or "")
                    if value:
                        qt[key] = value
        else:
            for m in read_po(src, language):
                if m.id and isinstance(m.id, str) and isinstance(m.string, str) and m.string:
                    if not m.fuzzy:
                        po[m.id] = m.string
    return qt, po


def reuse(language: str = "zh_CN") -> int:
    import json

    qt, po = known(language)
    count = 0
    with tempfile.TemporaryDirectory() as tmp:
        for area in areas():
            if not area.catalog(language).exists():
                continue
            entries = todo(area.name, language)
            for e in entries:
                source = e["source"] if isinstance(e["source"], str) else ""
                found = qt.get((str(e["context"]), source)) if area.kind == "qt" else po.get(source)
                if found:
                    e["translation"] = found
            filled = [e for e in entries if e["translation"]]
            if filled:
                path = Path(tmp) / f"{area.name}.json"
                path.write_text(json.dumps(filled, ensure_ascii=False), encoding="utf-8")
                count += fill(area.name, path, language)
    return count


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("update", "compile", "check", "todo", "fill", "reuse"):
        print(__doc__)
        return 2
    if argv[0] == "todo":
        import json

        print(json.dumps(todo(argv[1]), ensure_ascii=False, indent=1))
    elif argv[0] == "fill":
        print(f"wrote {fill(argv[1], Path(argv[2]))} translations")
    elif argv[0] == "reuse":
        print(f"reused {reuse()} translations")
    elif argv[0] == "update":
        update(argv[1:])
    elif argv[0] == "compile":
        compile_all()
    else:
        problems = check()
        print("\n".join(problems) or "all catalogs finished and compiled")
        return 1 if problems else 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
