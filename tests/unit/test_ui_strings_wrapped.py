"""Every user-visible string literal in the window's code goes through Qt's translation.

An AST check over ui/ and app.py: a string literal (or f-string) that reaches a widget's text
(a Qt text setter, a widget constructor, a message box, a dialog caption, an item model's
header list) must sit inside `tr()`, `QCoreApplication.translate()`, `QT_TRANSLATE_NOOP()` or
gettext's `_()` / `ngettext()`. Strings with no letter in them ("…", "—", "%") pass.

`ALLOWED` is the short list of strings that are the same in every language: names of things
(the product, tools, units) rather than words.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "desktop" / "gpu_companion"
FILES = sorted((PKG / "ui").rglob("*.py")) + [PKG / "app.py"]

WRAPPERS = {"tr", "translate", "QT_TRANSLATE_NOOP", "QT_TR_NOOP", "_", "ngettext", "N_"}
# Setters and functions whose string arguments are shown to the user.
TEXT_CALLS = {
    "setText", "setToolTip", "setWindowTitle", "setPlaceholderText", "addItem", "addItems",
    "insertItem", "setItemText", "setStatusTip", "setHeaderLabels", "setHorizontalHeaderLabels",
    "setVerticalHeaderLabels", "addAction", "setTitle", "addTab", "insertTab", "setTabText",
    "setTabToolTip", "addRow", "insertRow", "showMessage", "setSuffix", "setPrefix",
    "setSpecialValueText", "setWhatsThis", "setLabelText", "information", "warning", "critical",
    "question", "about", "setInformativeText", "setDetailedText", "setButtonText", "addButton",
    "setSubTitle", "setAccessibleName", "getText", "getItem", "getInt", "getDouble",
    "getOpenFileName", "getOpenFileNames", "getExistingDirectory", "getSaveFileName",
    "setOkButtonText", "setCancelButtonText", "setHtml", "setPlainText", "appendPlainText",
    "setFormat", "setNameFilter", "setNameFilters", "setLabel", "addSection", "addMenu",
    "setCheckBox", "showText", "setEmptyText", "setOverlayText", "set_message", "show_message",
}  # fmt: skip
WIDGETS = {
    "QLabel", "QPushButton", "QCheckBox", "QRadioButton", "QGroupBox", "QAction", "QToolButton",
    "QMessageBox", "QCommandLinkButton", "QMenu", "QTreeWidgetItem", "QListWidgetItem",
    "QStandardItem", "QTableWidgetItem", "QWizardPage",
}  # fmt: skip
# The same in every language: names, not words.
ALLOWED = {
    "GPU Companion", "nvidia-smi", "ssh", "SSH", "GPU", "rsync", "tmux", "VS Code", "CUDA",
    "vast.ai", "RunPod", "ntfy", "Webhook", "SMTP", "MiB", "GiB", "W", "°C", "OK", "ID",
    "English", "简体中文", "BF16", "FP16", "TFLOPS", "VRAM",
}  # fmt: skip


def _name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _worded(text: str) -> bool:
    return any(c.isalpha() for c in text) and text.strip() not in ALLOWED


class _Finder(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[tuple[int, str]] = []

    def literals(self, node: ast.AST) -> None:
        """Every worded literal inside `node` that no wrapper call encloses."""
        if isinstance(node, ast.Call) and _name(node.func) in WRAPPERS:
            return
        if isinstance(node, ast.Call) and _name(node.func) == "format":
            if isinstance(node.func, ast.Attribute):
                self.literals(node.func.value)  # "{x} of {y}".format(...) shows its literal
            for arg in [*node.args, *(kw.value for kw in node.keywords)]:
                self.literals(arg)
            return
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _worded(node.value):
                self.found.append((node.lineno, node.value))
            return
        if isinstance(node, ast.JoinedStr):
            text = "".join(
                v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(
                    v.value, str)
            )
            if _worded(text):
                self.found.append((node.lineno, text))
            for v in node.values:
                if isinstance(v, ast.FormattedValue):
                    self.literals(v.value)
            return
        if isinstance(node, ast.Call):  # a call's result is not a literal: look at its args only
            if _name(node.func) in ("join",):
                for arg in node.args:
                    self.literals(arg)
            return
        if isinstance(node, ast.Subscript | ast.Attribute | ast.Compare):
            return
        for child in ast.iter_child_nodes(node):
            self.literals(child)

    def visit_Call(self, node: ast.Call) -> None:
        name = _name(node.func)
        source = node.args[0 if name == "tr" else 1] if len(node.args) > (name != "tr") else None
        if (
            name in ("tr", "translate")
            and isinstance(source, ast.Constant)
            and any(isinstance(sub, ast.Call) for arg in node.args for sub in ast.walk(arg))
        ):
            # pyside6-lupdate drops a call with a call among its arguments (`len(x)` as the
            # count): the string never reaches the catalog
            self.found.append((node.lineno, f"{name}() with a call in its arguments"))
        if name in WRAPPERS:
            return
        receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
        if isinstance(receiver, ast.Name) and receiver.id in ("log", "_log", "logger", "logging"):
            self.generic_visit(node)  # log lines stay English
            return
        if name in TEXT_CALLS or name in WIDGETS:
            for arg in node.args:
                self.literals(arg)
            for kw in node.keywords:
                if kw.arg in (None, "text", "toolTip", "title", "caption", "label", "windowTitle"):
                    self.literals(kw.value)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        # HEADERS = ["Name", ...]: an item model's header list
        for target in node.targets:
            if isinstance(target, ast.Name) and any(
                w in target.id.upper() for w in ("HEADER", "COLUMN", "TITLE", "LABEL")
            ):
                self.literals(node.value)
        self.generic_visit(node)


def unwrapped(path: Path) -> list[tuple[int, str]]:
    finder = _Finder()
    finder.visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    return sorted(set(finder.found))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PKG)))
def test_user_visible_strings_are_translatable(path: Path) -> None:
    found = unwrapped(path)
    assert not found, "wrap these in tr()/translate()/QT_TRANSLATE_NOOP():\n" + "\n".join(
        f"  {path.relative_to(PKG)}:{line}: {text!r}" for line, text in found
    )


def test_the_check_sees_an_unwrapped_label(tmp_path: Path) -> None:
    src = tmp_path / "page.py"
    src.write_text(
        "from PySide6.QtWidgets import QLabel\n"
        "def build(self, n, label):\n"
        "    QLabel('Hosts')\n"
        "    label.setToolTip(f'{n} hosts live')\n"
        "    label.setText(self.tr('Fine'))\n"
        "    label.setText('…')\n"
        "    HEADERS = ['Name', QT_TRANSLATE_NOOP('M', 'Fine')]\n"
        "    label.setText(self.tr('{n} of {m}').format(n=n, m='words'))\n"
        "    label.setText(translate('C', '%n x', None, len(n)))\n"
    )
    assert [t for _, t in unwrapped(src)] == [
        "Hosts", " hosts live", "Name", "words", "translate() with a call in its arguments"
    ]
