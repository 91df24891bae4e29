"""A local server that answers like vast.ai's REST API, for the real `vastai` client code.

It serves what `vastai.api.instances` calls for the app: the paged list (`GET /api/v1/instances/`),
one instance (`GET /api/v0/instances/{id}/`), destroy (`DELETE` on it) and stop/start (`PUT` on it
with `{"state": "stopped" | "running"}`). Every request must carry `Authorization: Bearer KEY`;
anything else is answered 401 as vast.ai does.

What vast.ai answers for an id the account does not have: HTTP 200 `{"instances": null}` on a read
(vastai's `show_instance` turns it into None); `missing_answer = "404"` answers HTTP 404 instead.
A destroy or stop of a missing instance is HTTP 404 with vast.ai's `{"success": false, ...}`.

Knobs for tests: `refuse_next`, `status_next`, `linger`, `hang` / `hang_method` / `hanging` (a
hung request is recorded at once; once released it is answered and acted on as usual, while one
freed by stop() changes nothing). `requests` lists (method, path) of every request (the query
apart, in `queries`; the key is never kept).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

INSTANCE_PATH = "/api/v0/instances/"
LIST_PATH = "/api/v1/instances/"
AUTH_FAILED = {"success": False, "error": "auth_error", "msg": "Invalid user key"}

Body = dict[str, Any] | list[Any] | str | None


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close() joins every handler thread: none outlives stop()
    block_on_close = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up (a timeout) is not the harness's error


class FakeVast:
    """`with FakeVast(api_key) as vast:` serves on 127.0.0.1:<free port> until the block ends."""

    def __init__(self, api_key: str = "vast-test-key-0123456789abcdef") -> None:
        self.api_key = api_key
        self.instances: dict[int, dict[str, Any]] = {}
        self.requests: list[tuple[str, str]] = []
        self.queries: list[dict[str, str]] = []  # the query of each request, in order
        self.bodies: list[Any] = []  # the JSON body of each PUT/DELETE/POST, in order
        self.unknown_routes: list[tuple[str, str]] = []
        self.missing_answer: Literal["null", "404"] = "null"
        # When set to an Event that is not set, every request waits for it (a stop() frees them).
        self.hang: threading.Event | None = None
        self._hang_methods: dict[str, threading.Event] = {}
        self._refusals: dict[str, list[Body]] = {}
        self._statuses: dict[str, list[tuple[int, Body]]] = {}
        self._linger: dict[int, int] = {}  # id -> reads the next destroy/stop leaves unchanged
        self._pending: dict[int, tuple[int, str]] = {}  # id -> (reads left, "destroy" | "stop")
        self._lock = threading.RLock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._next_id = 10_000_001

    # --- life ----------------------------------------------------------------------------------

    def start(self) -> FakeVast:
        fake = self

        class Handler(_Handler):
            vast = fake

        self._stopping.clear()
        self._server = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="FakeVast"
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # frees every hanging handler
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=10)

    def __enter__(self) -> FakeVast:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeVast is not started")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # --- state ---------------------------------------------------------------------------------

    def add_instance(self, id: int | None = None, **fields: Any) -> dict[str, Any]:
        """An instance row with the fields of vast.ai's rows that the client or the app reads;
        `fields` override them. `extra_env` is as vast.ai sends it: a list of [name, value]."""
        with self._lock:
            iid = int(id) if id is not None else self._next_id
            self._next_id = max(self._next_id, iid) + 1
            row = default_row(iid)
            row.update(fields)
            self.instances[iid] = row
            return row

    def methods(self, method: str) -> list[str]:
        """The paths of the requests made with `method`."""
        with self._lock:
            return [p for m, p in self.requests if m == method]

    # --- knobs ---------------------------------------------------------------------------------

    def refuse_next(self, action: str, body: Body = None) -> None:
        """The next `action` ("destroy", "stop" or "start") is answered HTTP 200 with `body`
        (vast.ai's refusal shape by default) and changes nothing."""
        if body is None:
            body = {"success": False, "error": "refused", "msg": f"Unable to {action} instance."}
        with self._lock:
            self._refusals.setdefault(action, []).append(body)

    def status_next(self, method: str, code: int, body: Body = None, times: int = 1) -> None:
        """The next `times` requests with `method` are answered `code` with `body` (JSON, or text
        when a str) and change nothing. Note vastai retries 429/502/503/504 (retry=2 twice)."""
        if body is None:
            body = {"success": False, "error": "server_error", "msg": f"HTTP {code}"}
        with self._lock:
            self._statuses.setdefault(method.upper(), []).extend([(code, body)] * times)

    def linger(self, id: int, reads: int) -> None:
        """The next destroy/stop of `id` is accepted, but the instance reads as before for the next
        `reads` reads of it (GET /api/v0/instances/{id}/); the read after sees the change."""
        with self._lock:
            self._linger[int(id)] = reads

    def hang_method(self, method: str) -> threading.Event:
        """Requests with `method` wait (before auth or any change) until the returned Event is set
        or the server stops."""
        with self._lock:
            event = self._hang_methods.setdefault(method.upper(), threading.Event())
            return event

    def release(self) -> None:
        """Frees every hanging request."""
        with self._lock:
            for event in self._hang_methods.values():
                event.set()
            self._hang_methods.clear()
            if self.hang is not None:
                self.hang.set()

    @contextmanager
    def hanging(self, method: str) -> Iterator[threading.Event]:
        event = self.hang_method(method)
        try:
            yield event
        finally:
            self.release()

    # --- answers (called by the handler) -------------------------------------------------------

    def _wait_if_hung(self, method: str) -> bool:
        """Waits while `method` hangs; False when stop() freed it (nothing is then done)."""
        with self._lock:
            events = [e for e in (self.hang, self._hang_methods.get(method)) if e is not None]
        for event in events:
            while not event.wait(0.05):
                if self._stopping.is_set():
                    return False
        return True

    def _answer(
        self, method: str, path: str, query: dict[str, str], auth: str, body: Any
    ) -> tuple[int, Body]:
        with self._lock:
            self.requests.append((method, path))
            self.queries.append(dict(query))
            if method in ("PUT", "DELETE", "POST"):
                self.bodies.append(body)
        if not self._wait_if_hung(method):
            return 503, "<html>503 Service Temporarily Unavailable</html>"
        with self._lock:
            queued = self._statuses.get(method)
            if queued:
                return queued.pop(0)
            if auth != f"Bearer {self.api_key}":
                return 401, AUTH_FAILED
            if method == "GET" and path == LIST_PATH:
                return self._list(query)
            iid = _instance_id(path)
            if iid is None:
                self.unknown_routes.append((method, path))
                return 404, {"success": False, "error": "not_found", "msg": "Not found (FakeVast)"}
            if method == "GET":
                return self._show(iid)
            if method == "DELETE":
                return self._act(iid, "destroy")
            if method == "PUT":
                state = body.get("state") if isinstance(body, dict) else None
                if state == "stopped":
                    return self._act(iid, "stop")
                if state == "running":
                    return self._act(iid, "start")
                return 400, {"success": False, "error": "invalid_args", "msg": "Unknown update."}
            self.unknown_routes.append((method, path))
            return 405, {"success": False, "error": "method_not_allowed", "msg": method}

    def _list(self, query: dict[str, str]) -> tuple[int, Body]:
        try:
            filters = json.loads(query.get("select_filters", "{}"))
            order = json.loads(query.get("order_by", '[{"col": "id", "dir": "asc"}]'))
            limit = int(json.loads(query.get("limit", "25")))
            after = int(query["after_token"].removeprefix("fv-")) if "after_token" in query else 0
        except (ValueError, KeyError, TypeError):
            return 400, {"success": False, "error": "invalid_args", "msg": "Bad query."}
        if filters:
            return 400, {"success": False, "error": "invalid_args", "msg": "Filters: not faked."}
        rows = [self._current(i) for i in self.instances]
        for spec in reversed(order):
            rows.sort(key=lambda r: (r.get(spec["col"]) is None, r.get(spec["col"])),
                      reverse=spec.get("dir") == "desc")  # fmt: skip
        page = rows[after : after + limit]
        more = after + limit < len(rows)
        labels: dict[str, int] = {}
        for row in rows:
            labels[str(row.get("label"))] = labels.get(str(row.get("label")), 0) + 1
        return 200, {
            "instances": page,
            "next_token": f"fv-{after + limit}" if more else None,
            "total_instances": len(rows),
            "label_counts": labels,
        }

    def _current(self, iid: int) -> dict[str, Any]:
        return json.loads(json.dumps(self.instances[iid]))  # a copy, as JSON would carry it

    def _show(self, iid: int) -> tuple[int, Body]:
        pending = self._pending.get(iid)
        if pending is not None:
            left, action = pending
            if left > 0:
                self._pending[iid] = (left - 1, action)
            else:
                del self._pending[iid]
                self._apply(iid, action)
        if iid not in self.instances:
            if self.missing_answer == "404":
                return 404, {"success": False, "error": "no_such_instance", "msg": "Not found."}
            return 200, {"instances": None}
        return 200, {"instances": self._current(iid)}

    def _act(self, iid: int, action: str) -> tuple[int, Body]:
        refusals = self._refusals.get(action)
        if refusals:
            return 200, refusals.pop(0)
        if iid not in self.instances or iid in self._pending:
            return 404, {
                "success": False,
                "error": "no_such_instance",
                "msg": f"Instance {iid} not found.",
            }
        reads = self._linger.pop(iid, None)
        if reads is not None and action != "start":
            self._pending[iid] = (reads, action)
        else:
            self._apply(iid, action)
        if action == "destroy":
            return 200, {"success": True, "msg": "Instance destroyed successfully"}
        return 200, {"success": True}

    def _apply(self, iid: int, action: str) -> None:
        row = self.instances.get(iid)
        if row is None:
            return
        if action == "destroy":
            del self.instances[iid]
        elif action == "stop":
            row.update(actual_status="exited", intended_status="stopped", cur_state="stopped",
                       next_state="stopped", status_msg="Stopped by user")  # fmt: skip
        elif action == "start":
            row.update(actual_status="running", intended_status="running", cur_state="running",
                       next_state="running", status_msg="success, running")  # fmt: skip


class _Handler(BaseHTTPRequestHandler):
    vast: FakeVast
    timeout = 10  # a client that never sends its request cannot hold stop()
    server_version = "nginx"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        auth = self.headers.get("Authorization", "")
        code, answer = self.vast._answer(self.command, parts.path, query, auth, body)
        if isinstance(answer, str):
            data, kind = answer.encode(), "text/html; charset=utf-8"
        else:
            data, kind = json.dumps(answer).encode(), "application/json"
        try:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass  # the client gave up waiting

    do_GET = do_PUT = do_DELETE = do_POST = _serve


def _instance_id(path: str) -> int | None:
    if not path.startswith(INSTANCE_PATH):
        return None
    rest = path[len(INSTANCE_PATH) :].strip("/")
    return int(rest) if rest.isascii() and rest.isdigit() else None


def default_row(iid: int) -> dict[str, Any]:
    """A running on-demand single-GPU instance with a direct ssh port, shaped like vast.ai's."""
    now = time.time()
    disk = 50.0
    storage_cost = 0.15  # $/GB/month
    storage_hourly = round(disk * storage_cost / (30 * 24), 6)
    dph_base = 0.35
    return {
        "id": iid,
        "machine_id": 4242,
        "host_id": 1337,
        "bundle_id": iid + 500_000_000,
        "actual_status": "running",
        "intended_status": "running",
        "cur_state": "running",
        "next_state": "running",
        "status_msg": "success, running pytorch/pytorch_latest/ssh",
        "label": None,
        "template_id": None,
        "template_hash_id": None,
        "image_uuid": "pytorch/pytorch:latest",
        "image_args": [],
        "image_runtype": "ssh",
        "onstart": "",
        "extra_env": [["TZ", "UTC"]],
        "gpu_name": "RTX 4090",
        "num_gpus": 1,
        "gpu_ram": 24564,
        "gpu_totalram": 24564,
        "gpu_util": 0.0,
        "gpu_temp": 34.0,
        "cuda_max_good": 12.4,
        "driver_version": "550.54.14",
        "cpu_name": "AMD EPYC 7B13 64-Core Processor",
        "cpu_cores": 128,
        "cpu_cores_effective": 16.0,
        "cpu_ram": 64406,
        "cpu_util": 0.5,
        "disk_name": "nvme",
        "disk_space": disk,
        "disk_usage": 12.3,
        "disk_util": 0.246,
        "disk_bw": 2600.0,
        "dph_base": dph_base,
        "dph_total": round(dph_base + storage_hourly, 6),
        "storage_cost": storage_cost,
        "storage_total_cost": storage_hourly,
        "inet_up_cost": 0.0,
        "inet_down_cost": 0.0,
        "credit_discount_max": 0.4,
        "min_bid": 0.18,
        "is_bid": False,
        "instance": {
            "gpuCostPerHour": dph_base,
            "diskHour": storage_hourly,
            "totalHour": round(dph_base + storage_hourly, 6),
            "discountTotalHour": 0,
            "discountedTotalPerHour": round(dph_base + storage_hourly, 6),
        },
        "search": {
            "gpuCostPerHour": dph_base,
            "diskHour": storage_hourly,
            "totalHour": round(dph_base + storage_hourly, 6),
            "discountTotalHour": 0,
            "discountedTotalPerHour": round(dph_base + storage_hourly, 6),
        },
        "ssh_idx": "7",
        "ssh_host": "ssh7.vast.ai",
        "ssh_port": 30000 + iid % 10000,
        "public_ipaddr": "203.0.113.7",
        "local_ipaddrs": "172.17.0.2",
        "direct_port_start": 41000,
        "direct_port_end": 41099,
        "direct_port_count": 100,
        "ports": {
            "22/tcp": [{"HostIp": "0.0.0.0", "HostPort": "41022"}],
            "8080/tcp": [{"HostIp": "0.0.0.0", "HostPort": "41080"}],
        },
        "machine_dir_ssh_port": 41001,
        "jupyter_token": "0123456789abcdef",
        "geolocation": "Texas, US",
        "inet_up": 800.0,
        "inet_down": 900.0,
        "reliability2": 0.995,
        "verification": "verified",
        "hosting_type": 0,
        "start_date": now - 3600,
        "end_date": now + 30 * 86400,
        "uptime_mins": 60.0,
        "time_remaining": "",
        "time_remaining_isbid": "",
        "volume_info": [],
        "webpage": None,
        "logo": "/static/logos/vastai_small2.png",
        "rentable": True,
        "compute_cap": 890,
    }
