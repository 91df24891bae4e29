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
    assume(BLOCK not in data)
    written = with_include(data, BLOCK)
    assert written.startswith(BLOCK)
    assert without_include(written, BLOCK) == data
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
    assert writer.remove()
    if existing is None:  # the app created it: remove leaves no config behind
        assert not config.exists()
    else:
        assert config.read_bytes() == existing
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
    config.write_text("Host *\n  User me\nHost other gpu1\n  HostName 10.9.9.9\n")
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


# --- the user's files stay theirs ---------------------------------------------------------------


def test_host_equals_name_and_included_files_are_seen_as_ssh_sees_them(isolated_home):
    ssh_dir = isolated_home / ".ssh"
    (ssh_dir / "conf.d").mkdir()
    (ssh_dir / "conf.d" / "work").write_text("Host gpu3\n  HostName 10.3.3.3\n")
    config = ssh_dir / "config"
    # absolute: ssh finds relative Includes from the passwd home, not the test's $HOME
    config.write_text(
        f"Include {ssh_dir}/conf.d/*\nHost=gpu1\n  HostName 10.1.1.1\n"
        "Host GPU2\n  HostName 10.2.2.2\nHost *\n  User me\n  ServerAliveInterval 30\n"
    )
    before = {a: ssh_g(config, a)["hostname"] for a in ("gpu1", "gpu2", "GPU2", "gpu3", "gpu4")}
    writer = SshConfigWriter(isolated_home)
    result = writer.write([entry(alias=a) for a in ("gpu1", "gpu2", "gpu3", "gpu4")])
    # ssh matches Host names case-sensitively: `Host GPU2` says nothing about `ssh gpu2`
    assert sorted(result.skipped) == ["gpu1", "gpu3"]
    after = {a: ssh_g(config, a)["hostname"] for a in before}
    assert after["gpu1"] == before["gpu1"] == ["10.1.1.1"]  # the user's own entries still win
    assert after["gpu3"] == before["gpu3"] == ["10.3.3.3"]
    assert after["GPU2"] == before["GPU2"] == ["10.2.2.2"]
    assert after["gpu2"] == after["gpu4"] == ["203.0.113.7"]  # ours, where nothing was before
    assert before["gpu2"] == ["gpu2"] and before["gpu4"] == ["gpu4"]


def test_a_comment_that_only_looks_like_the_marker_is_never_removed(isolated_home):
    config = isolated_home / ".ssh" / "config"
    mine = MARKER + b"Include ~/.ssh/my-own-hosts\n" + b"# Added by GPU Companion? no, by me\n"
    config.write_bytes(b"Host a\n" + mine)
    writer = SshConfigWriter(isolated_home)
    writer.write([entry()])
    assert config.read_bytes() == writer.include_block + b"Host a\n" + mine
    writer.remove()
    assert config.read_bytes() == b"Host a\n" + mine


def test_a_read_only_config_is_refused_with_a_message_not_replaced(isolated_home):
    config = isolated_home / ".ssh" / "config"
    config.write_bytes(b"Host a\n")
    config.chmod(0o444)
    with pytest.raises(UserError, match="is read-only; it was left as is") as info:
        SshConfigWriter(isolated_home).write([entry()])
    assert "Include" in info.value.hint  # the line to add by hand
    assert config.read_bytes() == b"Host a\n" and stat.S_IMODE(config.stat().st_mode) == 0o444
    assert not (isolated_home / ".ssh" / "config.gpu-companion.bak").exists()


def test_a_config_of_another_user_is_refused(isolated_home, tmp_path):
    config = isolated_home / ".ssh" / "config"
    if os.geteuid() == 0:
        config.write_bytes(b"Host a\n")
        os.chown(config, 12345, 12345)
        expected = b"Host a\n"
    else:  # a file root owns, behind the user's link
        config.symlink_to("/etc/hostname")
        expected = Path("/etc/hostname").read_bytes()
    with pytest.raises(UserError, match="belongs to another user"):
        SshConfigWriter(isolated_home).write([entry()])
    assert config.read_bytes() == expected


