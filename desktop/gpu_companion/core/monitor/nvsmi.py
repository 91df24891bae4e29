"""Parsers for nvidia-smi's CSV query output and for the messages it prints when a GPU is gone.

nvidia-smi's CSV is not RFC 4180: columns are joined by ", ", nothing is quoted, headers carry units
and "no value" has a dozen spellings. One reading of it here keeps the monitor, the self-check and
the tests in agreement. A missing value is always None, never 0.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any, Generic, TypeVar

# Re-exported: callers read nvidia-smi through this one module.
from gpu_companion.core.monitor.nvsmi_errors import GpuError as GpuError
from gpu_companion.core.monitor.nvsmi_errors import GpuErrorKind as GpuErrorKind
from gpu_companion.core.monitor.nvsmi_errors import detect_gpu_error as detect_gpu_error

NO_VALUE: frozenset[str] = frozenset(
    {
        "[N/A]",
        "N/A",
        "[Not Supported]",
        "[Unknown Error]",
        "[Insufficient Permissions]",
        "[Requested functionality has been deprecated]",
        "[Function Not Found]",
        "[GPU is lost]",
        "[GPU requires reset]",
        "[Not Found]",
        "",
    }
)
_NO_VALUE_FOLDED = frozenset(v.casefold() for v in NO_VALUE)

SEPARATOR = ", "
TIMESTAMP_FORMAT = "%Y/%m/%d %H:%M:%S.%f"
MAX_BAD_LINE_TEXTS = 20

DEFAULT_FIELDS: tuple[str, ...] = (
    "timestamp",
    "index",
    "uuid",
    "name",
    "utilization.gpu",
    "utilization.memory",
    "memory.used",
    "memory.total",
    "temperature.gpu",
    "power.draw",
    "power.limit",
    "clocks.sm",
    "pstate",
    "fan.speed",
)
DEFAULT_COMPUTE_APPS_FIELDS: tuple[str, ...] = (
    "timestamp",
    "gpu_uuid",
    "gpu_name",
    "gpu_bus_id",
    "pid",
    "process_name",
    "used_gpu_memory",
)

# A host lists at most this many GPUs (the largest boxes have 16): more are a hostile or broken
# nvidia-smi, and each costs a ring in the history, so the rest are dropped (the collector counts
# them). Here, not in history: the collector needs it without importing numpy at start-up.
MAX_GPUS_PER_HOST = 64
_FIELD_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_UNIT_RE = re.compile(r"\s*\[[^\]]*\]\s*$")
# No reading nvidia-smi prints is anywhere near these; a longer or larger one is a hostile host's
# (a 400-digit value reads as float inf, and round(inf) raises OverflowError).
_MAX_NUMBER_CHARS = 40
_MAX_NUMBER = 1e15
# Columns without which a row means nothing: a bad one drops the row; any other bad value drops
# only that value (counted in `dropped`), and the rest of the reading stands.
_ROW_KEYS = frozenset({"index", "pid"})
_NUMBER_RE = re.compile(r"([+-]?\d+(?:\.\d+)?)(?:\s*[A-Za-z%/]+)?")
_HELP_LINE_RE = re.compile(r'\s*"[A-Za-z0-9_.]+"(?:\s+or\s+"[A-Za-z0-9_.]+")*\s*')
_QUOTED_RE = re.compile(r'"([A-Za-z0-9_.]+)"')

# Spellings the driver accepts for the same value, mapped to the one it prints in headers.
_GPU_ALIASES = {
    "gpu_name": "name",
    "gpu_uuid": "uuid",
    "gpu_serial": "serial",
    "gpu_bus_id": "pci.bus_id",
    "clocks.gr": "clocks.current.graphics",
    "clocks.sm": "clocks.current.sm",
    "clocks.mem": "clocks.current.memory",
    "clocks.video": "clocks.current.video",
}
_APP_ALIASES = {"name": "process_name", "used_memory": "used_gpu_memory"}
_OLD_THROTTLE, _NEW_THROTTLE = "clocks_throttle_reasons.", "clocks_event_reasons."

T = TypeVar("T")


class NvsmiParseError(ValueError):
    """A line nvidia-smi cannot have printed for this query: garbage, cut off, wrong columns."""

    def __init__(self, message: str, line: str) -> None:
        shown = line if len(line) <= 200 else line[:200] + "..."
        super().__init__(f"{message}: {shown!r}")
        self.line = line


@dataclass(frozen=True, kw_only=True)
class GpuSample:
    """One GPU at one moment; the named fields are what the graphs use, the rest is in `extra`."""

    timestamp: datetime | None = None  # the host's local time, naive: nvidia-smi prints no zone
    index: int | None = None
    uuid: str | None = None
    name: str | None = None
    utilization_gpu: int | None = None  # [N/A] on a MIG-enabled GPU
    utilization_memory: int | None = None
    memory_used_mib: int | None = None
    memory_total_mib: int | None = None
    temperature_c: int | None = None
    power_draw_w: float | None = None  # may exceed power_limit_w for short spikes
    power_limit_w: float | None = None
    clocks_sm_mhz: int | None = None
    pstate: str | None = None
    fan_speed_pct: int | None = None  # [N/A] on fanless datacenter cards and laptops
    extra: dict[str, str | None] = field(default_factory=dict, hash=False)
    dropped: tuple[str, ...] = ()  # fields whose value could not be read: left None, counted


@dataclass(frozen=True, kw_only=True)
class ComputeApp:
    """One process holding GPU memory, as --query-compute-apps lists it."""

    timestamp: datetime | None = None
    gpu_uuid: str | None = None
    gpu_name: str | None = None
    gpu_bus_id: str | None = None
    pid: int | None = None  # None when a restricted container hides it
    process_name: str | None = None
    used_memory_mib: int | None = None  # always None under Windows WDDM
    extra: dict[str, str | None] = field(default_factory=dict, hash=False)
    dropped: tuple[str, ...] = ()  # fields whose value could not be read: left None, counted


@dataclass(frozen=True)
class ParseResult(Generic[T]):
    """Rows of a whole output; bad lines are counted, not fatal, so one torn line loses one row."""

    samples: list[T]
    bad_lines: int = 0
    bad_line_texts: list[str] = field(default_factory=list)  # the first MAX_BAD_LINE_TEXTS only
    error: GpuError | None = None  # set when the output says the GPU or driver is unusable


# --- values ---------------------------------------------------------------------------------


def is_no_value(value: str) -> bool:
    """True for every spelling nvidia-smi uses for "no reading" (drivers changed it over time)."""
    return value.strip().casefold() in _NO_VALUE_FOLDED


def parse_number(value: str) -> float | None:
    """A number with or without its unit ("111.50 W", "111.50"); None when there is no reading.

    Any other bracketed text also reads as None: nvidia-smi brackets only its status messages.
    """
    text = value.strip()
    if text.casefold() in _NO_VALUE_FOLDED or (text.startswith("[") and text.endswith("]")):
        return None
    match = _NUMBER_RE.fullmatch(text) if len(text) <= _MAX_NUMBER_CHARS else None
    if match is None:
        raise NvsmiParseError("not a number", value[:_MAX_NUMBER_CHARS])
    number = float(match.group(1))
    if not abs(number) < _MAX_NUMBER:  # also inf and nan
        raise NvsmiParseError("out of range", value[:_MAX_NUMBER_CHARS])
    return number


def _int(value: str) -> int | None:
    number = parse_number(value)
    return None if number is None else round(number)


def _text(value: str) -> str | None:
    text = value.strip()
    return None if text.casefold() in _NO_VALUE_FOLDED else text


def _timestamp(value: str) -> datetime | None:
    text = _text(value)
    if text is None:
        return None
    for fmt in (TIMESTAMP_FORMAT, "%Y/%m/%d %H:%M:%S"):
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    raise NvsmiParseError("not a timestamp", value)


_Converter = Callable[[str], Any]
_GPU_COLUMNS: dict[str, tuple[str, _Converter]] = {
    "timestamp": ("timestamp", _timestamp),
    "index": ("index", _int),
    "uuid": ("uuid", _text),
    "name": ("name", _text),
    "utilization.gpu": ("utilization_gpu", _int),
    "utilization.memory": ("utilization_memory", _int),
    "memory.used": ("memory_used_mib", _int),
    "memory.total": ("memory_total_mib", _int),
    "temperature.gpu": ("temperature_c", _int),
    "power.draw": ("power_draw_w", parse_number),
    "power.limit": ("power_limit_w", parse_number),
    "clocks.current.sm": ("clocks_sm_mhz", _int),
    "pstate": ("pstate", _text),
    "fan.speed": ("fan_speed_pct", _int),
}
_APP_COLUMNS: dict[str, tuple[str, _Converter]] = {
    "timestamp": ("timestamp", _timestamp),
    "gpu_uuid": ("gpu_uuid", _text),
    "gpu_name": ("gpu_name", _text),
    "gpu_bus_id": ("gpu_bus_id", _text),
    "pid": ("pid", _int),
    "process_name": ("process_name", _text),
    "used_gpu_memory": ("used_memory_mib", _int),
}


# --- field names ----------------------------------------------------------------------------


def _strip_unit(name: str) -> str:
    return _UNIT_RE.sub("", name).strip()


def canonical_field(name: str) -> str:
    """The spelling nvidia-smi prints in headers, so a query alias and its header compare equal."""
    name = _strip_unit(name)
    if name.startswith(_OLD_THROTTLE):
        return _NEW_THROTTLE + name[len(_OLD_THROTTLE) :]
    return _GPU_ALIASES.get(name, name)


def _canonical_app_field(name: str) -> str:
    name = _strip_unit(name)
    return _APP_ALIASES.get(name, name)


@lru_cache(maxsize=64)
def _canonical_all(fields: tuple[str, ...], apps: bool) -> tuple[str, ...]:
    canon = _canonical_app_field if apps else canonical_field
    return tuple(canon(f) for f in fields)


def split_header(line: str) -> list[str]:
    """Field names of a CSV header line, with the units ("memory.used [MiB]") dropped."""
    return [_strip_unit(part) for part in line.rstrip("\r\n").split(SEPARATOR)]


def _is_header(names: Sequence[str]) -> bool:
    return bool(names) and all(_FIELD_RE.fullmatch(n) for n in names)


def parse_help_query_gpu(text: str) -> set[str]:
    """Every field name (aliases included) that `nvidia-smi --help-query-gpu` documents."""
    known: set[str] = set()
    for line in text.splitlines():
        if _HELP_LINE_RE.fullmatch(line):
            known.update(_QUOTED_RE.findall(line))
    return known


def choose_fields(wanted: Iterable[str], known: Iterable[str]) -> tuple[str, ...]:
    """The wanted fields this driver knows, in order, under a spelling it accepts.

    Unknown fields are dropped: a single unknown name makes nvidia-smi refuse the whole query.
    An empty `known` (help text unavailable) keeps every wanted field.
    """
    known_set = set(known)
    by_canon: dict[str, list[str]] = {}
    for name in sorted(known_set):
        by_canon.setdefault(canonical_field(name), []).append(name)
    chosen: list[str] = []
    seen: set[str] = set()
    for name in wanted:
        canon = canonical_field(name)
        if canon in seen:
            continue
        if not known_set or name in known_set:
            pick: str | None = name
        elif canon in known_set:
            pick = canon
        else:
            candidates = by_canon.get(canon)
            pick = candidates[0] if candidates else None
        if pick is not None:
            seen.add(canon)
            chosen.append(pick)
    return tuple(chosen)


def _checked_fields(fields: Sequence[str]) -> list[str]:
    names = list(fields)
    if not names:
        raise ValueError("at least one nvidia-smi field is needed")
    for name in names:
        if not _FIELD_RE.fullmatch(name):
            raise ValueError(f"not an nvidia-smi field name: {name!r}")
    return names


def build_query_gpu_argv(fields: Sequence[str], interval_ms: int | None) -> list[str]:
    """The argv for one query, or a stream every `interval_ms`; noheader,nounits is the cheapest."""
    argv = [
        "nvidia-smi",
        "--query-gpu=" + ",".join(_checked_fields(fields)),
        "--format=csv,noheader,nounits",
    ]
    if interval_ms is not None:
        if isinstance(interval_ms, bool) or not isinstance(interval_ms, int) or interval_ms < 1:
            raise ValueError(f"interval_ms must be a positive whole number, not {interval_ms!r}")
        argv += ["-lms", str(interval_ms)]
    return argv


def build_query_compute_apps_argv(
    fields: Sequence[str] = DEFAULT_COMPUTE_APPS_FIELDS,
) -> list[str]:
    """The argv for the list of processes holding GPU memory."""
    query = "--query-compute-apps=" + ",".join(_checked_fields(fields))
    return ["nvidia-smi", query, "--format=csv,noheader,nounits"]


# --- lines ----------------------------------------------------------------------------------


def _split(line: str, count: int, free_column: int | None = None) -> list[str]:
    """Split on ", "; the one free-text column (a process name) takes whatever is left over."""
    text = line.rstrip("\r\n")
    if not text.strip():
        raise NvsmiParseError("empty line", line)
    parts = text.split(SEPARATOR)
    if free_column is not None and len(parts) > count:
        tail = len(parts) - (count - free_column - 1)
        parts = [*parts[:free_column], SEPARATOR.join(parts[free_column:tail]), *parts[tail:]]
    if len(parts) != count:
        raise NvsmiParseError(f"expected {count} columns, found {len(parts)}", line)
    return parts


def _convert(
    line: str, names: Sequence[str], columns: dict[str, tuple[str, _Converter]], free: int | None
) -> dict[str, Any]:
    kwargs: dict[str, Any] = {}
    extra: dict[str, str | None] = {}
    dropped: list[str] = []
    for name, value in zip(names, _split(line, len(names), free), strict=True):
        if name in columns:
            attr, convert = columns[name]
            try:
                kwargs[attr] = convert(value)
            except NvsmiParseError as exc:
                if name in _ROW_KEYS:
                    raise NvsmiParseError(f"bad {name} value {exc.line!r}", line) from exc
                kwargs[attr] = None
                dropped.append(name)
        else:
            extra[name] = _text(value)
    if dropped and len(dropped) == sum(name in columns for name in names):
        raise NvsmiParseError(f"bad {dropped[0]} value", line)  # nothing in it could be read
    kwargs["extra"] = extra
    kwargs["dropped"] = tuple(dropped)
    return kwargs


def parse_query_gpu_line(line: str, fields: Sequence[str]) -> GpuSample:
    """One line of `--query-gpu` output for `fields` (the query's names, or the header's)."""
    names = _canonical_all(tuple(fields), False)
    return GpuSample(**_convert(line, names, _GPU_COLUMNS, None))


def parse_compute_apps_line(line: str, fields: Sequence[str]) -> ComputeApp:
    """One line of `--query-compute-apps`; the process name may itself contain ", "."""
    names = _canonical_all(tuple(fields), True)
    free = names.index("process_name") if "process_name" in names else None
    return ComputeApp(**_convert(line, names, _APP_COLUMNS, free))


# --- whole outputs --------------------------------------------------------------------------


def _parse_csv(
    text: str,
    fields: Sequence[str] | None,
    apps: bool,
    parse_line: Callable[[str, Sequence[str]], T],
) -> ParseResult[T]:
    lines = [line.rstrip("\r") for line in text.split("\n")]
    lines = [line for line in lines if line.strip()]
    if fields is None:
        if not lines:
            return ParseResult(samples=[])
        header = split_header(lines[0])
        if not _is_header(header):
            error = detect_gpu_error(text)
            if error is None:
                raise NvsmiParseError(
                    "no field list given and the first line is no header", lines[0]
                )
            return ParseResult([], len(lines), lines[:MAX_BAD_LINE_TEXTS], error)
        fields, lines = header, lines[1:]
    names = _canonical_all(tuple(fields), apps)
    samples: list[T] = []
    bad: list[str] = []
    for line in lines:
        header = split_header(line)
        if _is_header(header) and _canonical_all(tuple(header), apps) == names:
            continue  # a header in noheader mode, or repeated in a stream
        try:
            samples.append(parse_line(line, fields))
        except NvsmiParseError:
            bad.append(line)
    error = detect_gpu_error(text)
    return ParseResult(samples, len(bad), bad[:MAX_BAD_LINE_TEXTS], error)


def parse_query_gpu_csv(text: str, fields: Sequence[str] | None = None) -> ParseResult[GpuSample]:
    """A whole `--query-gpu` output, with or without header; without `fields` line 1 must be one."""
    return _parse_csv(text, fields, False, parse_query_gpu_line)


def parse_compute_apps_csv(
    text: str, fields: Sequence[str] | None = None
) -> ParseResult[ComputeApp]:
    """A whole `--query-compute-apps` output; a header alone means no process uses the GPU."""
    return _parse_csv(text, fields, True, parse_compute_apps_line)
