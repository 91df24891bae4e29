"""RunPod through RunPod's own Python SDK (`runpod`, the app's `providers` extra).

Every call goes through the SDK's `run_graphql_query` with the account's key passed in, never
through the module-global `runpod.api_key` the SDK's `stop_pod`/`terminate_pod` use: several
accounts and threads never share state. The queries are the SDK's own (`QUERY_POD`,
`generate_pod_query`, `generate_pod_stop_mutation`, `generate_pod_terminate_mutation`); the API
base is the SDK's own setting too (RUNPOD_API_BASE_URL, read by the SDK at each call).

Time bound: the SDK posts with a fixed 30 s timeout and takes no other. Each call runs in a
daemon worker thread ("runpod-call") that the caller waits on for `timeout` seconds; past that
the caller gets a ProviderError and the worker's late answer, if any, is dropped (the worker
itself ends within the SDK's 30 s). Nothing global is patched.

The id is pasted by the SDK into the GraphQL text, so `check_id` admits only lowercase letters
and digits. The API key never appears in an exception, a `said`, a log or a repr; what RunPod
said is kept without the pod's `env` or `dockerArgs` (they hold the user's own secrets)."""

from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from types import ModuleType
from typing import Any

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.providers.model import (
    Action,
    Instance,
    ProviderError,
    Reading,
    State,
)

# RunPod pod ids as RunPod shows them ("iaw3m6iyadpmgq", "wu5ekmn69oh1xr": 14 lowercase letters
# and digits); a little room either way, nothing that could leave a GraphQL string.
_POD_ID = re.compile(r"[a-z0-9]{6,32}")

# Documented rate for a stopped Pod's volume disk ("stopped Pods are charged $0.20 per GB per
# month for volume storage"; the container disk is wiped on stop and not billed), over 730 h.
STOPPED_VOLUME_USD_PER_GB_MONTH = Decimal("0.20")
HOURS_PER_MONTH = Decimal(730)

_SAID_MAX = 400
# What of a pod goes into `said`: never env or dockerArgs (the user's secrets live there).
_SAID_FIELDS = (
    "id",
    "name",
    "desiredStatus",
    "podType",
    "costPerHr",
    "gpuCount",
    "volumeInGb",
    "uptimeSeconds",
    "lastStatusChange",
)
# Marked here, translated where raised.
_NOT_INSTALLED = N_("The RunPod client is not installed.")
_INSTALL_HINT = N_("Install the app's providers extra: pip install 'gpu-companion[providers]'.")
_KEY_HINT = N_(
    "Check the key in RunPod's console (Settings, API Keys): it may have been revoked, or it "
    "may lack read/write access to Pods. Then enter it again for this account."
)
_NET_HINT = N_("Check this computer's connection; the app reads the pod again before it decides.")
_UNREADABLE = N_("RunPod answered the {what} with something the app cannot read.")


@dataclass(frozen=True)
class _Sdk:
    graphql: ModuleType
    queries: ModuleType
    mutations: ModuleType
    error: ModuleType
    requests: ModuleType


