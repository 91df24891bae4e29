"""The window in Simplified Chinese (LANG=zh_CN.UTF-8): every page, the main dialogs and the
first-rental wizard render with no English left, and nothing is clipped at 1100×700.

"No English left": each text a user can read (labels, buttons, titles, headers, combo items,
placeholders, tooltips, table cells) is checked against the catalogs — it may not be a source
string of a catalog — and for English words: any word of two or more Latin letters that is not a
name (`NAMES`: products, tools, units, the demo data's own names) fails."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QComboBox,
    QFrame,
    QGroupBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QTabWidget,
    QWidget,
    QWizardPage,
)

from gpu_companion.ui.shell.build import PAGES
from tests.ui.layout_check import clipped_buttons
from tests.ui.test_fits_1100x700 import SIZE, _dialogs, _populate

I18N = Path(__file__).resolve().parents[2] / "resources" / "i18n" / "zh_CN"
# Names, not words: the same in every language (products, tools, units, file formats, the demo
# data's platforms, hosts, GPU models and notes).
NAMES = {
    "gpu", "gpus", "ssh", "ssh-agent", "sshd", "cuda", "nvidia", "nvidia-smi", "rsync", "tmux",
    "vs", "code", "pytorch", "torch", "bf", "fp", "tflops", "mib", "gib", "gb", "mb", "tb", "kb",
    "ms", "vast", "ai", "runpod", "lambda", "autodl", "ntfy", "webhook", "smtp", "http", "https",
    "url", "api", "csv", "tsv", "json", "id", "ok", "pid", "ip", "cpu", "ram", "io", "nvlink",
    "pcie", "sxm", "rtx", "h100", "a100", "l40s", "lora", "qlora", "dpo", "hbm", "gpu companion",
    "companion", "english", "linux", "gnome", "keyring", "ed25519", "rsa", "ecdsa", "openssh",
    "jupyter", "tensorboard", "vllm", "deepspeed", "fsdp", "ray", "skypilot", "ansible",
    "parallel", "xdg", "ctrl", "alt", "shift", "esc", "tab", "enter", "utc", "sha256", "md5",
    "amd", "intel", "apple", "mi300x", "rocm", "zh", "cn", "en", "qwen", "llama",
    "mistral", "gemma", "deepseek", "phi", "tok", "fp8", "int8", "int4", "usd", "cny", "eur",
    "jpy", "team", "runs", "mlab", "uni", "cluster", "volume", "local", "adam", "adamw",
    "mixtral", "awq", "gptq", "epoch", "epochs", "token", "tokens",
    "unattended-upgrade", "networkd-dispatcher",  # process names the checklist ignores
    # the terminals Settings offers, by their programs' names (which ones show depends on
    # what this machine has installed)
    "x-terminal-emulator", "gnome-terminal", "konsole", "xterm",
}  # fmt: skip
# Whole texts that are a product's own name (a terminal Settings finds installed)
PRODUCTS = {"GNOME Terminal", "Konsole", "xterm", "Windows Terminal"}
EXAMPLE = "例如"  # what follows "e.g." is an example to type (a command, a name): data


def _sources() -> set[str]:
    """Every English source string of the Qt catalogs whose translation differs from it."""
    found = set()
    for ts in I18N.glob("*.ts"):
        for message in ET.parse(ts).getroot().iter("message"):
            source = message.findtext("source") or ""
            forms = [t.text or "" for t in message.iter("translation")] + [
                t.text or "" for t in message.iter("numerusform")
            ]
            if source and any(f and f != source for f in forms):
                found.add(source)
    return found


def _english_words(text: str) -> list[str]:
    words = []
    for clause in re.split(r"[。；\n]", text):
        words += _clause_words(clause.split(EXAMPLE)[0])
    return words


def _clause_words(text: str) -> list[str]:
    words = []
    for raw in text.split():
        token = raw.strip(".,:;!?()[]{}'\"“”‘’…<>·•—–")
        # a path, address, version, command, option or value: data, not words
        if re.search(r"[/\\@=_~$`#%{}]|\d|\w\.\w|^-", token):
            continue
        for word in re.findall(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]", token):
            # an acronym or a code (GBP, MoE, LLaMA): a name, not a word
            if word.lower() not in NAMES and not any(c.isupper() for c in word[1:]):
                words.append(word)
    return words


def _strip(text: str) -> str:
    text = re.sub(r"<[^>]+>", " ", text)  # rich text's tags
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def _texts(root: QWidget, visible_only: bool = True) -> list[tuple[str, str]]:
    """(where, text) for each text a user can read under `root`."""
    out: list[tuple[str, str]] = []

    def add(widget: QWidget, text: str) -> None:
        if text and text.strip():
            out.append((f"{type(widget).__name__}#{widget.objectName()}", _strip(text)))

    for w in [root, *root.findChildren(QWidget)]:
        if visible_only and w is not root and not w.isVisibleTo(root):
            continue
        add(w, w.toolTip())
        if w.isWindow():
            add(w, w.windowTitle())
        if isinstance(w, QLabel):
            add(w, w.text())
        elif isinstance(w, QAbstractButton):
            add(w, w.text())
        elif isinstance(w, QGroupBox):
            add(w, w.title())
        elif isinstance(w, QLineEdit):
            add(w, w.placeholderText())
        elif isinstance(w, QPlainTextEdit):  # what the app fills in (a default to edit)
            add(w, w.placeholderText())
            add(w, w.toPlainText())
        elif isinstance(w, QComboBox):
            for i in range(w.count()):
                add(w, w.itemText(i))
        elif isinstance(w, QTabWidget):
            for i in range(w.count()):
                add(w, w.tabText(i))
        elif isinstance(w, QWizardPage):
            add(w, w.title())
            add(w, w.subTitle())
        elif isinstance(w, QListWidget):
            for i in range(w.count()):
                add(w, w.item(i).text())
        elif isinstance(w, QAbstractItemView) and w.model() is not None:
            if isinstance(w.parent(), QFrame) and w.parent().isWindow():
                continue  # a combo box's popup list: its items are read from the combo
            model = w.model()
            root_index = w.rootIndex()
            for col in range(model.columnCount(root_index)):
                add(w, str(model.headerData(col, Qt.Orientation.Horizontal) or ""))
                for row in range(min(model.rowCount(root_index), 20)):
                    value = model.data(model.index(row, col, root_index))
                    if isinstance(value, str):
                        add(w, value)
    return out


def _english(found: list[tuple[str, str]], sources: set[str], where: str) -> list[str]:
    problems = []
    for widget, text in found:
        if text.strip() in PRODUCTS:
            continue
        words = _english_words(text)
        if text.strip() in sources or words:
            problems.append(f"{where}: {widget}: {text!r} ({' '.join(words) or 'untranslated'})")
    return problems


@pytest.mark.qt_log_ignore("This plugin does not support")
def test_every_page_and_dialog_in_chinese(qapp, zh_cn, ctx, window, qtbot) -> None:  # type: ignore[no-untyped-def]
    host = _populate(ctx)
    window.resize(*SIZE)
    sources = _sources()
    assert sources, "no zh_CN catalog is compiled"
    problems: list[str] = []
    for page in PAGES:
        window.navigate(page.key)
        qtbot.wait(30)
        problems += _english(_texts(window), sources, page.key)
        problems += [f"{page.key}: clipped {p}" for p in clipped_buttons(window)]
    for name, make in _dialogs(ctx, window, host).items():
        dialog = make()
        try:
            dialog.show()
            dialog.resize(dialog.sizeHint().boundedTo(dialog.maximumSize()))
            qtbot.wait(10)
            problems += _english(_texts(dialog), sources, name)
            problems += [f"{name}: clipped {p}" for p in clipped_buttons(dialog)]
            if dialog.height() > SIZE[1]:
                problems.append(f"{name}: {dialog.height()} px high")
        finally:
            dialog.close()
            dialog.deleteLater()
    assert problems == [], f"{len(problems)} problems:\n" + "\n".join(problems)


@pytest.mark.qt_log_ignore("This plugin does not support")
def test_the_wizard_in_chinese(qapp, zh_cn, ctx, qtbot) -> None:  # type: ignore[no-untyped-def]
    from gpu_companion.ui.wizard import FirstRentalWizard

    wizard = FirstRentalWizard(ctx)
    qtbot.addWidget(wizard)
    wizard.resize(1000, 700)
    wizard.show()
    sources = _sources()
    problems: list[str] = []
    for page_id in wizard.pageIds():
        page = wizard.page(page_id)
        problems += _english(_texts(page, visible_only=False), sources, f"wizard {page_id}")
    problems += _english(_texts(wizard), sources, "wizard")
    assert problems == [], f"{len(problems)} problems:\n" + "\n".join(problems)


def test_the_check_sees_english(qapp, qtbot) -> None:  # type: ignore[no-untyped-def]
    w = QWidget()
    qtbot.addWidget(w)
    QLabel("释放实例", w)
    QLabel("Release instance", w)
    QLabel("ssh vast-4090 — 24 GB 显存, /home/user/data", w)
    found = _english(_texts(w, visible_only=False), {"Cancel"}, "t")
    assert [p.split(": ", 2)[2] for p in found] == ["'Release instance' (Release instance)"]


@pytest.mark.qt_log_ignore("This plugin does not support")
def test_the_default_confirmation_is_edited_in_chinese_and_stored_in_english(
    qapp, zh_cn, ctx, window, qtbot
) -> None:  # type: ignore[no-untyped-def]
    """The checklist settings show 已拍数据盘快照 for the default item; saved unchanged, the
    config keeps the English label its confirmations are recorded under."""
    from gpu_companion.ui.release.dialogs import ChecklistSettingsDialog

    host = _populate(ctx)
    settings = ctx.release.settings
    dialog = ChecklistSettingsDialog(settings, host, window, ctx.release.accounts)
    qtbot.addWidget(dialog)
    assert dialog.manual.toPlainText() == "已拍数据盘快照"
    dialog.manual.setPlainText("已拍数据盘快照\n已删除私有数据集")
    assert dialog.edited().manual == ("Data disk snapshot taken", "已删除私有数据集")
