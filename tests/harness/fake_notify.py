"""Real servers for the notification channels' tests, all on 127.0.0.1.

- `FakeNotify`: one HTTP(S) server that answers like ntfy (`POST /<topic>`: 200 with the message
  as JSON; 401/403 with ntfy's error JSON for a protected topic without or with a wrong token)
  and like the webhooks under `/slack/...` (200 "ok"), `/discord/...` (204), `/feishu/...`
  (200 `{"code": 0}`), `/dingtalk/...` (200 `{"errcode": 0}`) and `/hook/...` (our JSON, 200).
  It records every request (method, path, query, headers, body); `fail_next` makes it answer
  a status (500, 403, ...) or a body for the next requests to a path.
- `FakeSmtp`: aiosmtpd with AUTH (LOGIN/PLAIN) over STARTTLS, SMTPS or plain; a wrong password
  gets 535. It records each message as delivered.
- `make_certs`: a CA and a server certificate for 127.0.0.1/localhost made with `cryptography`.
- `PrivateBus` and `FakeNotificationServer`: a private D-Bus session bus and a freedesktop
  notification server on it (jeepney), recording each `Notify` call.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import os
import signal
import ssl
import subprocess
import threading
import time
import uuid
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .sshd import ComponentMissing
from .util import free_port, which

# --- certificates ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Certs:
    ca_file: Path  # what a channel's --ca-file names
    cert_file: Path
    key_file: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_file, self.key_file)
        return context


def make_certs(directory: Path) -> Certs:
    """A private CA and a certificate it signed for 127.0.0.1 and localhost."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    directory.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "gpu-companion test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )  # fmt: skip
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    certs = Certs(directory / "ca.pem", directory / "server.pem", directory / "server.key")
    certs.ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    certs.cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    certs.key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return certs


# --- ntfy and webhooks -------------------------------------------------------------------------


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lower-cased
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")

    def json(self) -> Any:
        return json.loads(self.body)


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close() joins every handler thread
    block_on_close = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class FakeNotify:
    """`with FakeNotify() as server:` serves on 127.0.0.1:<free port> (https with `certs`)."""

    def __init__(self, certs: Certs | None = None) -> None:
        self.certs = certs
        self.requests: list[Recorded] = []
        self.tokens: dict[str, str] = {}  # topic -> the access token it needs
        self.hang: threading.Event | None = None  # while not set, every request waits for it
        self.delay_s = 0.0  # every answer comes this much later (a slow server)
        self._failures: list[tuple[str, int, Any]] = []  # (path prefix, status, body)
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeNotify:
        fake = self

        class Handler(_Handler):
            server_of = fake

        self._server = _Server(("127.0.0.1", 0), Handler)
        if self.certs is not None:
            self._server.socket = self.certs.server_context().wrap_socket(
                self._server.socket, server_side=True
            )
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="FakeNotify"
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self.hang is not None:
            self.hang.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None

    def __enter__(self) -> FakeNotify:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        assert self._server is not None
        scheme = "https" if self.certs else "http"
        return f"{scheme}://127.0.0.1:{self._server.server_address[1]}"

    def fail_next(self, status: int, body: Any = None, *, times: int = 1, path: str = "/") -> None:
        """The next `times` requests whose path starts with `path` get `status` and `body` (for
        a 4xx/5xx without a body: ntfy's error JSON)."""
        with self._lock:
            self._failures.extend([(path, status, body)] * times)

    def to(self, prefix: str) -> list[Recorded]:
        with self._lock:
            return [r for r in self.requests if r.path.startswith(prefix)]

    def _failure(self, path: str) -> tuple[int, Any] | None:
        with self._lock:
            for i, (prefix, status, body) in enumerate(self._failures):
                if path.startswith(prefix):
                    del self._failures[i]
                    return status, body
        return None

    def answer(self, rec: Recorded) -> tuple[int, Any]:
        hang = self.hang
        if hang is not None:
            hang.wait(30)
        if self.delay_s:
            time.sleep(self.delay_s)
        with self._lock:
            self.requests.append(rec)
        failure = self._failure(rec.path)
        if failure is not None:
            status, body = failure
            if body is None and status >= 400:
                body = {"code": status * 100 + 1, "http": status, "error": _NTFY_ERRORS.get(
                    status, "internal server error")}  # fmt: skip
            return status, body
        first = rec.path.strip("/").split("/", 1)[0]
        if first == "slack":
            return 200, "ok"
        if first == "discord":
            return 204, None
        if first == "feishu":
            return 200, {"code": 0, "msg": "success", "data": {}}
        if first == "dingtalk":
            return 200, {"errcode": 0, "errmsg": "ok"}
        if first == "hook":
            return 200, {"received": True}
        return self._ntfy(rec, first)

    def _ntfy(self, rec: Recorded, topic: str) -> tuple[int, Any]:
        needed = self.tokens.get(topic)
        auth = rec.headers.get("authorization", "")
        if needed is not None and not auth:
            return 401, {"code": 40101, "http": 401, "error": "unauthorized"}
        if needed is not None and auth != f"Bearer {needed}":
            return 403, {"code": 40301, "http": 403, "error": "forbidden"}
        return 200, {
            "id": uuid.uuid4().hex[:12],
            "time": 1736931600,
            "event": "message",
            "topic": topic,
            "message": rec.text,
            "title": rec.headers.get("title", ""),
        }


_NTFY_ERRORS = {401: "unauthorized", 403: "forbidden", 404: "page not found",
                429: "limit reached: too many requests", 500: "internal server error"}  # fmt: skip