def _sdk() -> _Sdk:
    """RunPod's SDK, imported on first use only (it is heavy and optional). Importing it calls
    `logging.basicConfig(level=INFO)` (runpod/serverless/utils/rp_upload.py): the root logger is
    put back as it was, so the app's own logging is not sent to stderr."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        import requests
        import runpod.api.graphql as graphql
        import runpod.api.mutations.pods as mutations
        import runpod.api.queries.pods as queries
        import runpod.error as error
    except ImportError:
        raise ProviderError(_(_NOT_INSTALLED), hint=_(_INSTALL_HINT)) from None
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)
    return _Sdk(graphql, queries, mutations, error, requests)


class _Box:
    """What the worker thread hands back."""

    def __init__(self) -> None:
        self.answer: Any = None
        self.error: BaseException | None = None


class RunPodProvider:
    """One RunPod account, through RunPod's SDK."""

    name = "RunPod"

    def __init__(self, api_key: str, timeout: float = 20.0) -> None:
        self._key = api_key.strip()
        self._timeout = timeout

    def __repr__(self) -> str:
        return f"RunPodProvider(timeout={self._timeout:g})"

    # -- the Provider interface ----------------------------------------------------------------

    def check_id(self, instance_id: str) -> str:
        pod_id = instance_id.strip()
        if not _POD_ID.fullmatch(pod_id):
            raise ValidationError(
                "instance_id",
                _(
                    "This is not a RunPod pod id: a pod id is 6 to 32 lowercase letters and "
                    "digits, as RunPod's console shows it (for example iaw3m6iyadpmgq)."
                ),
            )
        return pod_id

    def instances(self) -> list[Instance]:
        sdk = _sdk()
        what = _("list of pods")
        answer = self._call(sdk, what, sdk.queries.QUERY_POD)
        data = answer.get("data")
        myself = data.get("myself") if isinstance(data, dict) else None
        pods = myself.get("pods") if isinstance(myself, dict) else None
        if not isinstance(pods, list):
            raise ProviderError(_(_UNREADABLE).format(what=what), said=self._said(answer))
        out: list[Instance] = []
        for pod in pods:
            if not isinstance(pod, dict) or not isinstance(pod.get("id"), str):
                raise ProviderError(
                    _("RunPod listed a pod the app cannot read."), said=self._said(pod)
                )
            out.append(self._instance(pod))
        return out

    def read(self, instance_id: str) -> Reading:
        pod_id = self.check_id(instance_id)
        sdk = _sdk()
        what = _("read of pod {id}").format(id=pod_id)
        answer = self._call(sdk, what, sdk.queries.generate_pod_query(pod_id))
        data = answer.get("data")
        if not isinstance(data, dict) or "pod" not in data:
            raise ProviderError(_(_UNREADABLE).format(what=what), said=self._said(answer))
        pod = data["pod"]
        if pod is None:  # RunPod has no such pod (any more) on this account
            return Reading("gone", said=self._said({"pod": None}))
        if not isinstance(pod, dict):
            raise ProviderError(_(_UNREADABLE).format(what=what), said=self._said(answer))
        instance = self._instance(pod)
        return Reading(instance.state, said=self._said(_said_pod(pod)), instance=instance)

    def request(self, instance_id: str, action: Action) -> str:
        pod_id = self.check_id(instance_id)
        sdk = _sdk()
        if action == "destroy":
            what, field = _("terminate of pod {id}").format(id=pod_id), "podTerminate"
            query = sdk.mutations.generate_pod_terminate_mutation(pod_id)
        elif action == "stop":
            what, field = _("stop of pod {id}").format(id=pod_id), "podStop"
            query = sdk.mutations.generate_pod_stop_mutation(pod_id)
        else:  # pragma: no cover - Action is a closed Literal
            raise ProviderError(f"RunPod has no '{action}' for a pod.")
        answer = self._call(sdk, what, query)
        data = answer.get("data")
        if not isinstance(data, dict) or field not in data:
            raise ProviderError(_(_UNREADABLE).format(what=what), said=self._said(answer))
        return self._said({field: data[field]})

    # -- the SDK call, bounded in time ---------------------------------------------------------

    def _call(self, sdk: _Sdk, what: str, query: str) -> dict[str, Any]:
        if not self._key:
            # Never let the SDK fall back to its global key (~/.runpod/config.toml).
            raise ProviderError(
                _("No RunPod API key is set for this account."),
                hint=_("Enter the account's API key from RunPod's console (Settings, API Keys)."),
            )
        box = _Box()
        key = self._key
        run_graphql_query = sdk.graphql.run_graphql_query

        def work() -> None:
            try:
                box.answer = run_graphql_query(query, api_key=key)
            except BaseException as exc:  # handed to the caller's thread
                box.error = exc

        worker = threading.Thread(target=work, name="runpod-call", daemon=True)
        worker.start()
        worker.join(self._timeout)
        if worker.is_alive():
            raise ProviderError(
                _("RunPod did not answer the {what} within {seconds} s.").format(
                    what=what, seconds=f"{self._timeout:g}"
                ),
                hint=_(_NET_HINT),
            )
        if box.error is not None:
            error, box.error = box.error, None
            # Raised outside any except block: the SDK's exception (whose request carries the
            # Authorization header) is neither chained nor kept.
            raise self._refusal(sdk, what, error)
        if not isinstance(box.answer, dict):
            raise ProviderError(_(_UNREADABLE).format(what=what), said=self._said(box.answer))
        return box.answer

    def _refusal(self, sdk: _Sdk, what: str, error: BaseException) -> ProviderError:
        req = sdk.requests.exceptions
        if isinstance(error, sdk.error.AuthenticationError):
            return ProviderError(
                _("RunPod refused the API key (HTTP 401)."), hint=_(_KEY_HINT), said="HTTP 401"
            )
        if isinstance(error, sdk.error.QueryError):
            message = self._clean(str(getattr(error, "message", None) or error))
            return ProviderError(
                _("RunPod refused the {what}: {said}").format(what=what, said=message),
                said=message,
            )
        if isinstance(error, req.Timeout):
            return ProviderError(
                _("RunPod did not answer the {what} in time.").format(what=what),
                hint=_(_NET_HINT),
            )
        if isinstance(error, req.ConnectionError):
            return ProviderError(
                _("Could not reach RunPod's API for the {what}.").format(what=what),
                hint=_(_NET_HINT),
            )
        if isinstance(error, ValueError):  # requests' JSONDecodeError: a proxy's page, a 502
            return ProviderError(
                _("RunPod answered the {what} with something that is not JSON.").format(what=what),
                hint=_("RunPod's API may be having trouble; try again in a minute."),
            )
        if isinstance(error, req.RequestException):
            return ProviderError(
                _("The request to RunPod for the {what} failed ({error}).").format(
                    what=what, error=type(error).__name__
                ),
                hint=_(_NET_HINT),
            )
        if isinstance(error, LookupError | TypeError | AttributeError):
            return ProviderError(_(_UNREADABLE).format(what=what))
        return ProviderError(
            _("The RunPod client failed on the {what} ({kind}: {error}).").format(
                what=what, kind=type(error).__name__, error=self._clean(str(error))
            )
        )

    # -- reading RunPod's answers --------------------------------------------------------------

    def _instance(self, pod: dict[str, Any]) -> Instance:
        raw_state = pod.get("desiredStatus")
        provider_state = raw_state if isinstance(raw_state, str) else ""
        runtime = pod.get("runtime")
        host, port = _ssh(runtime)
        machine = pod.get("machine")
        gpu_model = machine.get("gpuDisplayName") if isinstance(machine, dict) else None
        gpu_count = pod.get("gpuCount")
        name = pod.get("name")
        return Instance(
            id=str(pod["id"]),
            state=_state(provider_state, runtime),
            provider_state=provider_state,
            label=name if isinstance(name, str) else "",
            ssh_host=host,
            ssh_port=port,
            ssh_user="root",
            gpu_model=gpu_model if isinstance(gpu_model, str) else "",
            gpu_count=gpu_count if isinstance(gpu_count, int) and gpu_count >= 0 else 0,
            hourly=_money(pod.get("costPerHr")),
            storage_hourly=_stopped_storage_hourly(pod.get("volumeInGb")),
            currency="USD",
            billing_mode="spot" if pod.get("podType") == "INTERRUPTABLE" else "on-demand",
        )

    def _clean(self, text: str) -> str:
        if self._key:
            text = text.replace(self._key, "***")
        text = " ".join(text.split())
        return text if len(text) <= _SAID_MAX else text[: _SAID_MAX - 1] + "…"

    def _said(self, value: Any) -> str:
        try:
            text = json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)
        except (TypeError, ValueError):
            text = repr(value)
        return self._clean(text)


