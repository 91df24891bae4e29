"""Names as the user wrote them: rsync under LC_ALL=C prints every UTF-8 byte as `\\#ooo`; the
progress parser turns them back (real rsync output, a local copy)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from gpu_companion.core.transfers.rsync.progress import (
    FileStarted,
    RsyncProgressParser,
    unescape_name,
)


def test_real_rsync_output_gives_the_names_back(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("café.bin", "数据 集.pt", "plain.txt"):
        (src / name).write_bytes(os.urandom(1024))
    env = dict(os.environ, LC_ALL="C")
    out = subprocess.run(
        ["rsync", "-a", "--info=progress2,name1", "--no-inc-recursive", f"{src}/",
         f"{tmp_path / 'dst'}/"],
        capture_output=True, text=True, env=env, check=True,
    ).stdout  # fmt: skip
    assert "\\#" in out  # rsync escaped them
    parser = RsyncProgressParser()
    names = [e.name for e in [*parser.feed(out), *parser.finish()] if isinstance(e, FileStarted)]
    assert sorted(names) == ["café.bin", "plain.txt", "数据 集.pt"]


def test_unescape_rules() -> None:
    assert unescape_name("caf\\#303\\#251.bin") == "café.bin"
    assert unescape_name("plain") == "plain"
    assert unescape_name("bad\\#377") == "bad\ufffd"  # not UTF-8: shown, not raised
