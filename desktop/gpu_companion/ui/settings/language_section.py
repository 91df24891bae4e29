"""Settings → Language: English or 简体中文 (or the system's), applied at the next start.

The choice is a one-line file in the config dir (`core.common.i18n.save_language`), read before
any window or command is built, so the CLI follows it too; `--lang` overrides it per run."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QComboBox, QGroupBox, QLabel, QVBoxLayout, QWidget

from gpu_companion.core.common import i18n


class LanguageSection(QGroupBox):
    def __init__(self, config_dir: Path, parent: QWidget | None = None) -> None:
        super().__init__(self.tr("Language"), parent)
        self.config_dir = config_dir
        self.setObjectName("languageSection")
        lay = QVBoxLayout(self)
        self.choice = QComboBox()
        self.choice.setObjectName("languageChoice")
        system = i18n.LANGUAGES[i18n.system_language()]
        self.choice.addItem(self.tr("As the system ({language})").format(language=system), None)
        for code, name in i18n.LANGUAGES.items():
            self.choice.addItem(name, code)  # each language in its own words
        saved = i18n.saved_language(config_dir)
        self.choice.setCurrentIndex(max(0, self.choice.findData(saved)) if saved else 0)
        self.choice.currentIndexChanged.connect(self._save)
        lay.addWidget(self.choice)
        self.note = QLabel(self.tr("Applies at the next start; --lang overrides it for one run."))
        self.note.setObjectName("languageNote")
        self.note.setWordWrap(True)
        lay.addWidget(self.note)

    def _save(self) -> None:
        code = self.choice.currentData()
        i18n.save_language(self.config_dir, code)  # one tiny file: no thread needed
        if (code or i18n.system_language()) != i18n.current():
            self.note.setText(self.tr("Saved. Restart GPU Companion to switch the language."))
