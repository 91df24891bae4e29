"""The vast.ai adapter: vast.ai's own Python client code (`vastai.api`) on the account's API key.

The app never drives the `vastai` CLI: its `destroy instance` asks for a confirmation on stdin and,
without one, prints "Aborted." and exits 0 (see the provider tests). The client module is imported
on first use only (about 0.6 s, and the first window must not pay it).

State words (docs.vast.ai, "show instance" / "show instances", and the SDK's SKILL.md):
`actual_status` is the container's state: null (being provisioned), created, loading, running,
stopped, frozen (paused with memory, GPU billed), exited (the container process ended), rebooting,
unknown (no heartbeat), offline (host disconnected). `intended_status` is what the user asked:
running, stopped or frozen. `cur_state` is the machine contract: running, stopped, or unloaded
(released on destroy). The mapping is in `state_of`.
"""

from __future__ import annotations

import importlib
import io
import json
import math
import os
import re
import sys
import threading
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.providers.model import Action, Instance, ProviderError, Reading, State

DEFAULT_API_BASE = "https://console.vast.ai"
KEYS_URL = "https://cloud.vast.ai/manage-keys/"
SAID_MAX = 500
_UNREADABLE = N_("vast.ai answered something the app cannot read while {what}.")
_API_CHANGED = N_("vast.ai's API may have changed: check for an update of GPU Companion.")

_ID_RE = re.compile(r"[1-9][0-9]{0,11}")
_STARTING = frozenset({"", "created", "loading", "scheduling", "rebooting"})
_STOPPED = frozenset({"stopped", "exited"})
# The fields of a row that say its state, first in what a reading keeps of the answer.
_STATUS_FIELDS = (
    "id", "actual_status", "intended_status", "cur_state", "next_state", "status_msg", "label",
)  # fmt: skip
_import_lock = threading.Lock()


@dataclass(frozen=True)
class _Client:
    """The loaded client code: vastai's VastClient, its instance calls, and requests (whose
    exceptions the client raises)."""

    client: Any  # vastai.api.client.VastClient, built per call
    api: Any  # vastai.api.instances
    requests: Any


def _load_vastai() -> tuple[Any, Any, Any]:
    try:
        with _import_lock:
            # vastai.api.client reads sys.stdout.encoding at import: with no console (pythonw, a
            # frozen GUI build) sys.stdout is None and the import would fail.
            saved = sys.stdout
            if saved is None:
                sys.stdout = io.StringIO()
            try:
                requests = importlib.import_module("requests")
                client = importlib.import_module("vastai.api.client")
                api = importlib.import_module("vastai.api.instances")
            finally:
                if saved is None:
                    sys.stdout = saved
    except ImportError as exc:
        raise ProviderError(
            _("The vast.ai client is not installed."),
            hint=_("Install the app's providers extra: pip install 'gpu-companion[providers]'."),
        ) from exc
    return client, api, requests


def state_of(row: dict[str, Any]) -> State:
    """What the app makes of a vast.ai instance row's state words.

    - actual_status "running" -> running (billed for the GPU, even while a stop is under way);
    - cur_state "unloaded" -> other (the contract was released, as on a destroy: the row is not
      "gone" until vast.ai stops answering it);
    - actual_status "stopped" or "exited" -> stopped (the container is not running: vast.ai bills
      the disk only; an exited container stays until it is started or destroyed);
    - actual_status null, "created", "loading", "scheduling", "rebooting" -> starting, or stopped
      when intended_status is "stopped" (a stop was asked and nothing runs; vast.ai also makes
      an instance "stopped" when it cannot schedule it);
    - anything else (frozen, unknown, offline, a word vast.ai adds later) -> other.
    """
    actual = _word(row.get("actual_status"))
    if actual == "running":
        return "running"
    if _word(row.get("cur_state")) == "unloaded":
        return "other"
    if actual in _STOPPED:
        return "stopped"
    if actual in _STARTING:
        return "stopped" if _word(row.get("intended_status")) == "stopped" else "starting"
    return "other"


