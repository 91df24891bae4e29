"""~/.ssh and the app's folder in it are created 0700 on every path, also when the first thing the
app writes there is a trusted host key (mkdir(parents=True) would give the parents 0755)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.ssh.config_writer import make_private_dirs
from gpu_companion.core.ssh.connection import SessionFactory
from tests.conftest import make_ed25519


def mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_trusting_a_host_key_first_creates_ssh_dir_0700(tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"
    home.mkdir()
    known = home / ".ssh" / "gpu-companion" / "known_hosts"
    old = os.umask(0o022)
    try:
        SessionFactory(None, known).trust_host_key(  # type: ignore[arg-type]
            Host("gpu1", "203.0.113.7", 41022), make_ed25519()
        )
    finally:
        os.umask(old)
    assert mode(home / ".ssh") == 0o700 and mode(known.parent) == 0o700
    assert known.read_text().startswith("[203.0.113.7]:41022 ssh-ed25519 ")


def test_existing_folders_keep_their_mode(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir(mode=0o755)
    os.chmod(tmp_path / "shared", 0o755)
    make_private_dirs(tmp_path / "shared" / "a" / "b")
    assert mode(tmp_path / "shared") == 0o755
    assert mode(tmp_path / "shared" / "a") == mode(tmp_path / "shared" / "a" / "b") == 0o700
