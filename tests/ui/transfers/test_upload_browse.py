"""The upload form lets the user pick a folder (a dataset, a project) as well as a single file."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from gpu_companion.core.hosts.registry import Host
from gpu_companion.ui.transfers.dialogs import TransferDialog


@pytest.fixture
def upload(qtbot):  # type: ignore[no-untyped-def]
    dialog = TransferDialog([Host("gpu-test", "127.0.0.1")], "upload", lambda h: None)
    qtbot.addWidget(dialog)
    return dialog


def test_upload_browse_picks_a_folder(upload, qtbot, tmp_path: Path, monkeypatch) -> None:
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    (dataset / "a.bin").write_bytes(b"x")
    asked: list[str] = []

    def pick_dir(parent, title, start=""):  # type: ignore[no-untyped-def]
        asked.append(title)
        return str(dataset)

    def no_file(*a, **k):  # type: ignore[no-untyped-def]
        raise AssertionError("a folder upload must not open a file picker")

    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(pick_dir))
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(no_file))
    qtbot.mouseClick(upload.browse_folder, Qt.MouseButton.LeftButton)
    assert asked == ["Folder to upload"]
    assert upload.local.text() == str(dataset)
    upload._try_accept()
    assert upload.job is not None and upload.job.local_path == str(dataset)


def test_upload_browse_still_picks_one_file(upload, qtbot, tmp_path: Path, monkeypatch) -> None:
    f = tmp_path / "weights.pt"
    f.write_bytes(b"x")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(f), "")))
    qtbot.mouseClick(upload.browse_file, Qt.MouseButton.LeftButton)
    assert upload.local.text() == str(f)


def test_download_browse_picks_the_folder_to_download_into(qtbot, tmp_path, monkeypatch) -> None:
    dialog = TransferDialog([Host("gpu-test", "127.0.0.1")], "download", lambda h: None)
    qtbot.addWidget(dialog)
    monkeypatch.setattr(
        QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: str(tmp_path))
    )
    dialog._browse_local_folder()
    assert dialog.local.text() == str(tmp_path)
    assert not hasattr(dialog, "browse_file")
