"""How the collector reaches a host: commands over one SSH client, or this computer's processes.

Both give a line stream (the long-lived `nvidia-smi -lms`) and a one-shot run. Every remote command
is an argv joined with shlex, so no value reaches a shell unquoted; local commands are argv lists.
"""

from __future__ import annotations

import os
import select
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any, Protocol

from gpu_companion.core.common.i18n import _


class StreamClosed(Exception):
    """The stream ended; `lost` when the connection dropped rather than the command exiting."""

    def __init__(self, exit_code: int | None, lost: bool, tail: str) -> None:
        super().__init__(f"stream ended (exit {exit_code}, lost={lost})")
        self.exit_code = exit_code
        self.lost = lost
        self.tail = tail


# What a host may send before it is cut off: an nvidia-smi CSV row is well under 1 KiB, and a
# one-shot command's whole answer (help text, process list, counters) well under a MiB.
MAX_LINE_BYTES = 64 * 1024
MAX_RUN_BYTES = 4 * 1024 * 1024
MAX_RUN_LINES = 50_000


class HostOutputTooLarge(Exception):
    """A host sent more than the budget for one line or one command: not nvidia-smi's output.
    `slow_retry`: the collector waits its longest backoff before trying again (never a spin)."""

    slow_retry = True


def _too_long() -> str:
    return _(
        "The host sent a line longer than {kib} KiB, which is not nvidia-smi's output; the "
        "stream was stopped and will be retried later."
    ).format(kib=MAX_LINE_BYTES // 1024)


class LineStream:
    """Line splitting over a byte source with a read timeout; a partial line is kept, not lost.

    Linear in its input: each byte is searched for the newline once, and a line longer than
    MAX_LINE_BYTES raises HostOutputTooLarge instead of growing the buffer."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf already known to hold no newline
        self._tail: list[str] = []  # the last lines, to explain an exit

    def _recv(self, timeout: float) -> bytes:
        """Up to 64 KiB; b"" at end of stream; raises TimeoutError when nothing came."""
        raise NotImplementedError

    def _finish(self) -> tuple[int | None, bool]:
        """(exit code, connection lost) once the source has ended."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def readline(self, timeout: float) -> str:
        """The next line without its newline; TimeoutError if none came within `timeout`."""
        deadline = time.monotonic() + timeout
        end = self._buf.find(b"\n", self._scanned)
        while end == -1:
            self._scanned = len(self._buf)
            if self._scanned > MAX_LINE_BYTES:
                raise HostOutputTooLarge(_too_long())
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(_("no line from nvidia-smi in time"))
            data = self._recv(left)
            if not data:
                if self._buf:  # the last line had no newline
                    end = len(self._buf)
                    break
                code, lost = self._finish()
                raise StreamClosed(code, lost, "\n".join(self._tail))
            self._buf += data
            end = self._buf.find(b"\n", self._scanned)
        if end > MAX_LINE_BYTES:
            raise HostOutputTooLarge(_too_long())
        line = bytes(self._buf[:end])
        del self._buf[: end + 1]
        self._scanned = 0
        text = line.decode("utf-8", "replace").rstrip("\r")
        self._tail = [*self._tail[-9:], text]
        return text


class Transport(Protocol):
    is_local: bool

    def stream(self, argv: Sequence[str]) -> LineStream: ...

    def run(self, argv: Sequence[str], timeout: float) -> tuple[int, str]: ...

    def close(self) -> None: ...


# --- SSH ------------------------------------------------------------------------------------


class _SshLineStream(LineStream):
    def __init__(self, client: Any, command: str) -> None:
        super().__init__()
        transport = client.get_transport()
        if transport is None or not transport.is_active():
            raise ConnectionError(_("the SSH connection is closed"))
        self._transport = transport
        self._chan = transport.open_session(timeout=15)
        self._chan.set_combine_stderr(True)
        self._chan.exec_command(command)

    def _recv(self, timeout: float) -> bytes:
        self._chan.settimeout(timeout)
        try:
            return bytes(self._chan.recv(65536))
        except TimeoutError as exc:
            raise TimeoutError("no data") from exc
        except OSError:
            return b""

    def _finish(self) -> tuple[int | None, bool]:
        self._chan.status_event.wait(3)  # exit-status may follow EOF by a moment
        code = self._chan.exit_status if self._chan.exit_status_ready() else -1
        lost = code == -1 or not self._transport.is_active()
        return (None if code == -1 else int(code)), lost

    def close(self) -> None:
        self._chan.close()


class SshTransport:
    """Commands over one connected paramiko SSHClient; each is one exec channel, one process."""

    is_local = False

    def __init__(self, client: Any, keepalive_s: int = 5) -> None:
        self.client = client
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(keepalive_s)  # a silent drop is noticed within seconds

    def stream(self, argv: Sequence[str]) -> LineStream:
        return _SshLineStream(self.client, "exec " + shlex.join(argv))

    def run(self, argv: Sequence[str], timeout: float) -> tuple[int, str]:
        stream = _SshLineStream(self.client, shlex.join(argv))
        lines: list[str] = []
        size = 0
        deadline = time.monotonic() + timeout
        try:
            while True:
                line = stream.readline(max(0.01, deadline - time.monotonic()))
                size += len(line) + 1
                if size > MAX_RUN_BYTES or len(lines) >= MAX_RUN_LINES:
                    raise HostOutputTooLarge(
                        _(
                            "`{command}` on the host answered with more than {mib} MiB or {lines} "
                            "lines; it was stopped and will be retried later."
                        ).format(
                            command=argv[0] if argv else "",
                            mib=MAX_RUN_BYTES // (1024 * 1024),
                            lines=MAX_RUN_LINES,
                        )
                    )
                lines.append(line)
        except StreamClosed as end:
            if end.lost:
                raise ConnectionError(_("the SSH connection dropped")) from None
            return (end.exit_code if end.exit_code is not None else -1), "\n".join(lines)
        finally:
            stream.close()

    def close(self) -> None:
        self.client.close()


# --- this computer --------------------------------------------------------------------------


class _ProcessLineStream(LineStream):
    def __init__(self, argv: Sequence[str]) -> None:
        super().__init__()
        self._proc = subprocess.Popen(  # argv list, no shell
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        assert self._proc.stdout is not None
        self._fd = self._proc.stdout.fileno()

    def _recv(self, timeout: float) -> bytes:
        if sys.platform != "win32":
            ready, _w, _x = select.select([self._fd], [], [], timeout)
            if not ready:
                raise TimeoutError("no data")
        return os.read(self._fd, 65536)

    def _finish(self) -> tuple[int | None, bool]:
        return self._proc.wait(), False

    def close(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(3)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        assert self._proc.stdout is not None
        self._proc.stdout.close()


class LocalTransport:
    """nvidia-smi on this computer; a missing tool reads like the shell's "command not found"."""

    is_local = True

    def __init__(self, nvidia_smi: str | None = None) -> None:
        self.nvidia_smi = nvidia_smi or shutil.which("nvidia-smi")

    def _argv(self, argv: Sequence[str]) -> list[str]:
        if argv and argv[0] == "nvidia-smi":
            if self.nvidia_smi is None:
                raise FileNotFoundError("nvidia-smi: command not found")
            return [self.nvidia_smi, *argv[1:]]
        return list(argv)

    def stream(self, argv: Sequence[str]) -> LineStream:
        return _ProcessLineStream(self._argv(argv))

    def run(self, argv: Sequence[str], timeout: float) -> tuple[int, str]:
        try:
            done = subprocess.run(  # argv list, no shell
                self._argv(argv),
                capture_output=True,
                timeout=timeout,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except FileNotFoundError as exc:
            return 127, str(exc)
        return done.returncode, (done.stdout + done.stderr).decode("utf-8", "replace")

    def close(self) -> None:
        pass
