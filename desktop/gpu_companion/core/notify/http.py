"""One HTTP POST with the standard library: verified HTTPS, a timeout, no redirects, and every
network failure said in plain words (`DeliveryError`).

A request is prepared as data first (`HttpRequest`), so tests and the CLI can look at exactly what
would be sent. Redirects are not followed: a webhook that answers 301/302 is misconfigured, and
following it would turn the POST into a GET or carry a token to another host.
"""

from __future__ import annotations

import errno
import socket
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from gpu_companion import __version__
from gpu_companion.core.common.i18n import _
from gpu_companion.core.notify.model import DeliveryError

USER_AGENT = f"gpu-companion/{__version__}"
MAX_ANSWER_BYTES = 64 * 1024


@dataclass(frozen=True)
class HttpRequest:
    url: str
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    method: str = "POST"

    def without_secrets(self) -> HttpRequest:
        """For logs and `--dry-run`: the Authorization header masked."""
        masked = {
            k: ("***" if k.lower() == "authorization" else v) for k, v in self.headers.items()
        }
        return HttpRequest(self.url, self.body, masked, self.method)


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    reason: str
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def text(self, limit: int = 300) -> str:
        return self.body[:limit].decode("utf-8", "replace").strip()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # the 3xx answer comes back as an HTTPError: said, not followed


def tls_context(ca_file: str = "") -> ssl.SSLContext:
    """The system's trust store, plus `ca_file` for a self-hosted server's own CA."""
    context = ssl.create_default_context()
    if ca_file:
        try:
            context.load_verify_locations(cafile=ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise DeliveryError(
                _("The CA file {path} cannot be read as PEM certificates ({error}).").format(
                    path=ca_file, error=exc
                )
            ) from exc
    return context


def post(request: HttpRequest, *, timeout_s: float, ca_file: str = "") -> HttpAnswer:
    """Send `request`; any HTTP status comes back as an answer, a network failure as a
    `DeliveryError` saying what happened."""
    handlers: list[urllib.request.BaseHandler] = [_NoRedirect()]
    if request.url.startswith("https:"):
        handlers.append(urllib.request.HTTPSHandler(context=tls_context(ca_file)))
    opener = urllib.request.build_opener(*handlers)
    headers = {"User-Agent": USER_AGENT, **request.headers}
    req = urllib.request.Request(request.url, request.body, headers, method=request.method)
    try:
        with opener.open(req, timeout=timeout_s) as response:
            return HttpAnswer(response.status, response.reason, response.read(MAX_ANSWER_BYTES))
    except urllib.error.HTTPError as exc:
        try:
            body = exc.read(MAX_ANSWER_BYTES) if exc.fp is not None else b""
        except OSError:
            body = b""
        finally:
            exc.close()
        return HttpAnswer(exc.code, str(exc.reason), body)
    except urllib.error.URLError as exc:
        reason = exc.reason if isinstance(exc.reason, BaseException) else None
        raise network_error(request.url, reason or exc, timeout_s) from exc
    except (OSError, ValueError) as exc:  # a timeout while reading, a reset, a bad header value
        raise network_error(request.url, exc, timeout_s) from exc


def where(url: str) -> str:
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme, 0)
    return f"{parts.hostname}:{parts.port or default}"


def network_error(url: str, exc: BaseException, timeout_s: float) -> DeliveryError:
    """A failure below HTTP, in plain words, for any address (HTTP or SMTP alike)."""
    return DeliveryError(explain_network(where(url), exc, timeout_s))


def explain_network(place: str, exc: BaseException, timeout_s: float) -> str:
    host = place.rsplit(":", 1)[0]
    if isinstance(exc, ssl.SSLCertVerificationError):
        return _(
            "The certificate of {host} could not be verified ({why}). For a self-hosted server "
            "with its own certificate authority, give its CA file (--ca-file); otherwise someone "
            "may be intercepting the connection."
        ).format(host=host, why=exc.verify_message)
    if isinstance(exc, ssl.SSLError):
        return _("The TLS handshake with {place} failed ({why}): is it a TLS port?").format(
            place=place, why=exc.reason or exc
        )
    if isinstance(exc, socket.gaierror):
        return _(
            "The name {host} could not be resolved: check the address and your network."
        ).format(host=host)
    if isinstance(exc, ConnectionRefusedError):
        return _(
            "Connection refused by {place}: nothing listens there (is the server running?)."
        ).format(place=place)
    if isinstance(exc, TimeoutError | socket.timeout):
        return _(
            "No answer from {place} within {seconds} s: the server or the network is down."
        ).format(place=place, seconds=f"{timeout_s:g}")
    if isinstance(exc, ConnectionResetError):
        return _(
            "{place} closed the connection: the server may be overloaded or not speak HTTP."
        ).format(place=place)
    if isinstance(exc, OSError) and exc.errno == errno.EHOSTUNREACH:
        return _("No route to host {place}: check the address and your network.").format(
            place=place
        )
    if isinstance(exc, OSError) and exc.errno == errno.ENETUNREACH:
        return _("The network is unreachable from here ({place}): are you online?").format(
            place=place
        )
    if isinstance(exc, UnicodeEncodeError | ValueError):
        return _("The request to {place} could not be sent ({error}).").format(
            place=place, error=exc
        )
    return _("Could not reach {place}: {error}.").format(place=place, error=exc)
