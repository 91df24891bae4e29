"""The window's half of the language: Qt's translators for the app's `.qm` catalogs and Qt's
own (standard buttons, file dialogs), and the default QLocale."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

from gpu_companion.core.common import i18n

_installed: list[QTranslator] = []


def install_translators(app: QCoreApplication, language: str) -> int:
    """Install `language` on `app` (replacing an earlier one); returns how many catalogs loaded."""
    for old in _installed:
        app.removeTranslator(old)
    _installed.clear()
    i18n.install(language)
    QLocale.setDefault(QLocale(i18n.babel_locale()))
    if language == i18n.DEFAULT:
        return 0
    paths = [str(p) for p in i18n.catalog_files(language, ".qm")]
    qt_own = QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    for name in (f"qtbase_{language}", f"qt_{language}"):
        translator = QTranslator(app)
        if translator.load(name, qt_own):
            app.installTranslator(translator)
            _installed.append(translator)
            break
    for path in paths:
        translator = QTranslator(app)
        if translator.load(path):
            app.installTranslator(translator)
            _installed.append(translator)
    return len(_installed)