def ssh_address(row: dict[str, Any]) -> tuple[str, int]:
    """The ssh address as `vastai ssh-url` picks it: the direct port (public_ipaddr and the host
    port mapped to 22/tcp) when there is one, else vast.ai's proxy (ssh_host, ssh_port, one
    higher for a jupyter image). ("", 0) when the row does not say."""
    try:
        ports = row.get("ports")
        direct = ports.get("22/tcp") if isinstance(ports, dict) else None
        if direct:
            host, port = str(row.get("public_ipaddr") or ""), int(direct[0]["HostPort"])
        else:
            runtype = row.get("image_runtype")
            jupyter = isinstance(runtype, str) and "jupyter" in runtype
            host, port = str(row.get("ssh_host") or ""), int(row["ssh_port"]) + int(jupyter)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return "", 0
    host = host.strip()
    if not host or not 0 < port < 65536:
        return "", 0
    return host, port


def instance_of(row: dict[str, Any]) -> Instance:
    """One vast.ai instance row as the app's Instance."""
    host, port = ssh_address(row)
    storage = _money(row.get("storage_total_cost"))  # $/h for the instance's disk
    if storage is None:
        breakdown = row.get("instance")
        if isinstance(breakdown, dict):
            storage = _money(breakdown.get("diskHour"))
    actual = row.get("actual_status")
    return Instance(
        id=str(int(row["id"])),
        state=state_of(row),
        provider_state=actual.strip() if isinstance(actual, str) else "",
        label=_text(row.get("label")),
        ssh_host=host,
        ssh_port=port,
        gpu_model=_text(row.get("gpu_name")),
        gpu_count=_count(row.get("num_gpus")),
        hourly=_money(row.get("dph_total")),  # the whole instance while running, disk included
        storage_hourly=storage,
        currency="USD",
        billing_mode="spot" if row.get("is_bid") is True else "on-demand",
    )


