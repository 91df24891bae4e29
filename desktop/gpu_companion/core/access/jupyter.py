"""The Jupyter URL with its token, read from the host (`jupyter server list --json`) and pointed at
the tunnel's local port. The host's answer is untrusted data: only a token and a path are kept."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING
from urllib.parse import quote

if TYPE_CHECKING:
    import paramiko

# `jupyter server list` (jupyter_server) first, then the classic notebook's spelling
LIST_COMMAND = (
    "jupyter server list --json 2>/dev/null || jupyter notebook list --json 2>/dev/null; true"
)
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_\-.]{0,256}$")
_BASE_RE = re.compile(r"^/[A-Za-z0-9_\-./~%]*$")


def parse_server_list(text: str) -> list[dict[str, object]]:
    """One JSON object per line (newer versions may print a JSON list): the servers found."""
    servers: list[dict[str, object]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith(("{", "[")):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        items = value if isinstance(value, list) else [value]
        servers += [item for item in items if isinstance(item, dict)]
    return servers


def local_url(servers: list[dict[str, object]], remote_port: int, local_port: int) -> str | None:
    """`http://127.0.0.1:LOCAL/BASE?token=T` for the server listening on `remote_port`."""
    for server in servers:
        if server.get("port") != remote_port:
            continue
        token = server.get("token", "")
        base = server.get("base_url", "/") or "/"
        if not isinstance(token, str) or not _TOKEN_RE.match(token):
            continue
        if not isinstance(base, str) or not _BASE_RE.match(base) or ".." in base:
            continue
        if not base.endswith("/"):
            base += "/"
        url = f"http://127.0.0.1:{local_port}{base}"
        return f"{url}?token={quote(token)}" if token else url
    return None


def jupyter_url(client: paramiko.SSHClient, remote_port: int, local_port: int) -> str | None:
    """Ask the host which Jupyter servers run; None when none listens on `remote_port`."""
    _in, out, _err = client.exec_command(LIST_COMMAND, timeout=20)
    text = out.read(1_000_000).decode("utf-8", errors="replace")
    return local_url(parse_server_list(text), remote_port, local_port)
