"""A user's hostile `Host *` (above or below the app's Include) cannot weaken a managed host:
real `ssh -G` reads every pinned option as the app wrote it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gpu_companion.core.ssh.config_writer import HostEntry, SshConfigWriter
from gpu_companion.core.ssh.managed import ManagedConfig

HOSTILE_STAR = (
    b"Host *\n"
    b"    ForwardX11 yes\n"
    b"    ForwardX11Trusted yes\n"
    b"    ForwardAgent yes\n"
    b"    PermitLocalCommand yes\n"
    b"    LocalCommand touch /tmp/gpu-companion-pwned\n"
    b"    StrictHostKeyChecking no\n"
    b"    UserKnownHostsFile /dev/null\n"
    b"    UpdateHostKeys yes\n"
    b"    IdentitiesOnly no\n"
    b"    VerifyHostKeyDNS yes\n"
)


def ssh_g(config: Path, alias: str) -> dict[str, str]:
    # ssh reads the home directory from passwd, not $HOME: name the test's config with -F
    out = subprocess.run(
        ["ssh", "-G", "-F", str(config), alias], capture_output=True, text=True, check=True
    ).stdout
    return dict(line.partition(" ")[::2] for line in out.splitlines())


def assert_pinned(got: dict[str, str], writer: SshConfigWriter) -> None:
    assert got["hostname"] == "203.0.113.7"
    assert got["forwardx11"] == "no"
    assert got["forwardx11trusted"] == "no"
    assert got["forwardagent"] == "no"
    assert got["permitlocalcommand"] == "no"
    assert got["stricthostkeychecking"] == "true"
    assert got["userknownhostsfile"] == str(writer.known_hosts)
    assert got["updatehostkeys"] == "false"
    assert got["identitiesonly"] == "yes"
    assert got["verifyhostkeydns"] == "false"


def entry() -> HostEntry:
    return HostEntry(alias="gpu1", hostname="203.0.113.7", port=41022, user="root")


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_hostile_host_star_before_or_after_the_include_weakens_nothing(isolated_home, where):
    writer = SshConfigWriter(isolated_home)
    user = writer.user_config
    if where == "after":
        user.write_bytes(HOSTILE_STAR)
        writer.write([entry()])
    else:  # the Include was set up, then a tool or the user put a `Host *` above it
        writer.write([entry()])
        user.write_bytes(HOSTILE_STAR + user.read_bytes())
        assert writer.is_included() and not writer.is_installed()
        managed = ManagedConfig(writer, registry=None, vault=None)  # type: ignore[arg-type]
        managed.entries = lambda: [entry()]  # type: ignore[method-assign]
        managed.sync()
        assert writer.is_installed()  # the Include is first again
        assert user.read_bytes().count(b"Include ") == 1
    assert HOSTILE_STAR in user.read_bytes()  # the user's bytes are kept
    assert_pinned(ssh_g(user, "gpu1"), writer)
    other = ssh_g(user, "mine.example")  # the user's own hosts keep the user's choices
    assert other["forwardx11"] == "yes" and other["stricthostkeychecking"] == "false"


def test_the_managed_file_alone_pins_the_same(isolated_home):
    """The app's own `ssh -F managed-config` reads the same pins."""
    writer = SshConfigWriter(isolated_home)
    writer.write_managed([entry()])
    assert_pinned(ssh_g(writer.config_path, "gpu1"), writer)