class VastProvider:
    """One vast.ai account. Every call builds vastai's own `VastClient` on the key and the API
    base (the explicit one, else $VAST_URL as set now, else console.vast.ai)."""

    name = "vast.ai"

    def __init__(self, api_key: str, api_base: str = "", timeout: float = 20.0) -> None:
        self._api_key = api_key
        self._api_base = api_base.strip().rstrip("/")
        self._timeout = timeout

    def __repr__(self) -> str:
        return f"VastProvider(api_base={self.api_base!r}, timeout={self._timeout!r})"

    @property
    def api_base(self) -> str:
        base = self._api_base or os.environ.get("VAST_URL", "").strip() or DEFAULT_API_BASE
        return base.rstrip("/")

    # --- the Provider interface ------------------------------------------------------------

    def check_id(self, instance_id: str) -> str:
        text = instance_id.strip() if isinstance(instance_id, str) else ""
        if not _ID_RE.fullmatch(text):
            shown = instance_id if isinstance(instance_id, str) else repr(instance_id)
            shown = shown.strip()
            shown = shown if len(shown) <= 40 else shown[:40] + "…"
            raise ValidationError(
                "instance_id",
                _(
                    "{id} is not a vast.ai instance id: that is a number such as 12345678 "
                    "(the ID column of vast.ai's Instances page)."
                ).format(id=repr(shown)),
            )
        return text

    def instances(self) -> list[Instance]:
        vast = self._connect()
        what = _("listing your instances")
        try:
            rows = vast.api.show_instances(self._client(vast))
            if not isinstance(rows, list):
                raise TypeError("not a list")
            return [instance_of(row) for row in rows]
        except Exception as exc:
            raise self._error(vast, exc, what) from exc

    def read(self, instance_id: str) -> Reading:
        iid = self.check_id(instance_id)
        vast = self._connect()
        what = _("reading instance {id}").format(id=iid)
        try:
            row = vast.api.show_instance(self._client(vast), int(iid))
        except vast.requests.exceptions.HTTPError as exc:
            response = exc.response
            if response is not None and response.status_code == 404 and not _key_404(response):
                said = f"HTTP 404 {_body(response)}".strip()
                return Reading("gone", said=self._said(said))
            raise self._error(vast, exc, what) from exc
        except Exception as exc:
            raise self._error(vast, exc, what) from exc
        if not row:
            # vast.ai answers HTTP 200 {"instances": null} for an id the account does not have;
            # vastai's show_instance gives None for it.
            return Reading("gone", said='{"instances": null}')
        try:
            instance = instance_of(row)
        except Exception as exc:
            raise self._error(vast, exc, what) from exc
        said = json.dumps({k: row[k] for k in _STATUS_FIELDS if k in row}, default=str)
        return Reading(instance.state, said=self._said(said), instance=instance)

    def request(self, instance_id: str, action: Action) -> str:
        iid = self.check_id(instance_id)
        if action not in ("destroy", "stop"):
            raise ValueError(f"unknown action {action!r}")
        vast = self._connect()
        call = vast.api.destroy_instance if action == "destroy" else vast.api.stop_instance
        if action == "destroy":
            what = _("destroying instance {id}").format(id=iid)
        else:
            what = _("stopping instance {id}").format(id=iid)
        try:
            answer = call(self._client(vast), int(iid))
        except vast.requests.exceptions.HTTPError as exc:
            response = exc.response
            if response is not None and response.status_code == 404 and not _key_404(response):
                raise ProviderError(
                    self._scrub(
                        _("vast.ai has no instance {id} (HTTP 404){said}.").format(
                            id=iid, said=_quoted(_msg_of(response))
                        )
                    ),
                    hint=_("It may be destroyed already, or belong to another vast.ai account."),
                    said=self._said(f"HTTP 404 {_body(response)}".strip()),
                ) from exc
            raise self._error(vast, exc, what, acted=True) from exc
        except Exception as exc:
            raise self._error(vast, exc, what, acted=True) from exc
        said = self._said(json.dumps(answer, default=str))
        if not isinstance(answer, dict) or answer.get("success") is not True:
            words = _provider_words(answer)
            if isinstance(answer, dict) and answer.get("success") is False:
                message = _("vast.ai refused {what}{said}.")
            else:
                message = _("vast.ai's answer to {what} does not say it succeeded{said}.")
            raise ProviderError(
                self._scrub(message.format(what=what, said=_quoted(words))),
                hint=_("The instance is read back to see what it is now."),
                said=said,
            )
        return said

    # --- the client and its errors ---------------------------------------------------------

    def _connect(self) -> _Client:
        client, api, requests = _load_vastai()
        return _Client(client.VastClient, api, requests)

    def _client(self, vast: _Client) -> Any:
        # explain/curl stay off: with them vastai prints the request (key included) to stdout.
        return vast.client(
            api_key=self._api_key,
            server_url=self.api_base,
            retry=2,
            explain=False,
            curl=False,
            timeout=self._timeout,
        )

    def _error(
        self, vast: _Client, exc: Exception, what: str, acted: bool = False
    ) -> ProviderError:
        """`exc`, raised while `what`, as a ProviderError for the user (the key scrubbed out)."""
        rex = vast.requests.exceptions
        unknown = (
            " " + _("Whether vast.ai acted is unknown: the instance is read back to see.")
            if acted else ""
        )  # fmt: skip
        said = ""
        if isinstance(exc, rex.HTTPError) and exc.response is not None:
            response = exc.response
            code = int(response.status_code)
            said = f"HTTP {code} {_body(response)}".strip()
            words = _quoted(_msg_of(response))
            if code == 401 or (code == 404 and _key_404(response)):
                message = _("vast.ai refused the API key (HTTP {code}){said}.").format(
                    code=code, said=words
                )
                hint = _(
                    "Create a new API key at {url} and paste it into the provider account."
                ).format(url=KEYS_URL)
            elif code == 403:
                message = _("vast.ai refused the API key (HTTP {code}){said}.").format(
                    code=code, said=words
                )
                hint = _(
                    "The key may lack the permission for this (a vast.ai key can be limited): "
                    "create one with instance read and write at {url} and paste it into the "
                    "provider account."
                ).format(url=KEYS_URL)
            elif code == 429:
                message = _(
                    "vast.ai is limiting this account's requests (HTTP 429) while {what}."
                ).format(what=what)
                hint = _("Wait a minute and try again.") + unknown
            elif code >= 500:
                message = _("vast.ai had a server error (HTTP {code}) while {what}{said}.").format(
                    code=code, what=what, said=words
                )
                hint = _("The fault is on vast.ai's side; try again in a few minutes.") + unknown
            else:
                message = _("vast.ai answered HTTP {code} while {what}{said}.").format(
                    code=code, what=what, said=words
                )
                hint = unknown.strip()
        elif isinstance(exc, rex.Timeout):
            message = _("vast.ai did not answer within {seconds} s while {what}.").format(
                seconds=f"{self._timeout:g}", what=what
            )
            hint = _("vast.ai may be slow or down, or the network is.") + unknown
        elif isinstance(exc, rex.ConnectionError):
            message = _("Could not reach vast.ai at {url} while {what}.").format(
                url=self.api_base, what=what
            )
            hint = _("Check the internet connection (and the API base, if one is set).") + unknown
        elif isinstance(exc, rex.JSONDecodeError):
            doc = getattr(exc, "doc", "")
            said = doc if isinstance(doc, str) else ""
            message = _(_UNREADABLE).format(what=what)
            hint = _(_API_CHANGED) + unknown
        elif isinstance(exc, rex.RequestException):  # InvalidURL, TooManyRedirects, ...
            message = _("The request to vast.ai at {url} failed while {what}: {error}.").format(
                url=self.api_base, what=what, error=type(exc).__name__
            )
            hint = _("Check the API base, if one is set.") + unknown
        elif isinstance(exc, (ValueError, LookupError, TypeError, AttributeError)):
            # vastai's own reading of the answer failed (a field missing or of another type)
            message = _(_UNREADABLE).format(what=what)
            hint = _(_API_CHANGED) + unknown
        else:
            message = _("The vast.ai client failed while {what}: {error}.").format(
                what=what, error=type(exc).__name__
            )
            hint = unknown.strip()
        return ProviderError(self._scrub(message), hint=self._scrub(hint), said=self._said(said))

    def _scrub(self, text: str) -> str:
        key = self._api_key
        if key and len(key) >= 4:
            text = text.replace(key, "[API key]")
        return text

    def _said(self, text: str) -> str:
        text = self._scrub(" ".join(text.split()))
        return text if len(text) <= SAID_MAX else text[: SAID_MAX - 1] + "…"


