"""One running app per user and data dir: a second launch asks the first to come forward.

The first launch takes a lock file (QtCore: the network module is not loaded before the first
paint) and listens on a local socket once its window has painted; a later launch finds the lock,
asks through that socket and exits. A lock whose process is gone is taken over (QLockFile checks
the pid, its program, the boot and the file lock the owner holds).
"""

from __future__ import annotations

import getpass
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCryptographicHash, QLockFile, QObject, Signal

if TYPE_CHECKING:
    from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger(__name__)  # log.log(WARNING, …): log lines, never translated

ANSWER_WITHIN_S = 10.0  # the first instance listens right after its first paint


def server_name(data_dir: str) -> str:
    # Qt's SHA-256 (same digest as hashlib's): hashlib would load OpenSSL before the first paint
    sha = QCryptographicHash.hash(
        f"{getpass.getuser()}:{data_dir}".encode(), QCryptographicHash.Algorithm.Sha256
    )
    digest = bytes(sha.toHex().data()).decode()[:16]
    return f"gpu-companion-{digest}"


class SingleInstance(QObject):
    """`claim()` is True for the first instance, which then calls `listen()`; later ones send
    "raise" and should exit."""

    raise_requested = Signal()

    def __init__(self, name: str, lock_file: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.lock = QLockFile(str(lock_file))
        self.lock.setStaleLockTime(0)  # held while the app runs: stale only when its owner is gone
        self.server: QLocalServer | None = None
        self.answered = False

    def claim(self) -> bool:
        """True for the first instance. False when another one runs: `answered` says whether it
        was asked to come forward (False: it holds the lock but never listened)."""
        if self.lock.tryLock(0):
            return True
        if self.lock.error() != QLockFile.LockError.LockFailedError:  # no lock file possible
            log.warning("single instance: cannot create %s", self.lock.fileName())
            return True  # still run, just without the protection
        self.answered = self._ask_first_forward()
        if self.answered:
            return False
        if self.lock.isLocked():  # the first one ended before it listened: this one runs
            return True
        # a lock file whose pid now names another process of the same program: nobody holds
        # its lock, so it is removed; one that is really held stays (its owner keeps running)
        if self.lock.removeStaleLockFile() and self.lock.tryLock(0):
            log.log(
                logging.WARNING, "took over %s: its process never answered", self.lock.fileName()
            )
            return True
        return False

    def _ask_first_forward(self) -> bool:
        from PySide6.QtCore import QDeadlineTimer, QThread  # a later launch only
        from PySide6.QtNetwork import QLocalSocket

        deadline = QDeadlineTimer(int(ANSWER_WITHIN_S * 1000))
        while not deadline.hasExpired():
            sock = QLocalSocket()
            sock.connectToServer(self.name)
            if sock.waitForConnected(500):
                sock.write(b"raise\n")
                sock.flush()
                sock.waitForBytesWritten(500)
                sock.disconnectFromServer()
                return True
            if self.lock.tryLock(0):  # it ended before it listened (its lock is ours now)
                return False
            QThread.msleep(100)  # the first one is still starting: it listens after its paint
        return False

    def listen(self) -> None:
        """Let later launches reach this one (the app calls it right after its first paint)."""
        from PySide6.QtNetwork import QLocalServer

        if self.server is not None:
            return
        QLocalServer.removeServer(self.name)  # a stale socket left by a crash
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not self.server.listen(self.name):
            log.warning("single instance: cannot listen on %s", self.name)
            return  # still run, just without the forwarding
        self.server.newConnection.connect(self._on_connection)

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
        self.lock.unlock()
