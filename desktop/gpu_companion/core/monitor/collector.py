"""Per-host GPU collector: one long-lived `nvidia-smi --query-gpu ... -lms N` read line by line.

One thread per host (paramiko already runs one transport thread per connection; measured in
benchmarks/monitor_overhead.py). Beside the stream, a slow poll over the same connection brings
compute processes and host counters. Drops reconnect with backoff; problems the user must fix
(auth, host key) wait for `reconnect()`. Events go to one listener, on the collector's thread.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from gpu_companion.core.common.backoff import Backoff
from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.monitor.collector_errors import (
    Failure,
    FieldRejected,
    GpuProblem,
    classify_failure,
    gpu_problem_from_output,
)
from gpu_companion.core.monitor.counters import HostCounters, RawCounters, rates
from gpu_companion.core.monitor.faults import (
    GpuFault,
    fault_from_error_line,
    fault_in_row,
    normal_bus_id,
)
from gpu_companion.core.monitor.nvsmi import (
    DEFAULT_FIELDS,
    MAX_GPUS_PER_HOST,
    ComputeApp,
    GpuError,
    GpuSample,
    NvsmiParseError,
    build_query_gpu_argv,
    choose_fields,
    parse_help_query_gpu,
    parse_query_gpu_line,
)
from gpu_companion.core.monitor.poll import PollResult, login_user, poll_host
from gpu_companion.core.monitor.transport import (
    LocalTransport,
    SshTransport,
    StreamClosed,
    Transport,
)

log = logging.getLogger(__name__)
MAX_GPU_INDEX = 1 << 16  # with history's MAX_GPUS_PER_HOST: more are dropped and counted

STREAM_FIELDS: tuple[str, ...] = (*DEFAULT_FIELDS, "clocks_event_reasons.active", "pci.bus_id")


class HostState(str, enum.Enum):
    CONNECTING = "connecting"
    LIVE = "live"
    RECONNECTING = "reconnecting"
    AUTH_FAILED = "auth failed"
    HOST_KEY_CHANGED = "host key changed"
    HOST_KEY_UNKNOWN = "host key not trusted yet"
    NO_DRIVER = "no NVIDIA driver"
    GPU_LOST = "GPU lost"
    STOPPED = "stopped"


class ClientFactory(Protocol):
    """Gives a connected paramiko.SSHClient for a host, or raises (see collector_errors)."""

    def __call__(self, host: Host) -> Any: ...


@dataclass(frozen=True)
class CollectorConfig:
    interval_ms: int = 1000
    poll_every_s: float = 10.0  # compute processes and host counters; 0 turns the poll off
    proc_root: str = "/proc"  # where the host's counters are read (a test points it elsewhere)
    df_path: str = "/"
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 60.0
    stall_timeout_s: float = 15.0  # no line for this long (and 5 intervals): reconnect
    fields: tuple[str, ...] = STREAM_FIELDS


@dataclass(frozen=True)
class HostStatus:
    state: HostState
    message: str = ""
    hint: str = ""
    since: float = field(default_factory=time.time)
    bad_lines: int = 0
    bad_fields: int = 0  # values dropped from rows that were otherwise read
    last_bad_line: str = ""
    fields: tuple[str, ...] = ()
    retry_in_s: float | None = None


@dataclass(frozen=True)
class TimedSample:
    """A sample with `t`, seconds since the epoch on this computer's clock (the plots' x axis)."""

    t: float
    sample: GpuSample


@dataclass(frozen=True)
class SamplesEvent:
    alias: str
    samples: tuple[TimedSample, ...]  # one tick: every GPU once
    faults: tuple[GpuFault, ...] = ()  # the tick's GPUs that cannot be read (lost, need a reset)


@dataclass(frozen=True)
class StatusEvent:
    alias: str
    status: HostStatus


@dataclass(frozen=True)
class PollEvent:
    alias: str
    apps: tuple[ComputeApp, ...]
    counters: HostCounters
    owners: dict[int, str]  # pid -> user for the processes visible on the host
    login_user: str


CollectorEvent = SamplesEvent | StatusEvent | PollEvent
Listener = Callable[[CollectorEvent], None]


class _Stopped(Exception):
    pass


class HostCollector:
    """Collects one host on its own thread until `stop()`."""

    def __init__(
        self,
        host: Host,
        connect: ClientFactory | None,
        listener: Listener,
        config: CollectorConfig | None = None,
        local_nvidia_smi: str | None = None,
    ) -> None:
        self.host = host
        self.config = config or CollectorConfig()
        self._connect = connect
        self._listener = listener
        self._local_nvidia_smi = local_nvidia_smi
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._transport: Transport | None = None
        self._thread: threading.Thread | None = None
        self._status = HostStatus(HostState.CONNECTING)
        self._last_ts: dict[int, Any] = {}  # per GPU index: the last host timestamp delivered
        self._last_t: dict[int, float] = {}
        self._bus_index: dict[str, int] = {}  # bus id -> index, from rows seen: names error lines
        self._gpus: set[int] = set()  # the GPU indices admitted (at most MAX_GPUS_PER_HOST)
        self._raw: RawCounters | None = None
        self._user = host.user or login_user()
        self._went_live = False
        self.fields: tuple[str, ...] = ()

    # --- control ------------------------------------------------------------------------

    @property
    def status(self) -> HostStatus:
        return self._status

    def start(self) -> HostCollector:
        self._thread = threading.Thread(
            target=self._run, name=f"collector-{self.host.alias}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        self._close_transport()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def reconnect(self) -> None:
        """Try again now (after the user fixed a key or accepted a new host key)."""
        self._wake.set()
        self._close_transport()

    def _close_transport(self) -> None:
        with self._lock:
            transport, self._transport = self._transport, None
        if transport is not None:
            try:
                transport.close()
            except Exception:  # closing a dead connection may raise anything
                log.debug("close failed", exc_info=True)

    # --- events -------------------------------------------------------------------------

    def _emit(self, event: CollectorEvent) -> None:
        try:
            self._listener(event)
        except Exception:
            log.exception("monitor listener failed")

    def _set_status(self, status: HostStatus) -> None:
        self._status = status
        self._emit(StatusEvent(self.host.alias, status))

    def _set_state(self, state: HostState, message: str = "", hint: str = "", **kw: Any) -> None:
        if state == self._status.state and message == self._status.message and not kw:
            return
        self._set_status(
            replace(self._status, state=state, message=message, hint=hint, since=time.time(), **kw)
        )

    # --- the loop -----------------------------------------------------------------------

    def _run(self) -> None:
        backoff = Backoff(self.config.backoff_initial_s, self.config.backoff_max_s)
        attempt = 1
        first = True
        while not self._stop.is_set():
            delay = backoff.delay(attempt)
            if not first:
                self._set_state(HostState.RECONNECTING, self._status.message, self._status.hint)
            first = False
            self._wake.clear()
            self._went_live = False
            try:
                self._session()
            except _Stopped:
                break
            except Exception as exc:  # every failure becomes a state, none ends the thread
                failure = classify_failure(exc)
                if self.host.is_local:
                    failure = replace(failure, message=failure.message.replace(
                        _("this host"), _("this computer")))  # fmt: skip
                if self._went_live:
                    attempt = 1
                    delay = backoff.delay(attempt)
                if not failure.retry:
                    self._set_state(failure.state, failure.message, failure.hint)
                    self._wake.wait()  # until reconnect() or stop()
                    continue
                if failure.state in (HostState.GPU_LOST, HostState.NO_DRIVER) or getattr(
                    exc, "slow_retry", False
                ):  # a host flooding the stream is not asked again at once
                    delay = backoff.max_s
                self._set_state(failure.state, failure.message, failure.hint, retry_in_s=delay)
            finally:
                self._close_transport()
            if self._stop.is_set():
                break
            attempt = 1 if self._wake.wait(delay) else attempt + 1
        self._set_state(HostState.STOPPED)

    def _open(self) -> Transport:
        transport: Transport
        if self.host.is_local:
            transport = LocalTransport(self._local_nvidia_smi)
        else:
            if self._connect is None:
                raise RuntimeError("no SSH client factory")
            transport = SshTransport(self._connect(self.host))
        with self._lock:
            if self._stop.is_set():
                transport.close()
                raise _Stopped
            self._transport = transport
        return transport

    def _detect_fields(self, transport: Transport) -> tuple[str, ...]:
        """The wanted fields this driver knows (`--help-query-gpu`: one start per connection)."""
        code, text = transport.run(["nvidia-smi", "--help-query-gpu"], 20)
        problem = gpu_problem_from_output(code, text)
        if problem is not None:
            raise problem
        return choose_fields(self.config.fields, parse_help_query_gpu(text))

    def _session(self) -> None:
        transport = self._open()
        fields = self._detect_fields(transport)
        while True:
            try:
                self._stream(transport, fields)
            except FieldRejected as rejected:
                fields = tuple(f for f in fields if f != rejected.field)
                log.info("%s: driver refused field %s", self.host.alias, rejected.field)

    def _stream(self, transport: Transport, fields: tuple[str, ...]) -> None:
        cfg = self.config
        stream = transport.stream(build_query_gpu_argv(fields, cfg.interval_ms))
        self.fields = fields
        stall = max(cfg.stall_timeout_s, 5 * cfg.interval_ms / 1000)
        last_line = time.monotonic()
        next_poll = time.monotonic() + min(1.0, cfg.poll_every_s)
        tick = _Tick()
        expected = 0
        offset: float | None = None
        live = False
        try:
            while not self._stop.is_set():
                now = time.monotonic()
                if cfg.poll_every_s > 0 and live and now >= next_poll:
                    self._poll(transport)
                    next_poll = time.monotonic() + cfg.poll_every_s
                wait = stall - (now - last_line)
                if cfg.poll_every_s > 0 and live:
                    wait = min(wait, max(0.01, next_poll - now))
                if wait <= 0:
                    raise TimeoutError(
                        _("nvidia-smi sent nothing for {seconds} s").format(seconds=f"{stall:.0f}")
                    )
                try:
                    line = stream.readline(wait)
                except TimeoutError:
                    continue
                except StreamClosed as end:
                    self._flush(tick)
                    raise self._ended(end) from None
                last_line = time.monotonic()
                item = self._parse(line, fields)
                if item is None:
                    continue
                timed: TimedSample | None = None
                if isinstance(item, GpuSample):
                    if offset is None:
                        offset = _clock_offset(item)
                    timed = self._timed(item, offset)
                    if timed is None:
                        continue
                    key: tuple[str, object] = ("index", item.index)
                else:
                    key = item.key
                if key in tick.keys:  # a GPU's second line: the previous tick is complete
                    expected = max(expected, len(tick.keys))
                    self._flush(tick)
                if len(tick.keys) >= 2 * MAX_GPUS_PER_HOST:  # fault lines with ever new names
                    self._flush(tick)
                tick.keys.add(key)
                if timed is not None:
                    tick.samples.append(timed)
                elif isinstance(item, GpuFault):
                    tick.faults.append(item)
                if expected and len(tick.keys) >= expected:
                    self._flush(tick)
                if not live and isinstance(item, GpuSample):
                    live = self._went_live = True
                    self._set_state(HostState.LIVE)
            raise _Stopped
        finally:
            stream.close()

    def _ended(self, end: StreamClosed) -> Exception:
        if end.lost:
            return ConnectionError(_("the connection to the host dropped"))
        problem = gpu_problem_from_output(end.exit_code or 0, end.tail)
        if problem is not None:
            return problem
        return ConnectionError(
            _("nvidia-smi stopped (exit code {code})").format(code=end.exit_code)
        )

    def _parse(self, line: str, fields: tuple[str, ...]) -> GpuSample | GpuFault | None:
        if not line.strip():
            return None
        try:
            sample = parse_query_gpu_line(line, fields)
        except NvsmiParseError:
            fault = fault_from_error_line(line, self._bus_index)
            if fault is not None:
                return fault  # one GPU gone; the others keep streaming
            rejected = FieldRejected.from_line(line)
            if rejected is not None:
                raise rejected from None
            self._set_status(
                replace(
                    self._status,
                    bad_lines=self._status.bad_lines + 1,
                    last_bad_line=line[:200],
                )
            )
            return None
        if sample.index is not None and not self._admit_gpu(sample.index):
            return None
        if sample.dropped:  # the rest of the reading stands; the unreadable values are counted
            self._set_status(
                replace(
                    self._status,
                    bad_fields=self._status.bad_fields + len(sample.dropped),
                    last_bad_line=line[:200],
                )
            )
        bus = normal_bus_id(sample.extra.get("pci.bus_id"))
        if bus is not None and sample.index is not None:
            self._bus_index[bus] = sample.index
        return fault_in_row(line, sample) or sample

    def _admit_gpu(self, index: int) -> bool:
        """At most MAX_GPUS_PER_HOST distinct GPU indices per host are kept (history, rings, the
        tick): a host listing thousands cannot grow memory; the rest are counted as bad lines."""
        if index in self._gpus:
            return True
        if 0 <= index < MAX_GPU_INDEX and len(self._gpus) < MAX_GPUS_PER_HOST:
            self._gpus.add(index)
            return True
        self._set_status(
            replace(
                self._status,
                bad_lines=self._status.bad_lines + 1,
                last_bad_line=_(
                    "GPU index {index} ignored: a host lists at most {n} GPUs here"
                ).format(index=str(index)[:20], n=MAX_GPUS_PER_HOST),
            )
        )
        return False

    def _timed(self, sample: GpuSample, offset: float | None) -> TimedSample | None:
        """Place the sample on this computer's clock; drop one the stream already delivered."""
        index = sample.index if sample.index is not None else 0
        if sample.timestamp is not None:
            last = self._last_ts.get(index)
            if last is not None and sample.timestamp <= last:
                return None
            self._last_ts[index] = sample.timestamp
        t = time.time() if offset is None else _host_epoch(sample) + offset
        t = max(t, self._last_t.get(index, 0.0) + 1e-3)
        self._last_t[index] = t
        return TimedSample(t, sample)

    def _flush(self, tick: _Tick) -> None:
        """Send one complete tick; a tick where every GPU is gone is the host's GPU problem."""
        if tick.faults and not tick.samples:
            fault = tick.faults[0]
            buses = tuple(f.bus_id for f in tick.faults if f.bus_id)
            raise GpuProblem(GpuError("gpu_lost", fault.message, fault.hint, buses))
        if tick.samples:
            self._emit(SamplesEvent(self.host.alias, tuple(tick.samples), tuple(tick.faults)))
        tick.clear()

    def _poll(self, transport: Transport) -> PollResult:
        cfg = self.config
        result = poll_host(transport, cfg.proc_root, cfg.df_path)
        if result.error is not None and result.error.kind == "gpu_lost" and not result.apps:
            # the stream names a lost GPU among good ones itself; a poll alone cannot tell which
            log.debug("%s: the process list reports a lost GPU", self.host.alias)
        counters = rates(self._raw, result.counters)
        self._raw = result.counters
        self._emit(
            PollEvent(self.host.alias, tuple(result.apps), counters, result.owners, self._user)
        )
        return result


@dataclass
class _Tick:
    """The lines of one round of the stream: every GPU once, read or not."""

    samples: list[TimedSample] = field(default_factory=list)
    faults: list[GpuFault] = field(default_factory=list)
    keys: set[tuple[str, object]] = field(default_factory=set)

    def clear(self) -> None:
        self.samples.clear()
        self.faults.clear()
        self.keys.clear()


def _host_epoch(sample: GpuSample) -> float:
    assert sample.timestamp is not None
    return sample.timestamp.timestamp()


def _clock_offset(sample: GpuSample) -> float | None:
    """This computer's clock minus the host's, from the first line of a connection."""
    if sample.timestamp is None:
        return None
    return time.time() - _host_epoch(sample)


__all__ = [
    "ClientFactory",
    "CollectorConfig",
    "CollectorEvent",
    "Failure",
    "HostCollector",
    "HostState",
    "HostStatus",
    "PollEvent",
    "SamplesEvent",
    "StatusEvent",
    "TimedSample",
]
