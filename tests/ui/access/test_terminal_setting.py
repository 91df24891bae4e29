"""Settings → Terminal lists only this system's installed terminals and a custom command; the
custom command (validated, split with shlex, never a shell) is what “Open terminal” runs."""

from __future__ import annotations

import sys

import pytest

from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.core.ssh.managed import entries_from_registry
from tests.harness.launchers import RecordingLaunchers


@pytest.fixture
def launchers(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    stand_ins = RecordingLaunchers(tmp_path / "launchers", names=("myterm",))
    monkeypatch.setenv("PATH", str(stand_ins.bin_dir))  # nothing else: no system terminal
    monkeypatch.setenv("LAUNCH_RECORD", str(stand_ins.record))
    return stand_ins


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the Linux terminals")
def test_custom_terminal_command_is_offered_validated_and_launched(window, ctx, launchers):
    p = ctx.registry.save_platform(Platform("vast.ai", "", "second", "USD"))
    gpu1 = ctx.registry.save_host(Host("gpu1", "203.0.113.7", 41022, "root", p.id))
    ctx.ssh_config.write(entries_from_registry(ctx.registry, ctx.vault))
    launchers.add("xterm")
    settings = window.navigate("settings")
    offered = [settings.terminal.itemData(i) for i in range(settings.terminal.count())]
    assert offered == ["auto", "xterm", "custom"]  # no macOS/Windows ones, no missing ones
    assert not settings.custom_terminal.isEnabled()

    settings.terminal.setCurrentIndex(settings.terminal.findData("custom"))
    assert ctx.launcher.prefs.terminal == "custom" and settings.custom_terminal.isEnabled()
    settings.custom_terminal.setText("myterm --hold")  # no placeholder: refused, not saved
    settings.custom_terminal.editingFinished.emit()
    assert "Not saved" in settings.custom_note.text() and ctx.launcher.prefs.custom_terminal == ""
    settings.custom_terminal.setText("myterm --title 'GPU {alias}' -- {ssh}")
    settings.custom_terminal.editingFinished.emit()
    assert settings.custom_note.text().startswith("Saved")

    page = window.navigate("hosts")
    page.access.open_terminal(gpu1)
    assert launchers.wait(1)[0] == [
        str(launchers.bin_dir / "myterm"), "--title", "GPU gpu1", "--", "ssh", "gpu1",
    ]  # fmt: skip
    assert page.access.last_message == "Opened a terminal on gpu1."