# --- reading a row ---------------------------------------------------------------------------


def _word(value: object) -> str:
    return value.strip().lower() if isinstance(value, str) else ""


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _count(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0
    return max(int(value), 0)


def _money(value: object) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        amount = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return amount if amount.is_finite() and amount >= 0 else None


def _body(response: Any) -> str:
    try:
        text = response.text
    except Exception:  # an undecodable body
        return ""
    return text if isinstance(text, str) else ""


def _msg_of(response: Any) -> str:
    try:
        answer = response.json()
    except Exception:
        return ""
    return _provider_words(answer)


def _key_404(response: Any) -> bool:
    """vast.ai answers an expired 2FA session key with HTTP 404 "Session expired. Please log in
    again." (vastai.cli.main): that 404 is about the key, never about an instance."""
    words = _msg_of(response).lower()
    return "session expired" in words or "log in" in words


def _provider_words(answer: object) -> str:
    """vast.ai's message in an answer: its "msg", else its "error"."""
    if not isinstance(answer, dict):
        return ""
    for key in ("msg", "error", "message"):
        value = answer.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())[:200]
    return ""


def _quoted(words: str) -> str:
    """': "words"', without the final stop when the words have one (the message adds it)."""
    return f': "{words.rstrip(".")}"' if words else ""
