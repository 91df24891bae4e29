"""A local server that answers like RunPod's GraphQL API (POST /graphql), for the real `runpod`
SDK pointed at it through RUNPOD_API_BASE_URL (`url`).

It reads the query text the SDK sends and answers the four operations the app uses:
`myself { pods {...} }`, `pod(input: {podId: "X"})`, `podStop(...)` and `podTerminate(...)`,
with RunPod-shaped JSON: `{"data": ...}`, or `{"errors": [{"message": ...}]}` for a refusal.
A wrong Bearer key gets HTTP 401, as RunPod answers. An unknown pod id reads as
`{"data": {"pod": null}}`; a stop or terminate of one is a GraphQL error.

Knobs: `refuse_next(action, message)`, `status_next(code, body)`, `linger(id, reads=N)`,
`hang()` / `unhang()` (with `hung`, set once a request is held), and `requests` (what was asked,
never the key).
"""

from __future__ import annotations

import copy
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_KEY = "rpa_FAKEKEY0123456789ABCDEFGHIJKLMNOPQRSTUV"

_POD_ID_ARG = r'\(\s*input\s*:\s*\{\s*podId\s*:\s*"([^"\\]*)"\s*\}\s*\)'
_TERMINATE = re.compile(r"\bpodTerminate\s*" + _POD_ID_ARG)
_STOP = re.compile(r"\bpodStop\s*" + _POD_ID_ARG)
_POD = re.compile(r"\bpod\s*" + _POD_ID_ARG)
_LIST = re.compile(r"\bmyself\s*\{\s*pods\s*\{")

# The longest a held request waits for unhang() (a forgotten hang must not keep a thread).
_HANG_LIMIT_S = 60.0


@dataclass
class Request:
    """One request the server answered: the operation, the pod id, whether the key was right,
    and the query text (the SDK puts no key in it)."""

    action: str  # "list" | "read" | "stop" | "destroy" | "unknown"
    pod_id: str = ""
    authorized: bool = True
    query: str = field(default="", repr=False)


def default_pod(pod_id: str, **fields: Any) -> dict[str, Any]:
    """A pod as RunPod lists it, for the SDK's QUERY_POD fields; `fields` override."""
    pod: dict[str, Any] = {
        "id": pod_id,
        "containerDiskInGb": 20,
        "costPerHr": 0.69,
        "desiredStatus": "RUNNING",
        "dockerArgs": "",
        "dockerId": None,
        "env": ["JUPYTER_PASSWORD=not-for-the-record", "PUBLIC_KEY=ssh-ed25519 AAAA test"],
        "gpuCount": 1,
        "imageName": "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
        "lastStatusChange": "Rented by User: Tue Jun 04 2024 10:00:00 GMT+0000",
        "machineId": "m0ach1ne0id",
        "memoryInGb": 62,
        "name": f"pod {pod_id}",
        "podType": "RESERVED",
        "port": None,
        "ports": "8888/http,22/tcp",
        "uptimeSeconds": 120,
        "vcpuCount": 8,
        "volumeInGb": 50,
        "volumeMountPath": "/workspace",
        "runtime": {
            "ports": [
                {
                    "ip": "100.65.12.7",
                    "isIpPublic": False,
                    "privatePort": 8888,
                    "publicPort": 60123,
                    "type": "http",
                },
                {
                    "ip": "100.65.12.7",
                    "isIpPublic": False,
                    "privatePort": 22,
                    "publicPort": 22,
                    "type": "tcp",
                },
                {
                    "ip": "203.0.113.10",
                    "isIpPublic": True,
                    "privatePort": 22,
                    "publicPort": 40122,
                    "type": "tcp",
                },
            ]
        },
        "machine": {"gpuDisplayName": "RTX 4090"},
    }
    if fields.get("desiredStatus", "RUNNING") != "RUNNING" and "runtime" not in fields:
        pod["runtime"] = None  # only a running container has a runtime
    pod.update(fields)
    return pod


