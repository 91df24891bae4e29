"""Which operating systems the app is tested on end to end, and what it says elsewhere.

The app's own ssh-agent, its private runtime folder (Unix sockets checked with SO_PEERCRED)
and its process handling (process groups, parent-death signals) are POSIX and are tested on
Linux only. Until another system is tested end to end, the app says so plainly there.
"""

from __future__ import annotations

import sys

from gpu_companion.core.common.i18n import N_, _

TESTED = N_("Linux (Debian 12, x86_64, with a Secret Service keyring)")  # shown through _()


def support(platform: str | None = None) -> tuple[str, str]:
    """("tested" | "untested" | "unsupported", the sentence to show)."""
    platform = sys.platform if platform is None else platform
    if platform.startswith("linux"):
        return "tested", _("Tested end to end on {tested}.").format(tested=_(TESTED))
    if platform == "darwin":
        return "untested", _(
            "GPU Companion has not been tested end to end on macOS yet (it is on "
            "{tested}). Keys, transfers and the release gate may misbehave; keep your own "
            "backups and check releases in the provider's console."
        ).format(tested=_(TESTED))
    return "unsupported", _(
        "GPU Companion does not run on {platform} yet: its ssh-agent, runtime folder and "
        "process handling need a POSIX system. Use it on Linux (or inside WSL2 on Windows)."
    ).format(platform=platform)