def _state(desired: str, runtime: Any) -> State:
    """RunPod's desiredStatus (CREATED, RUNNING, RESTARTING, EXITED, PAUSED, DEAD, TERMINATED)
    in the app's words. A RUNNING pod is `running` only once it has a runtime (its container
    is up); until then RunPod is still starting it."""
    if desired == "RUNNING":
        return "running" if isinstance(runtime, dict) else "starting"
    if desired in ("CREATED", "RESTARTING"):
        return "starting"
    if desired == "EXITED":
        return "stopped"
    if desired == "TERMINATED":
        return "gone"
    return "other"


def _ssh(runtime: Any) -> tuple[str, int]:
    """The public address of the pod's port 22 (RunPod's "SSH over exposed TCP")."""
    if not isinstance(runtime, dict) or not isinstance(runtime.get("ports"), list):
        return "", 0
    for port in runtime["ports"]:
        if not isinstance(port, dict):
            continue
        if port.get("privatePort") != 22 or port.get("isIpPublic") is not True:
            continue
        ip, public = port.get("ip"), port.get("publicPort")
        if isinstance(ip, str) and ip and isinstance(public, int) and 0 < public < 65536:
            return ip, public
    return "", 0


def _money(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return None
    return amount if amount.is_finite() and amount >= 0 else None


def _stopped_storage_hourly(volume_gb: Any) -> Decimal | None:
    if isinstance(volume_gb, bool) or not isinstance(volume_gb, int | float) or volume_gb < 0:
        return None
    per_hour = Decimal(str(volume_gb)) * STOPPED_VOLUME_USD_PER_GB_MONTH / HOURS_PER_MONTH
    return per_hour.quantize(Decimal("0.000001"))


def _said_pod(pod: dict[str, Any]) -> dict[str, Any]:
    said = {k: pod[k] for k in _SAID_FIELDS if k in pod}
    said["runtime"] = "up" if isinstance(pod.get("runtime"), dict) else None
    return said
