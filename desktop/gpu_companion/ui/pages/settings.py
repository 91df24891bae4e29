"""Settings page: where the app keeps its files, and the version."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gpu_companion import __version__
from gpu_companion.ui.pages.base import Page

if TYPE_CHECKING:
    from gpu_companion.app import AppContext


class SettingsPage(Page):
    key, title, icon_name = "settings", "Settings", "settings"

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        lay = QVBoxLayout(self)
        box = QGroupBox("Where GPU Companion keeps its files")
        form = QFormLayout(box)
        for label, path in (
            ("Data (database)", ctx.paths.data_dir),
            ("Configuration", ctx.paths.config_dir),
            ("Logs", ctx.paths.log_dir),
        ):
            row = QHBoxLayout()
            text = QLabel(str(path))
            text.setTextInteractionFlags(text.textInteractionFlags().TextSelectableByMouse)
            row.addWidget(text, 1)
            button = QPushButton("Open folder")
            button.clicked.connect(lambda _=False, p=path: self.open_folder(p))
            row.addWidget(button)
            form.addRow(label, row)
        lay.addWidget(box)
        about = QGroupBox("About")
        alay = QVBoxLayout(about)
        alay.addWidget(
            QLabel(
                f"GPU Companion {__version__}. Private keys live only in your system keyring; "
                "the app "
                "never stores them in plain files. The colour theme follows your system."
            )
        )
        lay.addWidget(about)
        lay.addStretch(1)

    @staticmethod
    def open_folder(path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))
