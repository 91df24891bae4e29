"""One running app per user and data dir: a second launch asks the first to come forward."""

from __future__ import annotations

import getpass
import hashlib

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket


def server_name(data_dir: str) -> str:
    digest = hashlib.sha256(f"{getpass.getuser()}:{data_dir}".encode()).hexdigest()[:16]
    return f"gpu-companion-{digest}"


class SingleInstance(QObject):
    """`claim()` is True for the first instance; later ones send "raise" and should exit."""

    raise_requested = Signal()

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.server: QLocalServer | None = None

    def claim(self) -> bool:
        sock = QLocalSocket()
        sock.connectToServer(self.name)
        if sock.waitForConnected(500):
            sock.write(b"raise\n")
            sock.flush()
            sock.waitForBytesWritten(500)
            sock.disconnectFromServer()
            return False
        QLocalServer.removeServer(self.name)  # a stale socket left by a crash
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not self.server.listen(self.name):
            return True  # cannot listen: still run, just without the forwarding
        self.server.newConnection.connect(self._on_connection)
        return True

    def _on_connection(self) -> None:
        assert self.server is not None
        while self.server.hasPendingConnections():
            conn = self.server.nextPendingConnection()
            conn.readyRead.connect(lambda c=conn: self._read(c))
            conn.disconnected.connect(conn.deleteLater)

    def _read(self, conn: QLocalSocket) -> None:
        if bytes(conn.readAll().data()).strip() == b"raise":
            self.raise_requested.emit()

    def release(self) -> None:
        if self.server:
            self.server.close()
            self.server = None