class FakeRunPod:
    """RunPod's GraphQL API on 127.0.0.1 (port chosen by the kernel), for one account's key."""

    def __init__(self, api_key: str = DEFAULT_KEY) -> None:
        self.api_key = api_key
        self.pods: dict[str, dict[str, Any]] = {}
        self.requests: list[Request] = []
        self.hung = threading.Event()  # set once a request is being held by hang()
        self._lock = threading.Lock()
        self._refusals: dict[str, list[str]] = {}
        self._statuses: list[tuple[int, str]] = []
        self._lingers: dict[str, int] = {}
        self._dying: dict[str, int] = {}  # terminated pods that still read RUNNING: reads left
        self._hanging = False
        self._release = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> FakeRunPod:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                fake._handle(self)

            def do_GET(self) -> None:  # noqa: N802
                fake._send(self, 404, {"errors": [{"message": "Not found"}]})

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # nothing to stderr (the Authorization header is never logged anyway)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = False  # server_close() joins the handlers
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-runpod"
        )
        self._thread.daemon = True
        self._thread.start()
        return self

    def stop(self) -> None:
        self.unhang()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def __enter__(self) -> FakeRunPod:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The API base (RUNPOD_API_BASE_URL): the SDK appends /graphql."""
        assert self._server is not None, "FakeRunPod is not started"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    # -- state and knobs -----------------------------------------------------------------------

    def add_pod(self, pod_id: str, **fields: Any) -> dict[str, Any]:
        with self._lock:
            self.pods[pod_id] = default_pod(pod_id, **fields)
            return self.pods[pod_id]

    def refuse_next(self, action: str, message: str) -> None:
        """The next `action` ("list", "read", "stop", "destroy", or "any") gets a GraphQL error
        with `message` (HTTP 200, as RunPod answers a refused operation)."""
        with self._lock:
            self._refusals.setdefault(action, []).append(message)

    def status_next(self, code: int, body: str | dict[str, Any] = "") -> None:
        """The next request, whatever it is, gets HTTP `code` with `body` (a dict is sent as
        JSON, a string as is)."""
        text = json.dumps(body) if isinstance(body, dict) else body
        with self._lock:
            self._statuses.append((code, text))

    def linger(self, pod_id: str, reads: int) -> None:
        """A terminate of `pod_id` is accepted, but the pod still reads RUNNING for `reads` more
        reads (in a listing or by id) before it is gone."""
        with self._lock:
            self._lingers[pod_id] = reads

    def hang(self) -> None:
        """Hold every request from now on, unanswered, until unhang() (or stop())."""
        with self._lock:
            self._release.clear()
            self.hung.clear()
            self._hanging = True

    def unhang(self) -> None:
        with self._lock:
            self._hanging = False
            self._release.set()

    def actions(self) -> list[str]:
        with self._lock:
            return [r.action for r in self.requests]

    # -- the API -------------------------------------------------------------------------------

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        authorized = h.headers.get("Authorization", "") == f"Bearer {self.api_key}"
        try:
            query = str(json.loads(raw or b"{}").get("query", ""))
        except (ValueError, AttributeError):
            query = ""
        action, pod_id = _classify(query)
        with self._lock:
            self.requests.append(Request(action, pod_id, authorized, query))
            hanging = self._hanging
        if hanging:
            self.hung.set()
            self._release.wait(_HANG_LIMIT_S)
        with self._lock:
            if self._statuses:
                code, text = self._statuses.pop(0)
                self._send_text(h, code, text)
                return
        if not authorized:
            self._send(h, 401, {"errors": [{"message": "Unauthorized"}]})
            return
        if action == "unknown":
            self._send(
                h, 400, {"errors": [{"message": "Syntax Error: the fake does not know this query"}]}
            )
            return
        with self._lock:
            message = self._pop_refusal(action)
            answer = (
                {"errors": [{"message": message, "path": [action]}], "data": None}
                if message is not None
                else self._answer(action, pod_id)
            )
        self._send(h, 200, answer)

    def _pop_refusal(self, action: str) -> str | None:
        for key in (action, "any"):
            queue = self._refusals.get(key)
            if queue:
                return queue.pop(0)
        return None

    def _answer(self, action: str, pod_id: str) -> dict[str, Any]:
        if action == "list":
            pods = [self._read_pod(pid) for pid in list(self.pods)]
            return {"data": {"myself": {"pods": [p for p in pods if p is not None]}}}
        if action == "read":
            return {"data": {"pod": self._read_pod(pod_id)}}
        if pod_id not in self.pods or pod_id in self._dying:
            field_name = "podStop" if action == "stop" else "podTerminate"
            return {
                "errors": [{"message": "Pod not found.", "path": [field_name]}],
                "data": {field_name: None},
            }
        if action == "stop":
            pod = self.pods[pod_id]
            pod["desiredStatus"] = "EXITED"
            pod["runtime"] = None
            return {"data": {"podStop": {"id": pod_id, "desiredStatus": "EXITED"}}}
        # destroy
        reads = self._lingers.pop(pod_id, 0)
        if reads > 0:
            self._dying[pod_id] = reads
        else:
            del self.pods[pod_id]
        return {"data": {"podTerminate": None}}

    def _read_pod(self, pod_id: str) -> dict[str, Any] | None:
        pod = self.pods.get(pod_id)
        if pod is None:
            return None
        if pod_id in self._dying:
            left = self._dying[pod_id]
            if left <= 0:
                del self._dying[pod_id]
                del self.pods[pod_id]
                return None
            self._dying[pod_id] = left - 1
        return copy.deepcopy(pod)

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, code: int, body: dict[str, Any]) -> None:
        FakeRunPod._send_text(h, code, json.dumps(body))

    @staticmethod
    def _send_text(h: BaseHTTPRequestHandler, code: int, text: str) -> None:
        data = text.encode()
        try:
            h.send_response(code)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        except OSError:
            pass  # the client gave up (a timeout test): nothing to answer


def _classify(query: str) -> tuple[str, str]:
    for action, pattern in (("destroy", _TERMINATE), ("stop", _STOP), ("read", _POD)):
        m = pattern.search(query)
        if m:
            return action, m.group(1)
    if _LIST.search(query):
        return "list", ""
    return "unknown", ""
