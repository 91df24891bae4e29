"""Settings → Language: 简体中文 chosen in the window is what the next start speaks (the window
and the commands alike); "As the system" follows the locale again; --lang wins for one run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from gpu_companion.core.common import i18n
from gpu_companion.ui.settings.language_section import LanguageSection

CJK = re.compile(r"[\u4e00-\u9fff]")


def _start(home: Path, *args: str) -> str:
    """The installed entry point as the next start runs it, in an English (C) locale."""
    env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")}
    env.update(LANG="C.UTF-8", GPU_COMPANION_HOME=str(home), QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, "-m", "gpu_companion", *args],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_chinese_chosen_in_settings_is_spoken_at_the_next_start(app_paths, qtbot) -> None:  # type: ignore[no-untyped-def]
    home = app_paths.config_dir.parent  # GPU_COMPANION_HOME of this test
    section = LanguageSection(app_paths.config_dir)
    qtbot.addWidget(section)
    assert section.choice.currentData() is None  # follows the system by default
    assert not CJK.search(_start(home, "--help"))

    section.choice.setCurrentIndex(section.choice.findData("zh_CN"))
    assert (app_paths.config_dir / "language").read_text().strip() == "zh_CN"
    assert "Restart" in section.note.text()  # this window stays English until then
    assert i18n.current() == "en"

    assert CJK.search(_start(home, "--help"))  # the commands follow the setting
    smoke = _start(home, "--smoke-test")  # and so does the window
    assert CJK.search(smoke), smoke
    assert not CJK.search(_start(home, "--lang", "en", "--help"))  # --lang wins for one run

    section.choice.setCurrentIndex(section.choice.findData(None))
    assert not (app_paths.config_dir / "language").exists()
    assert not CJK.search(_start(home, "--help"))
