"""The generated ssh config: the user's bytes survive, writes are idempotent, hostile values are
refused before anything is written, and real `ssh -G` reads each block as intended."""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gpu_companion.core.common.errors import UserError, ValidationError
from gpu_companion.core.ssh.config_writer import (
    MARKER,
    HostEntry,
    SshConfigWriter,
    with_include,
    without_include,
)

BLOCK = MARKER + b'Include "/home/u/.ssh/gpu-companion/config"\n'


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def entry(**kw) -> HostEntry:
    base = dict(alias="gpu1", hostname="203.0.113.7", port=41022, user="root")
    return HostEntry(**{**base, **kw})


# --- properties ------------------------------------------------------------------------------

user_bytes = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda s: s.encode("utf-8")),
    st.lists(
        st.sampled_from(
            [
                b"Host *\n",
                b"Host gpu1\n",
                b"  HostName 10.0.0.1\n",
                b"Match all\n",
                b"\n",
                b"# comment\n",
                b"Include other\n",
                b"\r\n",
                b"  User root",
                b"\xff\xfe",
                b"Include ~/.ssh/gpu-companion/config\n",
            ]
        ),
        max_size=12,
    ).map(b"".join),
)


@given(user_bytes)
@settings(max_examples=200)
def test_include_in_and_out_keeps_every_user_byte(data):
    assume(b"# Added by GPU Companion" not in data)
    written = with_include(data, BLOCK)
    assert written.startswith(BLOCK)
    assert without_include(written) == data
    assert with_include(written, BLOCK) == written


@given(user_bytes)
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_writer_on_real_files_round_trips(tmp_path, data):
    assume(b"# Added by GPU Companion" not in data)
    home = Path(tempfile.mkdtemp(dir=tmp_path))
    (home / ".ssh").mkdir()
    config = home / ".ssh" / "config"
    config.write_bytes(data)
    writer = SshConfigWriter(home)
    writer.write([])
    first = snapshot(home)
    writer.write([])
    assert snapshot(home) == first  # a second write changes no byte
    assert config.read_bytes().startswith(writer.include_block)
    writer.remove()
    assert config.read_bytes() == data
    assert (home / ".ssh" / "config.gpu-companion.bak").read_bytes() == data


# --- the include line -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "existing", [None, b"", b"ServerAliveInterval 30", b"Host a\n HostName b\n"]
)
def test_include_goes_first_for_missing_empty_and_hostless_files(isolated_home, existing):
    config = isolated_home / ".ssh" / "config"
    if existing is not None:
        config.write_bytes(existing)
    writer = SshConfigWriter(isolated_home)
    result = writer.write([entry()])
    data = config.read_bytes()
    assert data == writer.include_block + (existing or b"")
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert stat.S_IMODE(writer.config_path.stat().st_mode) == 0o600
    assert (result.backup is None) == (existing is None)
    assert writer.is_installed()
    assert writer.remove() and config.read_bytes() == (existing or b"")
    assert not writer.config_path.exists()


def test_backup_is_taken_once_before_the_first_change(isolated_home):
    config = isolated_home / ".ssh" / "config"
    config.write_bytes(b"Host a\n")
    writer = SshConfigWriter(isolated_home)
    writer.write([])
    writer.remove()
    config.write_bytes(b"Host a\nHost b\n")
    writer.write([])
    assert writer.backup_path.read_bytes() == b"Host a\n"


def test_a_symlinked_config_stays_a_symlink(isolated_home):
    real = isolated_home / "dotfiles" / "ssh_config"
    real.parent.mkdir()
    real.write_bytes(b"Host a\n")
    link = isolated_home / ".ssh" / "config"
    link.symlink_to(real)
    SshConfigWriter(isolated_home).write([entry()])
    assert link.is_symlink()
    assert real.read_bytes().endswith(b"Host a\n")