class _Handler(BaseHTTPRequestHandler):
    server_of: FakeNotify
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        parts = urlsplit(self.path)
        rec = Recorded(
            self.command,
            parts.path,
            parse_qs(parts.query),
            {k.lower(): v for k, v in self.headers.items()},
            body,
        )
        status, answer = self.server_of.answer(rec)
        data = b""
        if isinstance(answer, dict | list):
            data = json.dumps(answer).encode()
        elif isinstance(answer, str):
            data = answer.encode()
        self.send_response(status)
        if data:
            kind = "application/json" if isinstance(answer, dict | list) else "text/plain"
            self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data:
            self.wfile.write(data)

    do_PUT = do_POST


# --- SMTP ------------------------------------------------------------------------------------


@dataclass
class FakeSmtp:
    """`with FakeSmtp(mode="starttls", certs=...) as smtp:`; mode starttls | tls | plain."""

    mode: str = "plain"
    certs: Certs | None = None
    user: str = "alerts@example.com"
    password: str = "right-password"
    messages: list[Message] = field(default_factory=list)
    envelopes: list[tuple[str, list[str]]] = field(default_factory=list)
    logins: list[str] = field(default_factory=list)
    port: int = 0
    _controller: Any = None

    def start(self) -> FakeSmtp:
        try:
            from aiosmtpd.controller import Controller
            from aiosmtpd.smtp import AuthResult, LoginPassword
        except ImportError:
            raise ComponentMissing("aiosmtpd not installed (pip install -e '.[dev]')") from None
        fake = self

        class Handler:
            async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
                fake.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
                fake.messages.append(message_from_bytes(envelope.original_content))
                return "250 Message accepted for delivery"

        def authenticator(server: Any, session: Any, envelope: Any, mechanism: str,
                          auth_data: Any) -> Any:  # fmt: skip
            ok = (
                isinstance(auth_data, LoginPassword)
                and auth_data.login.decode() == fake.user
                and auth_data.password.decode() == fake.password
            )
            if ok:
                fake.logins.append(auth_data.login.decode())
            return AuthResult(success=ok, handled=False)  # a refusal answers 535

        kwargs: dict[str, Any] = {
            "authenticator": authenticator,
            "auth_required": self.mode == "starttls",  # aiosmtpd warns of AUTH without TLS
            # STARTTLS first, then AUTH; SMTPS is TLS from the start (aiosmtpd only counts the
            # former as TLS); plain offers AUTH in clear text, as a local relay would
            "auth_require_tls": self.mode == "starttls",
        }
        if self.mode == "starttls":
            assert self.certs is not None
            kwargs.update(tls_context=self.certs.server_context(), require_starttls=True)
        elif self.mode == "tls":
            assert self.certs is not None
            kwargs.update(ssl_context=self.certs.server_context())
        self.port = free_port()
        self._controller = Controller(
            Handler(), hostname="127.0.0.1", port=self.port, ready_timeout=10, **kwargs
        )
        self._controller.start()
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def __enter__(self) -> FakeSmtp:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --- D-Bus desktop notifications ---------------------------------------------------------------


class PrivateBus:
    """A `dbus-daemon --session` of its own; `address` for DBUS_SESSION_BUS_ADDRESS."""

    def __init__(self) -> None:
        self.address = ""
        self._pid: int | None = None

    def start(self) -> PrivateBus:
        dbus = which("dbus-daemon")
        if not dbus:
            raise ComponentMissing("dbus-daemon not installed (Debian: dbus-daemon)")
        out = subprocess.run(
            [dbus, "--session", "--fork", "--nopidfile", "--print-address=1", "--print-pid=1"],
            capture_output=True, text=True, check=True, timeout=20,
        ).stdout.split()  # fmt: skip
        self.address, self._pid = out[0], int(out[1])
        return self

    def stop(self) -> None:
        if self._pid:
            try:
                os.kill(self._pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            self._pid = None


class FakeNotificationServer:
    """Owns org.freedesktop.Notifications on `address` and answers `Notify` with an id."""

    NAME = "org.freedesktop.Notifications"

    def __init__(self, address: str) -> None:
        self.address = address
        self.calls: list[tuple[Any, ...]] = []
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: Any = None

    def start(self) -> FakeNotificationServer:
        from jeepney.bus_messages import message_bus
        from jeepney.io.blocking import Proxy, open_dbus_connection

        self._conn = open_dbus_connection(bus=self.address)
        reply = Proxy(message_bus, self._conn).RequestName(self.NAME, 4)  # do not queue
        assert reply[0] == 1, reply  # primary owner
        self._thread = threading.Thread(target=self._serve, name="FakeNotifications")
        self._thread.start()
        return self

    def _serve(self) -> None:
        from jeepney import HeaderFields, MessageType, new_method_return

        while not self._stop.is_set():
            try:
                msg = self._conn.receive(timeout=0.1)
            except TimeoutError:
                continue
            except OSError:
                return
            if msg.header.message_type != MessageType.method_call:
                continue
            member = msg.header.fields.get(HeaderFields.member)
            if member == "Notify":
                self.calls.append(tuple(msg.body))
                self._conn.send(new_method_return(msg, "u", (len(self.calls),)))
            elif member == "GetServerInformation":
                self._conn.send(new_method_return(msg, "ssss", ("fake", "test", "0", "1.2")))
            elif member == "GetCapabilities":
                self._conn.send(new_method_return(msg, "as", (["body"],)))

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
