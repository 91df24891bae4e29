"""rsync error lines, exit codes and versions: samples written here, plus real rsync failures."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gpu_companion.core.transfers.rsync.errors import (
    ExitInfo,
    explain_exit_code,
    last_error_line,
    parse_error_line,
)
from gpu_companion.core.transfers.rsync.versions import (
    is_openrsync,
    parse_rsync_version,
    parse_version_string,
    supports_progress2,
    supports_protect_args,
)
from tests.conftest import missing_component

# --- parse_error_line ---------------------------------------------------------------------------


def test_plain_error_line() -> None:
    e = parse_error_line(
        "rsync error: timeout in data send/receive (code 30) at io.c(197) [receiver=3.2.7]"
    )
    assert e is not None
    assert (e.level, e.code, e.text) == ("error", 30, "timeout in data send/receive")
    assert (e.source_file, e.source_line) == ("io.c", 197)
    assert (e.role, e.version, e.version_tuple) == ("receiver", "3.2.7", (3, 2, 7))


def test_warning_line_code_24() -> None:
    e = parse_error_line(
        "rsync warning: some files vanished before they could be transferred (code 24) "
        "at main.c(1207) [sender=3.1.3]\n"
    )
    assert e is not None and e.level == "warning" and e.code == 24


@pytest.mark.parametrize(
    ("role_text", "role"),
    [("Receiver", "receiver"), ("GENERATOR", "generator"), ("client", "client")],
)
def test_roles_in_any_case(role_text: str, role: str) -> None:
    e = parse_error_line(
        f"rsync error: error in socket IO (code 10) at io.c(99) [{role_text}=3.0.6]"
    )
    assert e is not None and e.role == role


def test_git_describe_version() -> None:
    e = parse_error_line(
        "rsync error: unexplained error (code 255) at io.c(820) [sender=v3.3.0-12-gabc1234]"
    )
    assert e is not None
    assert e.version == "v3.3.0-12-gabc1234"
    assert e.version_tuple == (3, 3, 0)


def test_absolute_source_path_and_syslog_prefix() -> None:
    e = parse_error_line(
        "Mar  3 11:00:01 gpu7 rsyncd[99]: rsync error: error in file IO (code 11) at "
        "/opt/build/rsync-3.1.1/receiver.c(389) [receiver=3.1.1]\r"
    )
    assert e is not None
    assert e.code == 11
    assert e.source_file == "/opt/build/rsync-3.1.1/receiver.c"
    assert e.source_line == 389


def test_very_old_line_without_role() -> None:
    e = parse_error_line("rsync error: partial transfer (code 23) at main.c(578)")
    assert e is not None and e.code == 23 and e.role is None and e.version is None


@pytest.mark.parametrize(
    "line",
    [
        "rsync: connection unexpectedly closed (0 bytes received so far) [sender]",
        "sent 1,024 bytes  received 35 bytes  2,118.00 bytes/sec",
        "",
        "   4,096 100%    1.00kB/s    0:00:00 (xfr#1, to-chk=0/1)",
    ],
)
def test_other_lines_are_not_error_lines(line: str) -> None:
    assert parse_error_line(line) is None


def test_last_error_line_picks_the_final_one() -> None:
    out = (
        "rsync error: error in rsync protocol data stream (code 12) at io.c(226) "
        "[generator=3.2.3]\n"
        "rsync: [sender] write error: Broken pipe (32)\n"
        "rsync error: unexplained error (code 255) at io.c(848) [sender=3.2.3]\n"
    )
    last = last_error_line(out)
    assert last is not None and (last.code, last.role) == (255, "sender")
    assert last_error_line("all good\n") is None


# --- explain_exit_code --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "category", "retryable"),
    [
        (0, "ok", False),
        (1, "usage", False),
        (2, "usage", False),
        (3, "usage", False),
        (5, "auth", False),
        (10, "connection", True),
        (11, "disk_full", False),
        (12, "connection", True),
        (20, "cancelled", False),
        (23, "partial", False),
        (24, "partial", False),
        (30, "connection", True),
        (35, "connection", True),
        (124, "connection", True),
        (125, "connection", True),
        (126, "connection", False),
        (127, "connection", False),
        (255, "connection", True),
        (43, "unknown", False),
        (-15, "cancelled", False),
    ],
)
def test_exit_code_categories(code: int, category: str, retryable: bool) -> None:
    info = explain_exit_code(code)
    assert isinstance(info, ExitInfo)
    assert (info.code, info.category, info.retryable) == (code, category, retryable)
    assert info.message.endswith(".")


def test_messages_say_what_to_do() -> None:
    assert explain_exit_code(127).message.startswith("rsync is not installed on the remote host")
    assert "apt-get install" in explain_exit_code(127).message
    assert "df -h" in explain_exit_code(11).message
    assert "43" in explain_exit_code(43).message
    for code in (10, 12, 30, 255):
        assert "again" in explain_exit_code(code).message


def test_ssh_permission_denied_is_auth() -> None:
    info = explain_exit_code(
        255,
        "gpu@203.0.113.7: Permission denied (publickey).\n"
        "rsync: connection unexpectedly closed (0 bytes received so far) [sender]\n",
    )
    assert (info.category, info.retryable) == ("auth", False)
    assert "key" in info.message


def test_file_permission_denied_is_not_auth() -> None:
    out = 'rsync: [receiver] mkstemp "/data/.x.abc" failed: Permission denied (13)\n'
    assert explain_exit_code(23, out).category == "partial"


def test_changed_host_key_is_auth_and_names_recycled_ips() -> None:
    info = explain_exit_code(255, "Host key verification failed.\r\n")
    assert info.category == "auth"
    assert "recycled" in info.message


def test_no_space_overrides_the_code() -> None:
    out = 'rsync: [receiver] write failed on "/data/ds.tar": No space left on device (28)\n'
    for code in (11, 12, 23):
        assert explain_exit_code(code, out).category == "disk_full"


def test_connection_refused_and_dns() -> None:
    refused = explain_exit_code(255, "ssh: connect to host 192.0.2.3 port 2201: Connection refused")
    assert (refused.category, refused.retryable) == ("connection", True)
    dns = explain_exit_code(
        255, "ssh: Could not resolve hostname gpu-box: Name or service not known"
    )
    assert (dns.category, dns.retryable) == ("connection", False)


def test_output_does_not_change_success() -> None:
    assert explain_exit_code(0, "Permission denied (publickey)").category == "ok"


# --- versions -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rsync  version 3.2.7  protocol version 31\nCopyright (C) 1996-2022\n", (3, 2, 7)),
        ("rsync  version v3.2.3  protocol version 31\n", (3, 2, 3)),
        ("rsync  version 3.4.1dev  protocol version 32\n", (3, 4, 1)),
        ("rsync version 3.1 protocol version 31", (3, 1, 0)),
        ("openrsync: protocol version 29\nrsync version 2.6.9 compatible\n", (2, 6, 9)),
        ("bash: rsync: command not found\n", None),
        ("", None),
    ],
)
def test_parse_rsync_version(text: str, expected: tuple[int, int, int] | None) -> None:
    assert parse_rsync_version(text) == expected


def test_feature_gates() -> None:
    assert supports_progress2((3, 1, 0)) and not supports_progress2((3, 0, 9))
    assert supports_protect_args((3, 0, 0)) and not supports_protect_args((2, 6, 9))
    assert not supports_progress2(None) and not supports_protect_args(None)
    assert parse_version_string("3.2.7-80-g509b6b59") == (3, 2, 7)
    assert parse_version_string("garbage") is None
    assert is_openrsync("openrsync: protocol version 29") and not is_openrsync("rsync  version")


# --- real rsync ---------------------------------------------------------------------------------


def _rsync() -> str:
    path = shutil.which("rsync")
    if path is None:
        missing_component("rsync is not installed")
    assert path is not None
    return path


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LC_ALL": "C"}
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)


def test_real_version() -> None:
    version = parse_rsync_version(_run([_rsync(), "--version"]).stdout)
    assert version is not None and version >= (3, 0, 0)


def test_real_missing_source_is_partial(tmp_path: Path) -> None:
    done = _run([_rsync(), "-a", "--", f"{tmp_path}/absent/", f"{tmp_path}/dst/"])
    assert done.returncode == 23
    line = last_error_line(done.stderr)
    assert line is not None and line.code == 23 and line.role == "sender"
    assert explain_exit_code(done.returncode, done.stderr).category == "partial"


def test_real_unknown_option_is_usage(tmp_path: Path) -> None:
    done = _run([_rsync(), "--no-such-option", str(tmp_path), str(tmp_path)])
    assert done.returncode == 1
    line = last_error_line(done.stderr)
    assert line is not None and line.code == 1 and line.role == "client"
    assert explain_exit_code(1, done.stderr).category == "usage"


def test_real_remote_rsync_missing_is_127(tmp_path: Path) -> None:
    # A stand-in remote shell runs the "remote" command locally, as sshd would, through sh.
    rsh = tmp_path / "fake-ssh"
    rsh.write_text('#!/bin/sh\nshift\nexec sh -c "$*"\n')
    rsh.chmod(0o755)
    (tmp_path / "src").mkdir()
    done = _run(
        [
            _rsync(),
            "-a",
            "-e",
            str(rsh),
            "--rsync-path=/nonexistent/rsync",
            "--",
            f"{tmp_path}/src/",
            f"box:{tmp_path}/dst/",
        ]
    )
    # rsync reports 127 once it reaps the remote shell, but on a loaded machine it can see the
    # closed connection first and exit 12; the shell's "not found" decides the message either way
    assert done.returncode in (12, 127), done.stderr
    if done.returncode == 127:
        line = last_error_line(done.stderr)
        assert line is not None and line.code == 127 and line.text == "remote command not found"
    info = explain_exit_code(done.returncode, done.stderr)
    assert info.category == "connection" and not info.retryable
    assert info.message.startswith("rsync is not installed on the remote host")


def test_a_connection_closed_because_remote_rsync_is_missing_says_so() -> None:
    output = (
        "sh: 1: /usr/bin/rsync: not found\n"
        "rsync: connection unexpectedly closed (0 bytes received so far) [sender]\n"
        "rsync error: error in rsync protocol data stream (code 12) at io.c(232) [sender=3.2.7]\n"
    )
    info = explain_exit_code(12, output)
    assert info.message.startswith("rsync is not installed on the remote host")
    assert not info.retryable
    assert explain_exit_code(12, "rsync: connection unexpectedly closed").retryable
