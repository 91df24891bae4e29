"""Every way reaching a host over SSH fails, named once: the app's own connections (paramiko,
core.ssh.connection.ConnectionProblem) and OpenSSH's (ssh, rsync, sftp output) use these kinds,
so a renter reads the same words and the same remedy whichever part of the app met the problem.

`openssh_problem(output)` reads OpenSSH's stderr (one line or a whole output) into a kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from gpu_companion.core.common.i18n import N_, _


class SshProblem(str, Enum):
    """A kind of SSH failure; compares equal to its value ("auth_failed"...)."""

    HOST_KEY_UNKNOWN = "host_key_unknown"  # first contact: the key is not trusted yet
    HOST_KEY_CHANGED = "host_key_changed"  # the host offers another key than the trusted one
    HOST_KEY_UNVERIFIED = "host_key_unverified"  # OpenSSH refused the key, unknown or changed
    AUTH_FAILED = "auth_failed"  # the host refused the key (Permission denied)
    NO_KEY = "no_key"  # the app has no key for the host's platform
    PASSPHRASE = "passphrase"  # the key is protected and no passphrase was given
    KEYRING = "keyring"  # the system keyring could not be read
    DNS = "dns"  # the host name does not resolve
    REFUSED = "refused"  # nothing accepts connections there (or the address is unreachable)
    TIMEOUT = "timeout"  # no answer, or no SSH answer, in time
    HANDSHAKE_CLOSED = "handshake_closed"  # the server hung up during the handshake
    SSH = "ssh"  # any other SSH failure

    def __str__(self) -> str:
        return str(self.value)

    @property
    def needs_user(self) -> bool:
        """Retrying cannot help: the user must act (trust a key, install it, unlock...)."""
        return self in _NEEDS_USER

    @property
    def text(self) -> ProblemText:
        text = PROBLEM_TEXT[self]
        return ProblemText(_(text.message), _(text.hint))


_NEEDS_USER = frozenset(
    {
        SshProblem.HOST_KEY_UNKNOWN,
        SshProblem.HOST_KEY_CHANGED,
        SshProblem.HOST_KEY_UNVERIFIED,
        SshProblem.AUTH_FAILED,
        SshProblem.NO_KEY,
        SshProblem.PASSPHRASE,
        SshProblem.KEYRING,
    }
)


@dataclass(frozen=True)
class ProblemText:
    """What a renter reads when the host is not named: what happened, then what to do.
    PROBLEM_TEXT holds the English; `SshProblem.text` gives it in the current language."""

    message: str
    hint: str


PROBLEM_TEXT: dict[SshProblem, ProblemText] = {
    SshProblem.HOST_KEY_UNKNOWN: ProblemText(
        N_("The instance's host key is not known yet: the connection was not made."),
        N_("Test the connection on the Hosts page, check that the fingerprint matches the one "
           "your provider shows, then trust it."),
    ),
    SshProblem.HOST_KEY_CHANGED: ProblemText(
        N_("The instance's host key has changed: the connection was blocked."),
        N_("On rented GPUs the usual cause is a new instance behind a recycled address. If "
           "you just created or restarted this instance, choose 'This is a new instance'; "
           "otherwise do not connect, someone may be intercepting it."),
    ),
    SshProblem.HOST_KEY_UNVERIFIED: ProblemText(
        N_("The instance's host key could not be verified: the connection was blocked."),
        N_("Test the connection on the Hosts page: it shows whether the key is new or has "
           "changed, and its fingerprint to compare with the one your provider shows."),
    ),
    SshProblem.AUTH_FAILED: ProblemText(
        N_("The instance refused the SSH key: the platform does not have this public key yet."),
        N_("Copy the public key on the Keys page and paste it into the platform's console "
           "(or the instance's ~/.ssh/authorized_keys), then try again."),
    ),
    SshProblem.NO_KEY: ProblemText(
        N_("There is no SSH key for this host's platform yet."),
        N_("Generate or import the platform's key on the Keys page."),
    ),
    SshProblem.PASSPHRASE: ProblemText(
        N_("The platform's SSH key is protected by a passphrase."),
        N_("Enter it, or load the key into ssh-agent on the Keys page."),
    ),
    SshProblem.KEYRING: ProblemText(
        N_("The SSH key could not be read from the system keyring."),
        N_("Unlock the keyring, then try again."),
    ),
    SshProblem.DNS: ProblemText(
        N_("The host name could not be found (DNS)."),
        N_("Check the host name for typos, or your network connection; a released instance's "
           "name stops resolving."),
    ),
    SshProblem.REFUSED: ProblemText(
        N_("The instance refused the connection."),
        N_("The instance may still be starting, stopped, or the port is wrong: check the "
           "port in the platform's console."),
    ),
    SshProblem.TIMEOUT: ProblemText(
        N_("The instance did not answer as an SSH server in time."),
        N_("The instance may be down, still booting or behind a firewall, or the port may "
           "belong to another service: check it in the platform's console."),
    ),
    SshProblem.HANDSHAKE_CLOSED: ProblemText(
        N_("The instance closed the connection during the SSH handshake."),
        N_("The instance may be restarting, or its SSH server is refusing new connections "
           "(too many at once, or a fail2ban-style block): try again in a minute."),
    ),
    SshProblem.SSH: ProblemText(
        N_("The SSH connection failed."),
        N_("Check that the instance is running, then try again."),
    ),
}


# OpenSSH's own words, most specific first: a changed key also prints "Host key verification
# failed.", and a key unknown under StrictHostKeyChecking says so before that line.
_OPENSSH: tuple[tuple[re.Pattern[str], SshProblem], ...] = (
    (re.compile(r"REMOTE HOST IDENTIFICATION HAS CHANGED|Host key for \S+ has changed"),
     SshProblem.HOST_KEY_CHANGED),
    (re.compile(r"No \S+ host key is known for|authenticity of host .* can't be established"),
     SshProblem.HOST_KEY_UNKNOWN),
    (re.compile(r"Host key verification failed"), SshProblem.HOST_KEY_UNVERIFIED),
    (re.compile(r"Permission denied \((?:publickey|password|keyboard-interactive)|"
                r"Too many authentication failures"), SshProblem.AUTH_FAILED),
    (re.compile(r"Could not resolve hostname|Name or service not known|"
                r"nodename nor servname provided|Temporary failure in name resolution"),
     SshProblem.DNS),
    (re.compile(r"Connection refused"), SshProblem.REFUSED),
    (re.compile(r"(?:Connection|Operation) timed out|timed out during banner exchange"),
     SshProblem.TIMEOUT),
    (re.compile(r"kex_exchange_identification|ssh_exchange_identification|"
                r"Connection (?:closed|reset) by \S+ port \d+"),
     SshProblem.HANDSHAKE_CLOSED),
)  # fmt: skip


def openssh_problem(output: str) -> SshProblem | None:
    """The kind of the failure OpenSSH's stderr (a line or a whole output) reports, or None."""
    for pattern, kind in _OPENSSH:
        if pattern.search(output):
            return kind
    return None