def test_no_temp_files_are_left_and_temp_names_start_with_a_dot(isolated_home, monkeypatch):
    import gpu_companion.core.ssh.config_writer as mod

    seen = []
    real_replace = os.replace
    monkeypatch.setattr(mod.os, "replace", lambda a, b: (seen.append(a), real_replace(a, b)))
    SshConfigWriter(isolated_home).write([entry()])
    assert seen and all(Path(p).name.startswith(".") for p in seen)
    leftovers = [p for p in (isolated_home / ".ssh").rglob(".*") if p.is_file()]
    assert leftovers == []


def test_an_alias_the_user_already_defines_is_reported_not_shadowed(isolated_home):
    config = isolated_home / ".ssh" / "config"
    config.write_text("Host *\n  User me\nHost GPU1 other\n  HostName 10.9.9.9\n")
    writer = SshConfigWriter(isolated_home)
    result = writer.write([entry(), entry(alias="gpu2")])
    assert list(result.skipped) == ["gpu1"]
    assert "already defines" in result.skipped["gpu1"]
    managed = writer.config_path.read_text()
    assert "Host gpu2" in managed and "Host gpu1" not in managed


# --- rendering and ssh -G -----------------------------------------------------------------------


def ssh_g(config: Path, alias: str) -> dict[str, list[str]]:
    out = subprocess.run(
        ["ssh", "-G", "-F", str(config), alias], capture_output=True, text=True, check=True
    ).stdout
    got: dict[str, list[str]] = {}
    for line in out.splitlines():
        k, _, v = line.partition(" ")
        got.setdefault(k, []).append(v)
    return got


def test_rendered_block_as_ssh_reads_it(isolated_home, tmp_path):
    pub = tmp_path / "my keys" / "vast.ai.pub"
    writer = SshConfigWriter(isolated_home)
    result = writer.write(
        [
            entry(identity_file=pub, proxy_jump="jump@bastion.example:2222", forwards=(8888, 6006)),
            entry(alias="nokey", hostname="nokey.example", port=22, user="ubuntu"),
        ]
    )
    assert result.checked_with_ssh == 2
    got = ssh_g(isolated_home / ".ssh" / "config", "gpu1")
    assert got["hostname"] == ["203.0.113.7"] and got["port"] == ["41022"]
    assert got["identityfile"] == [str(pub)]
    assert got["identitiesonly"] == ["yes"]
    assert got["userknownhostsfile"] == [str(writer.known_hosts)]
    assert got["serveraliveinterval"] == ["15"] and got["serveralivecountmax"] == ["4"]
    assert got["proxyjump"] == ["jump@bastion.example:2222"]
    assert sorted(got["localforward"]) == [
        "[127.0.0.1]:6006 [127.0.0.1]:6006",
        "[127.0.0.1]:8888 [127.0.0.1]:8888",
    ]
    nokey = ssh_g(isolated_home / ".ssh" / "config", "nokey")
    assert nokey["hostname"] == ["nokey.example"]
    assert nokey["identitiesonly"] == ["yes"]  # pinned: the user's agent never offers its keys
    assert "identityagent" not in nokey or nokey["identityagent"] == ["SSH_AUTH_SOCK"]


def test_pinned_options_win_over_a_users_host_star(isolated_home, tmp_path):
    """The Include is first and ssh keeps the first value: `Host *` cannot weaken a managed host."""
    user = isolated_home / ".ssh" / "config"
    user.write_bytes(
        b"Host *\n    StrictHostKeyChecking no\n    ForwardAgent yes\n    IdentitiesOnly no\n"
        b"    UserKnownHostsFile /dev/null\n    IdentityAgent none\n"
    )
    sock = tmp_path / "run" / "agent.sock"
    writer = SshConfigWriter(isolated_home)
    writer.write([entry(identity_file=tmp_path / "run" / "keys" / "vast-ai", identity_agent=sock)])
    got = ssh_g(user, "gpu1")
    assert got["stricthostkeychecking"] == ["true"]
    assert got["forwardagent"] == ["no"]
    assert got["identitiesonly"] == ["yes"]
    assert got["userknownhostsfile"] == [str(writer.known_hosts)]
    assert got["identityagent"] == [str(sock)]
    other = ssh_g(user, "unmanaged.example")  # the user's own hosts keep the user's choices
    assert other["stricthostkeychecking"] == ["false"] and other["forwardagent"] == ["yes"]


