"""A hostile SSH host: a real paramiko server on 127.0.0.1 with SFTP and no rsync, whose listings
add names that try to leave the client's download folder (`../../x`, `/abs/x` by default).

Every path it is asked for that is not a real file under `files` is served as a small file, as
a host that wants its bytes written somewhere would do. Paths in `endless` are listed with a
small size but their reads never end (`served_up_to` records how far a client read). Exec
requests (`rsync --version`, `sha256sum`) answer "command not found" with exit 127, so clients
fall back to SFTP.
"""

from __future__ import annotations

import io
import os
import posixpath
import socket
import stat
import threading
import time
from pathlib import Path
from typing import Any

import paramiko

from .util import free_port

HOSTILE_NAMES = ("../../x", "/abs/x")
PAYLOAD = b"written by a hostile host\n"


def _ed25519() -> Any:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    pem = (
        Ed25519PrivateKey.generate()
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.OpenSSH,
            serialization.NoEncryption(),
        )
        .decode()
    )
    return paramiko.Ed25519Key.from_private_key(io.StringIO(pem))


class HostileSftpHost:
    """start()/stop(); `port`, `user`, `known_hosts_line()`, `authorize(public_line)` as the harness
    sshd has them, so the transfer helpers can point at either."""

    def __init__(
        self, files: Path, names: tuple[str, ...] = HOSTILE_NAMES, claim_size: int | None = None
    ) -> None:
        self.files = files
        self.names = names
        self.claim_size = claim_size  # a size to list for every real file (a lying host)
        self.user = "renter"
        self.port = 0
        self.requested: list[str] = []  # every path a client opened or listed
        self.endless: dict[str, int] = {}  # "/dir/name" -> the size listed; reads never end
        self.served_up_to: dict[str, int] = {}  # endless path -> furthest byte a client read
        self._authorized: set[str] = set()
        self._host_key: Any = None
        self._sock: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._transports: list[Any] = []
        self._stop = threading.Event()

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> HostileSftpHost:
        self.files.mkdir(parents=True, exist_ok=True)
        self._host_key = _ed25519()
        self.port = free_port()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        sock.listen(20)
        sock.settimeout(0.2)
        self._sock = sock
        t = threading.Thread(target=self._accept_loop, name="hostile-sftp", daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def stop(self) -> None:
        self._stop.set()
        for transport in self._transports:
            transport.close()
        for t in self._threads:
            t.join(5)
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def authorize(self, public_line: str) -> None:
        self._authorized.add(public_line.split()[1])

    def known_hosts_line(self) -> str:
        key = self._host_key
        return f"[127.0.0.1]:{self.port} {key.get_name()} {key.get_base64()}\n"

    # --- serving -----------------------------------------------------------------------------

    def _accept_loop(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                conn, _addr = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            transport = paramiko.Transport(conn)
            transport.add_server_key(self._host_key)
            transport.set_subsystem_handler("sftp", paramiko.SFTPServer, _HostileSftp, host=self)
            self._transports.append(transport)
            try:
                transport.start_server(server=_Server(self))
            except (paramiko.SSHException, EOFError, OSError):
                transport.close()


class _Server(paramiko.ServerInterface):
    """Public keys only, sessions, and every exec answered "not found" (exit 127)."""

    def __init__(self, host: HostileSftpHost) -> None:
        self.host = host

    def get_allowed_auths(self, username: str) -> str:
        return "publickey"

    def check_auth_publickey(self, username: str, key: Any) -> int:
        if key.get_base64() in self.host._authorized:
            return int(paramiko.AUTH_SUCCESSFUL)
        return int(paramiko.AUTH_FAILED)

    def check_channel_request(self, kind: str, chanid: int) -> int:
        if kind == "session":
            return int(paramiko.OPEN_SUCCEEDED)
        return int(paramiko.OPEN_FAILED_ADMINISTRATIVELY_PROHIBITED)

    def check_channel_exec_request(self, channel: Any, command: bytes) -> bool:
        def answer() -> None:
            time.sleep(0.05)  # after the client has seen the request succeed
            word = command.split()[0].decode("utf-8", "replace") if command.split() else ""
            try:
                channel.sendall_stderr(f"sh: 1: {word}: not found\n".encode())
                channel.send_exit_status(127)
                channel.close()
            except OSError:
                pass  # the client went away first

        threading.Thread(target=answer, daemon=True).start()
        return True

    def check_channel_env_request(self, channel: Any, name: bytes, value: bytes) -> bool:
        return True


class _Handle(paramiko.SFTPHandle):
    attr: Any = None

    def stat(self) -> Any:
        return self.attr


class _Endless:
    """A file whose every read returns as many bytes as asked, wherever it is read."""

    def __init__(self, host: HostileSftpHost, path: str) -> None:
        self.host, self.path, self.pos = host, path, 0

    def tell(self) -> int:
        return self.pos

    def seek(self, pos: int) -> None:
        self.pos = pos

    def read(self, n: int) -> bytes:
        self.pos += n
        furthest = max(self.host.served_up_to.get(self.path, 0), self.pos)
        self.host.served_up_to[self.path] = furthest
        return b"\xee" * n

    def close(self) -> None:
        pass


class _HostileSftp(paramiko.SFTPServerInterface):
    """The files under `files`, with the hostile names added to every listing."""

    def __init__(self, server: Any, *args: Any, host: HostileSftpHost, **kwargs: Any) -> None:
        super().__init__(server, *args, **kwargs)
        self.host = host

    def _real(self, path: str) -> Path:
        rel = posixpath.normpath("/" + path).lstrip("/")
        return self.host.files / rel

    def _fake_attr(self, name: str) -> Any:
        attr = paramiko.SFTPAttributes()
        attr.filename = name
        attr.st_size = len(PAYLOAD)
        attr.st_mode = stat.S_IFREG | 0o6777  # setuid, setgid, world-writable
        attr.st_mtime = attr.st_atime = int(time.time())
        attr.st_uid = attr.st_gid = 0
        return attr

    def list_folder(self, path: str) -> Any:
        self.host.requested.append(path)
        real = self._real(path)
        if not real.is_dir():
            return paramiko.SFTP_NO_SUCH_FILE
        out = []
        for name in sorted(os.listdir(real)):
            attr = paramiko.SFTPAttributes.from_stat(os.lstat(real / name))
            if self.host.claim_size is not None and stat.S_ISREG(attr.st_mode or 0):
                attr.st_size = self.host.claim_size
            attr.filename = os.fsencode(name)  # the exact bytes, UTF-8 or not
            out.append(attr)
        out += [self._fake_attr(n) for n in self.host.names]
        here = self.canonicalize(path)
        for endless in sorted(self.host.endless):
            if posixpath.dirname(endless) == here:
                out.append(self.stat(endless))
        return out

    def stat(self, path: str) -> Any:
        listed = self.host.endless.get(self.canonicalize(path))
        if listed is not None:
            attr = self._fake_attr(posixpath.basename(path))
            attr.st_size, attr.st_mode = listed, stat.S_IFREG | 0o644
            return attr
        real = self._real(path)
        if real.exists():
            return paramiko.SFTPAttributes.from_stat(os.stat(real), real.name)
        return self._fake_attr(posixpath.basename(path))

    lstat = stat

    def open(self, path: str, flags: int, attr: Any) -> Any:
        self.host.requested.append(path)
        if flags & (os.O_WRONLY | os.O_RDWR):
            return paramiko.SFTP_PERMISSION_DENIED
        real = self._real(path)
        handle = _Handle(flags)
        handle.attr = self.stat(path)
        if self.canonicalize(path) in self.host.endless:
            handle.readfile = _Endless(self.host, self.canonicalize(path))
        else:
            handle.readfile = real.open("rb") if real.is_file() else io.BytesIO(PAYLOAD)
        return handle

    def canonicalize(self, path: str) -> str:
        return posixpath.normpath("/" + path.lstrip("/"))