def test_a_dangling_symlink_gives_a_message(isolated_home, tmp_path):
    config = isolated_home / ".ssh" / "config"
    config.symlink_to(tmp_path / "dotfiles" / "gone" / "ssh_config")
    writer = SshConfigWriter(isolated_home)
    with pytest.raises(UserError, match="which does not exist; it was left as is"):
        writer.write([entry()])
    assert config.is_symlink() and not config.exists()
    assert not (tmp_path / "dotfiles").exists()


def test_ssh_dir_is_created_0700_and_write_then_remove_leaves_no_config(tmp_path):
    home = tmp_path / "fresh-home"
    home.mkdir()
    old = os.umask(0o022)
    try:
        writer = SshConfigWriter(home)
        writer.write([entry()])
    finally:
        os.umask(old)
    assert stat.S_IMODE((home / ".ssh").stat().st_mode) == 0o700
    assert stat.S_IMODE(writer.managed_dir.stat().st_mode) == 0o700
    assert (home / ".ssh" / "config").exists()
    writer.remove()
    assert not (home / ".ssh" / "config").exists()
    assert not writer.backup_path.exists()


def test_the_backup_is_written_atomically(isolated_home, monkeypatch):
    import gpu_companion.core.ssh.config_writer as mod

    config = isolated_home / ".ssh" / "config"
    config.write_bytes(b"Host a\n")
    renamed = []
    real_replace = os.replace
    monkeypatch.setattr(
        mod.os, "replace", lambda a, b: (renamed.append((Path(a), Path(b))), real_replace(a, b))
    )
    writer = SshConfigWriter(isolated_home)
    writer.write([])
    into_backup = [a for a, b in renamed if b == writer.backup_path]
    assert len(into_backup) == 1 and into_backup[0].name.startswith(".")
    assert writer.backup_path.read_bytes() == b"Host a\n"
    assert stat.S_IMODE(writer.backup_path.stat().st_mode) == 0o600


def test_without_the_include_the_users_own_entries_do_not_matter(isolated_home):
    """The app's own `ssh -F` reads only the managed file: nothing is left out of it until the
    Include puts it in front of the user's config."""
    (isolated_home / ".ssh" / "config").write_text("Host gpu1\n  HostName 10.9.9.9\n")
    writer = SshConfigWriter(isolated_home)
    result = writer.write_managed([entry()])
    assert result.skipped == {}
    assert ssh_g(writer.config_path, "gpu1")["hostname"] == ["203.0.113.7"]
    assert list(writer.write([entry()]).skipped) == ["gpu1"]


def test_a_write_the_system_refuses_gives_a_message_and_keeps_the_file(isolated_home):
    """A real refusal even for root: a file size limit (RLIMIT_FSIZE) in a child process."""
    import sys
    import textwrap

    config = isolated_home / ".ssh" / "config"
    config.write_bytes(b"Host a\n  HostName 10.0.0.1\n")
    code = textwrap.dedent(
        f"""
        import resource, signal
        from pathlib import Path
        from gpu_companion.core.common.errors import UserError
        from gpu_companion.core.ssh.config_writer import HostEntry, SshConfigWriter
        writer = SshConfigWriter(Path({str(isolated_home)!r}))
        writer.write_managed([HostEntry("gpu1", "203.0.113.7")])
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (8, 8))
        try:
            writer.write([HostEntry("gpu1", "203.0.113.7")])
        except UserError as exc:
            print("MESSAGE", exc)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    assert "MESSAGE Could not write" in out.stdout and "File too large" in out.stdout
    assert config.read_bytes() == b"Host a\n  HostName 10.0.0.1\n"
    assert not [p for p in (isolated_home / ".ssh").iterdir() if p.name.startswith(".")]
