"""The language the app speaks, chosen once per process, and the Qt-free half of its catalogs.

Messages built in `core/`, `commands/` and the CLI go through Python's `gettext` (`_`,
`ngettext`; `N_` marks a constant translated where it is shown), extracted with Babel into one
`.po` catalog per area under `resources/i18n/<language>/` (`scripts/i18n.py` keeps them). The
window's own words are Qt's (`tr()`, `.ts` catalogs in the same folder). Both halves read the
same choice: `--lang`, else the saved setting, else the system locale.

Format messages with named fields after translating (`_("Copied {name}").format(name=n)`), never
with an f-string inside `_()`: the catalog needs the literal.
"""

from __future__ import annotations

import gettext
import importlib
import os
from collections.abc import Mapping
from pathlib import Path

DEFAULT = "en"
# Each language the app ships, named in itself (the setting's choices).
LANGUAGES: dict[str, str] = {"en": "English", "zh_CN": "简体中文"}
# resources/ is shipped as gpu_companion.resources (package-dir in pyproject.toml)
CATALOGS = Path(importlib.import_module("gpu_companion.resources").__file__ or ".").parent / "i18n"
SETTING_FILE = "language"

_language = DEFAULT
_translation: gettext.NullTranslations = gettext.NullTranslations()


def normalise(tag: str | None) -> str | None:
    """A language the app ships for a locale tag ('zh_CN.UTF-8', 'zh-Hans', 'en_GB'), or None."""
    if not tag:
        return None
    base = tag.split(".")[0].split("@")[0].replace("-", "_")
    low = base.lower()
    if low in ("c", "posix"):
        return DEFAULT
    if low.startswith("zh"):  # zh, zh_CN, zh_SG, zh_Hans: Simplified; Traditional is not shipped
        return None if low in ("zh_tw", "zh_hk", "zh_mo", "zh_hant") else "zh_CN"
    if low.startswith("en"):
        return "en"
    return None


def system_language(environ: Mapping[str, str] | None = None) -> str:
    """What the system locale asks for, as POSIX reads it: LANGUAGE (a list), then LC_ALL,
    LC_MESSAGES, LANG; a language the app does not ship falls back to English."""
    env = os.environ if environ is None else environ
    for tag in env.get("LANGUAGE", "").split(":"):
        if found := normalise(tag):
            return found
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if env.get(name):
            return normalise(env[name]) or DEFAULT
    return DEFAULT


def saved_language(config_dir: Path) -> str | None:
    """The language the user chose in Settings (None: follow the system)."""
    try:
        text = (config_dir / SETTING_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text if text in LANGUAGES else None


def save_language(config_dir: Path, language: str | None) -> None:
    """Remember the choice for the next start; None follows the system locale again."""
    path = config_dir / SETTING_FILE
    if language is None:
        path.unlink(missing_ok=True)
        return
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; use one of {', '.join(LANGUAGES)}")
    config_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(language + "\n", encoding="utf-8")
    tmp.replace(path)


def choose(
    given: str | None, config_dir: Path | None, environ: Mapping[str, str] | None = None
) -> str:
    """`--lang` first, then the saved setting, then the system locale."""
    if given:
        found = normalise(given)
        if found is None or found not in LANGUAGES:
            raise ValueError(f"unknown language {given!r}; use one of {', '.join(LANGUAGES)}")
        return found
    saved = saved_language(config_dir) if config_dir is not None else None
    return saved or system_language(environ)


def catalog_files(language: str, suffix: str) -> list[Path]:
    """The compiled catalogs of one language (`.mo` for gettext, `.qm` for Qt), sorted."""
    folder = CATALOGS / language
    return sorted(folder.glob(f"*{suffix}")) if folder.is_dir() else []


def install(language: str) -> None:
    """Speak `language` from now on in this process (the gettext half)."""
    global _language, _translation
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}")
    chain: gettext.NullTranslations = gettext.NullTranslations()
    for path in catalog_files(language, ".mo"):
        with path.open("rb") as fh:
            catalog = gettext.GNUTranslations(fh)
        catalog.add_fallback(chain)
        chain = catalog
    _language, _translation = language, chain


def current() -> str:
    return _language


def babel_locale() -> str:
    """The Babel/QLocale name of the current language ('en_US', 'zh_CN')."""
    return "en_US" if _language == "en" else _language


def _(message: str) -> str:
    return _translation.gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    return _translation.ngettext(singular, plural, n)


def N_(message: str) -> str:
    """Marks a constant for the catalog; translate it with `_()` where it is shown."""
    return message
