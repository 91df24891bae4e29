"""rsync's ssh failures carry the same problem kind as the app's own SSH connections."""

import pytest

from gpu_companion.core.common.ssh_problems import SshProblem
from gpu_companion.core.transfers.rsync.errors import explain_exit_code


@pytest.mark.parametrize(
    "said, kind",
    [
        ("root@203.0.113.7: Permission denied (publickey).", SshProblem.AUTH_FAILED),
        ("@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@", SshProblem.HOST_KEY_CHANGED),
        ("ssh: Could not resolve hostname gpu1: Name or service not known", SshProblem.DNS),
        ("ssh: connect to host 203.0.113.7 port 41022: Connection refused", SshProblem.REFUSED),
    ],
)
def test_the_exit_of_rsync_names_the_ssh_problem(said: str, kind: SshProblem) -> None:
    info = explain_exit_code(255, said + "\nrsync: connection unexpectedly closed")
    assert info.problem is kind
    assert explain_exit_code(23, "rsync: some files vanished").problem is None
