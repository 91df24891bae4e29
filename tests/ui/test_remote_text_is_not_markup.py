"""Text a rented host controls (error lines, rsync's words, paths, nvidia-smi output) is shown as
text: labels that show it are plain, and the rich-text ones escape it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as QtGui
from PySide6.QtWidgets import QLabel

from gpu_companion.core.common.notifier import Level, Message
from gpu_companion.core.monitor.collector import HostState, HostStatus
from gpu_companion.ui.common.widgets import Banner
from gpu_companion.ui.transfers.remote_picker import RemotePathDialog

HOSTILE = "rsync said: <img src='file:///etc/passwd'><a href='https://evil.example'>click</a>"


def test_the_sample_would_be_rich_text_in_an_auto_label() -> None:
    assert QtGui.mightBeRichText(HOSTILE)  # so the checks below can fail


def test_banner_shows_a_message_as_plain_text(qtbot) -> None:
    banner = Banner(Message(Level.WARNING, HOSTILE))
    qtbot.addWidget(banner)
    assert banner.label.textFormat() == Qt.TextFormat.PlainText
    assert banner.label.text() == HOSTILE


def test_page_labels_that_quote_a_host_are_plain(window) -> None:
    hosts = window.navigate("hosts")
    transfers = window.navigate("transfers")
    release = window.navigate("release")
    for label in (hosts.connection_status, transfers.detail, release.status):
        assert isinstance(label, QLabel)
        assert label.textFormat() == Qt.TextFormat.PlainText, label.objectName()


def test_remote_picker_status_is_plain(qtbot) -> None:
    from gpu_companion.core.common.errors import UserError
    from gpu_companion.core.hosts.registry import Host
    from gpu_companion.ui.common import worker

    def refuse(_host: Host) -> None:
        raise UserError(HOSTILE)

    picker = RemotePathDialog(Host("gpu1", "127.0.0.1", 22), refuse, "/")
    qtbot.addWidget(picker)
    qtbot.waitUntil(lambda: picker.status.text() == HOSTILE, timeout=5000)
    worker.wait_all()
    assert picker.status.textFormat() == Qt.TextFormat.PlainText


def test_monitor_status_escapes_the_hosts_words(window) -> None:
    page = window.navigate("monitor")
    status = HostStatus(
        HostState.NO_DRIVER,
        message=HOSTILE,
        hint="<b>hint</b>",
        bad_lines=1,
        last_bad_line="<img src=x> 0, NVIDIA",
    )
    page._show_status("gpu1", status)
    text = page.status_label.text()
    assert "<img" not in text and "&lt;img src=&#x27;file:///etc/passwd&#x27;&gt;" in text
    assert "&lt;b&gt;hint&lt;/b&gt;" in text
    tip = page.status_label.toolTip()
    assert "<img" not in tip and "&lt;img src=x&gt; 0, NVIDIA" in tip


def test_a_failed_connection_box_escapes_what_the_host_printed(window, ctx, monkeypatch) -> None:
    from PySide6.QtWidgets import QMessageBox

    from gpu_companion.core.hosts.registry import Host
    from gpu_companion.core.ssh.connection import ConnectionTest

    page = window.navigate("hosts")
    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    printed = "Connected, but 'echo ok' printed \"<img src='file:///etc/passwd'>\".\nline 2"
    page.connection._tested(Host("gpu1", "127.0.0.1", 22), ConnectionTest(False, 1.0, printed))
    assert len(shown) == 1 and "<img" not in shown[0]
    assert "&lt;img src=&#x27;file:///etc/passwd&#x27;&gt;" in shown[0] and "<br>line 2" in shown[0]
    assert page.connection_status.text() == printed  # the plain label shows it as it is