def test_identity_agent_path_is_checked_like_any_path(isolated_home):
    writer = SshConfigWriter(isolated_home)
    with pytest.raises(ValidationError):
        writer.write([entry(identity_agent=Path("/tmp/a\nProxyCommand id"))])
    assert not writer.config_path.exists()


def test_ssh_g_mismatch_refuses_and_writes_nothing(isolated_home, monkeypatch):
    writer = SshConfigWriter(isolated_home)
    real_render = writer.render
    # a rendering bug: the block names another host than intended
    monkeypatch.setattr(
        writer, "render", lambda es: real_render(es).replace("HostName 203.0.113.7", "")
    )
    before = snapshot(isolated_home)
    with pytest.raises(UserError, match="differently than intended"):
        writer.write([entry()])
    after = {k: v for k, v in snapshot(isolated_home).items()}
    assert after == before


def test_an_unreadable_user_config_is_refused(isolated_home):
    (isolated_home / ".ssh" / "config").mkdir()
    with pytest.raises(UserError, match="is a directory"):
        SshConfigWriter(isolated_home).write([entry()])


# --- hostile values -----------------------------------------------------------------------------

HOSTILE = [
    ("alias", dict(alias="gpu1\nProxyCommand sh -c id")),
    ("alias", dict(alias="gpu 1")),
    ("alias", dict(alias="gpu#1")),
    ("alias", dict(alias='"gpu1"')),
    ("alias", dict(alias="gрu1")),  # Cyrillic 'р'
    ("alias", dict(alias="*")),
    ("hostname", dict(hostname="10.0.0.1\n  ProxyCommand nc evil 22")),
    ("hostname", dict(hostname="host ProxyCommand=id")),
    ("hostname", dict(hostname="evil.com#")),
    ("hostname", dict(hostname="exаmple.com")),  # Cyrillic 'а'
    ("hostname", dict(hostname="'x'")),
    ("hostname", dict(hostname="-oProxyCommand=id")),
    ("user", dict(user="root\nProxyCommand id")),
    ("user", dict(user="ro ot")),
    ("user", dict(user="root#")),
    ("user", dict(user='r"oot')),
    ("user", dict(user="-oProxyCommand=id")),
    ("port", dict(port=0)),
    ("port", dict(port=70000)),
    ("port", dict(port="22\nProxyCommand id")),
    ("proxy_jump", dict(proxy_jump="bastion\nProxyCommand id")),
    ("proxy_jump", dict(proxy_jump="b astion")),
    ("proxy_jump", dict(proxy_jump="u@h:0")),
    ("proxy_jump", dict(proxy_jump="none")),
    ("identity_file", dict(identity_file=Path('/tmp/a"b.pub'))),
    ("identity_file", dict(identity_file=Path("/tmp/a\nProxyCommand id"))),
    ("identity_file", dict(identity_file=Path("relative.pub"))),
    ("forwards", dict(forwards=(22,))),
]


@pytest.mark.parametrize(("field", "values"), HOSTILE, ids=[repr(v) for _, v in HOSTILE])
def test_hostile_values_are_refused_by_field_and_write_nothing(isolated_home, field, values):
    config = isolated_home / ".ssh" / "config"
    config.write_bytes(b"Host mine\n  HostName 192.0.2.1\n")
    before = snapshot(isolated_home)
    writer = SshConfigWriter(isolated_home)
    with pytest.raises(ValidationError) as info:
        writer.write([entry(alias="fine"), entry(**values)])
    assert info.value.field == field
    assert info.value.message
    assert snapshot(isolated_home) == before
    assert not writer.managed_dir.exists()
