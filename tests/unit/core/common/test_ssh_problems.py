"""One SSH vocabulary: OpenSSH's stderr (ssh, rsync -e ssh) read into the same kinds the app's
own connections raise (ConnectionProblem.kind), each with the renter's message and remedy."""

from __future__ import annotations

import pytest

from gpu_companion.core.common.ssh_problems import (
    PROBLEM_TEXT,
    SshProblem,
    openssh_problem,
)

CHANGED = """\
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!
Someone could be eavesdropping on you right now (man-in-the-middle attack)!
It is also possible that a host key has just been changed.
The fingerprint for the ED25519 key sent by the remote host is
SHA256:3oV8x1f0ZNO0kQ2Yd3kS9C0qv1oQWm0lEJ1r7b6m1xk.
Please contact your system administrator.
Add correct host key in /home/u/.ssh/known_hosts to get rid of this message.
Offending ED25519 key in /home/u/.ssh/known_hosts:3
Host key for [ssh4.vast.ai]:41022 has changed and you have requested strict checking.
Host key verification failed.
rsync: connection unexpectedly closed (0 bytes received so far) [sender]
rsync error: unexplained error (code 255) at io.c(232) [sender=3.2.7]
"""


@pytest.mark.parametrize(
    ("output", "kind"),
    [
        (CHANGED, SshProblem.HOST_KEY_CHANGED),
        ("No ED25519 host key is known for [127.0.0.1]:41022 and you have requested strict "
         "checking.\r\nHost key verification failed.\r\n", SshProblem.HOST_KEY_UNKNOWN),
        ("Host key verification failed.", SshProblem.HOST_KEY_UNVERIFIED),
        ("root@ssh4.vast.ai: Permission denied (publickey).", SshProblem.AUTH_FAILED),
        ("Received disconnect from 1.2.3.4 port 22:2: Too many authentication failures",
         SshProblem.AUTH_FAILED),
        ("ssh: Could not resolve hostname no-such-host.invalid: Name or service not known",
         SshProblem.DNS),
        ("ssh: connect to host 127.0.0.1 port 2222: Connection refused", SshProblem.REFUSED),
        ("ssh: connect to host 10.0.0.1 port 22: Connection timed out", SshProblem.TIMEOUT),
        ("Connection timed out during banner exchange", SshProblem.TIMEOUT),
        ("kex_exchange_identification: Connection closed by remote host",
         SshProblem.HANDSHAKE_CLOSED),
        ("Connection closed by 127.0.0.1 port 41022", SshProblem.HANDSHAKE_CLOSED),
    ],
)  # fmt: skip
def test_openssh_output_reads_as_the_same_kind(output: str, kind: SshProblem) -> None:
    assert openssh_problem(output) is kind


@pytest.mark.parametrize(
    "output",
    ["", "sending incremental file list\n", "rsync error: some files could not be transferred"],
)
def test_output_without_an_ssh_failure_is_none(output: str) -> None:
    assert openssh_problem(output) is None


def test_kinds_compare_and_print_as_their_values() -> None:
    assert SshProblem.AUTH_FAILED == "auth_failed"
    assert SshProblem("host_key_changed") is SshProblem.HOST_KEY_CHANGED
    assert f"{SshProblem.DNS}" == str(SshProblem.DNS) == "dns"
    assert {"refused": 1}[SshProblem.REFUSED] == 1  # dict keys written as strings still match


def test_every_kind_has_a_message_and_a_hint_and_says_who_acts() -> None:
    assert set(PROBLEM_TEXT) == set(SshProblem)
    for kind in SshProblem:
        assert kind.text.message and kind.text.hint
    assert SshProblem.HOST_KEY_CHANGED.needs_user and SshProblem.AUTH_FAILED.needs_user
    assert not SshProblem.REFUSED.needs_user and not SshProblem.TIMEOUT.needs_user


def test_the_app_connections_use_the_same_kinds() -> None:
    from gpu_companion.core.ssh.connection import KINDS, ConnectionProblem

    problem = ConnectionProblem("handshake_closed", "box closed the connection")
    assert problem.kind is SshProblem.HANDSHAKE_CLOSED
    assert problem.hint == SshProblem.HANDSHAKE_CLOSED.text.hint
    assert ConnectionProblem(SshProblem.REFUSED, "x", "").hint == ""
    assert set(KINDS) == {k.value for k in SshProblem}
    with pytest.raises(ValueError):
        ConnectionProblem("no-such-kind", "x")
