from __future__ import annotations

import pytest

from gpu_companion.cli import main
from gpu_companion.core.system.platform_support import support


def test_linux_is_tested_macos_untested_windows_unsupported() -> None:
    assert support("linux")[0] == "tested"
    kind, text = support("darwin")
    assert kind == "untested" and "not been tested end to end on macOS" in text
    kind, text = support("win32")
    assert kind == "unsupported" and "WSL2" in text


def test_the_cli_refuses_plainly_where_it_cannot_work(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("sys.platform", "win32")
    assert main(["hosts", "list"]) == 2
    assert "does not run on win32 yet" in capsys.readouterr().err


def test_the_cli_warns_on_an_untested_system(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("sys.platform", "darwin")
    with pytest.raises(SystemExit):
        main(["--version"])
    assert "not been tested end to end on macOS" in capsys.readouterr().err


def test_without_a_display_the_window_says_so(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(name, raising=False)
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "there is no display here" in err and "gpu-companion watch" in err
    assert "xcb" not in err
