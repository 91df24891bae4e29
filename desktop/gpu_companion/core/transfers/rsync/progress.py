"""Streaming reader for rsync's progress output (`--progress` and `--info=progress2`) and `--stats`.

rsync redraws one terminal line with `\\r`, pads it with spaces, lets ssh messages land in the
middle of it and formats numbers after the locale. This module turns that stream into typed
events so the transfer view, the resume logic and the tests read it the same way.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from gpu_companion.core.common.i18n import _

MessageLevel = Literal["info", "warning", "error"]

_HUMAN_POWERS = {"K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}
_RATE_POWERS = {"k": 1, "K": 1, "M": 2, "G": 3, "T": 4}  # rsync's kB/s is 1024 bytes/s
# rsync's longest line is a 4096-byte path plus a redraw; a remote that writes more without a line
# break is not rsync, and keeping it would make every chunk cost the whole tail (quadratic).
MAX_LINE_CHARS = 16_384
_MAX_DIGITS = 24  # more than any real count or byte total (10^24 bytes); longer numbers are refused

# One redraw: `%15s %3d%% %7.2f%s %s%s` (progress.c). The prefix is a file name that some runs print
# on the same line; the number must start after whitespace so digits at a name's end stay there.
_PROGRESS_RE = re.compile(
    r"(?P<prefix>.*?)(?<!\S)"
    r"(?P<bytes>\d[\d.,'\u00a0\u202f]*[KMGTPE]?)\s+"
    r"(?P<pct>\d{1,3})%\s*"
    r"(?P<rate>\d{1,24}(?:[.,]\d{1,6})?)(?P<unit>[kKMGT])B/s\s+"
    r"(?P<time>\d{1,12}:\d\d:\d\d|\?\?:\?\?:\?\?)"
    r"(?:\s*\((?:xfr|xfer)#(?P<xfr>\d{1,18}),\s*(?P<chk>to-chk|to-check|ir-chk)="
    r"(?P<rem>\d{1,18})/(?P<tot>\d{1,18})\))?"
)
_SPLIT_RE = re.compile(r"[\r\n]")
_SIZE_RE = re.compile(r"(?P<num>\d[\d.,'\u00a0\u202f]*?)(?P<suffix>[KMGTPE])?")
_ITEMIZED_TRANSFER_RE = re.compile(r"^[<>]f\S{7,10} (?P<name>.+)$")

_ERROR_RES = tuple(
    re.compile(p)
    for p in (
        r"rsync error:",
        r"(?:^|: )rsync(?::| \[)",  # also behind a syslog `rsyncd[pid]: ` prefix
        r"^\[(?:sender|receiver|generator|client|server|daemon)\] ",
        r"^@ERROR",
        r"^ERROR:",
        r"^IO error encountered",
        r"^ssh: ",
        r"^ssh_\w+:",
        r"^client_loop: ",
        r"^packet_write_wait: ",
        r"^kex_exchange_identification: ",
        r"^Connection (?:to .* closed|reset|refused|closed|timed out)",
        r"^(?:Write|Read) failed: ",
        r"^Timeout, server .* not responding",
        r"^Broken pipe",
        r"Permission denied \(",
        r"^Host key verification failed",
        r"^@@@@",
        r"REMOTE HOST IDENTIFICATION HAS CHANGED",
    )
)
_WARNING_RES = tuple(
    re.compile(p)
    for p in (r"rsync warning:", r"^Warning: ", r"^file has vanished: ", r"^WARNING: ")
)
# rsync's own status lines: never file names, even when a progress line follows them.
_INFO_RES = tuple(
    re.compile(p)
    for p in (
        r"^(?:sending|receiving) (?:incremental )?file list",
        r"^building file list",
        r"^created directory ",
        r"^delta-transmission (?:disabled|enabled)",
        r"^total: matches=",
        r"^sent \S+ bytes\s+received ",
        r"^total size is ",
        r"^(?:Number of |Total |Literal data:|Matched data:|File list )",
        r"^\s*\d[\d,.]* files (?:to consider|\.\.\.)",
        r"^\*?deleting ",
        r"^skipping ",
        r"^cannot delete",
        r"^debug\d: ",
        r"^done$",
    )
)


@dataclass(frozen=True)
class Progress:
    """One progress redraw; missing values are None. `xfr#` lines show elapsed time, not ETA."""

    bytes_done: int
    percent: int | None
    rate_bps: float | None
    eta_s: int | None
    elapsed_s: int | None
    xfr: int | None
    to_check_remaining: int | None
    to_check_total: int | None
    incremental_scan: bool
    current_file: str | None

    @property
    def is_final(self) -> bool:
        """True for the line rsync prints when a file is done (it carries the `xfr#` counter)."""
        return self.xfr is not None


@dataclass(frozen=True)
class FileStarted:
    """rsync began sending a file: its name line was followed by progress (or itemized `<f`)."""

    name: str


@dataclass(frozen=True)
class RsyncMessage:
    """Any other line: rsync status, errors, warnings and ssh messages split off progress lines."""

    text: str
    level: MessageLevel


ProgressEvent = Progress | FileStarted | RsyncMessage


@dataclass(frozen=True)
class RsyncStats:
    """The `--stats` summary; None where a line is missing (older rsync prints fewer)."""

    number_of_files: int | None = None
    number_of_created_files: int | None = None
    number_of_deleted_files: int | None = None
    files_transferred: int | None = None
    total_file_size: int | None = None
    total_transferred_file_size: int | None = None
    literal_data: int | None = None
    matched_data: int | None = None
    file_list_size: int | None = None
    total_bytes_sent: int | None = None
    total_bytes_received: int | None = None
    speedup: float | None = None


def parse_size(token: str, human_base: int = 1000) -> int | None:
    """Bytes from `1,234,567`, `962.408.775.680`, `2.31K` or `1,77G`; separators follow the locale.

    Without a suffix rsync never prints decimals, so every separator is a thousands separator;
    with one, the last `.`/`,` before two digits is the decimal point. A number longer than any
    real count (a hostile or broken remote) is None, never an exception.
    """
    m = _SIZE_RE.fullmatch(token.strip())
    if m is None:
        return None
    num, suffix = m.group("num"), m.group("suffix")
    if sum(c.isdigit() for c in num) > _MAX_DIGITS:
        return None
    if suffix is None:
        digits = re.sub(r"\D", "", num)
        return int(digits) if digits else None
    dec = re.fullmatch(r"(?P<int>.*?)(?:[.,](?P<frac>\d+))?", num)
    assert dec is not None  # the pattern matches any string
    whole = re.sub(r"\D", "", dec.group("int")) or "0"
    value = (
        float(f"{whole}.{dec.group('frac') or '0'}") * float(human_base) ** _HUMAN_POWERS[suffix]
    )
    return round(value) if math.isfinite(value) else None


def _parse_rate(value: str, unit: str) -> float:
    return float(value.replace(",", ".")) * 1024.0 ** _RATE_POWERS[unit]


def _parse_hms(text: str) -> int | None:
    if text.startswith("?"):
        return None
    h, m, s = (int(p) for p in text.split(":"))
    return h * 3600 + m * 60 + s


_ESCAPED = re.compile(rb"\\#([0-7]{3})")


def unescape_name(name: str) -> str:
    """A name as rsync printed it under LC_ALL=C: every byte it thinks unprintable (all of
    UTF-8's multi-byte characters) as `\\#ooo`; back to the text the user named the file with
    ("\\#303\\#251" is "é"). Bytes that are not UTF-8 show as the replacement character."""
    if "\\#" not in name:
        return name
    raw = name.encode("utf-8", "surrogateescape")
    return _ESCAPED.sub(lambda m: bytes([int(m.group(1), 8)]), raw).decode("utf-8", "replace")


def classify_line(text: str) -> MessageLevel | None:
    """The level of a non-progress line, or None when it may be a file name (rsync -v output)."""
    if any(r.search(text) for r in _WARNING_RES):
        return "warning"
    if any(r.search(text) for r in _ERROR_RES):
        return "error"
    if any(r.search(text) for r in _INFO_RES):
        return "info"
    return None


class RsyncProgressParser:
    """Feed rsync's stdout (or stdout+stderr) in chunks of any size; get events in order.

    A name line is held until the next line shows whether a transfer followed it, so `./` and
    unchanged files come out as messages rather than FileStarted. A complete progress redraw at
    the end of a chunk is reported at once, not when the next `\\r` arrives a second later.
    """

    def __init__(self, human_base: int = 1000, *, check_counts_up: bool = False) -> None:
        self._human_base = human_base  # 1000 for -h; 1024 for -hh
        self._counts_up = check_counts_up  # openrsync: `to-check=N/M` counts done, not remaining
        self._tail = ""
        self._consumed = 0  # chars of the tail already reported as progress
        self._pending_name: str | None = None
        self._current_file: str | None = None
        self._skipping = False  # inside an overlong line: drop text until the next line break

    def feed(self, chunk: str) -> list[ProgressEvent]:
        """Parse what is complete in `chunk` plus the kept tail; keep the new partial tail.

        Linear in the input: the kept tail never exceeds MAX_LINE_CHARS, and an overlong line
        is reported once and skipped up to its line break.
        """
        events: list[ProgressEvent] = []
        if self._skipping:
            m = _SPLIT_RE.search(chunk)
            if m is None:
                return events
            chunk, self._skipping = chunk[m.start() :], False
        parts = _SPLIT_RE.split(self._tail + chunk)
        self._tail = parts.pop()
        for segment in parts:
            if len(segment) > MAX_LINE_CHARS:
                self._overlong(events)
                self._consumed = 0
            else:
                self._segment(segment, events)
        if len(self._tail) > MAX_LINE_CHARS:
            self._overlong(events)
            self._tail, self._consumed, self._skipping = "", 0, True
        self._report_tail_early(events)
        return events

    def _overlong(self, events: list[ProgressEvent]) -> None:
        self._flush_pending(events)
        events.append(
            RsyncMessage(
                _(
                    "Skipped a line of more than {n} characters from the transfer output (not "
                    "rsync progress)."
                ).format(n=MAX_LINE_CHARS),
                "warning",
            )
        )

    def finish(self) -> list[ProgressEvent]:
        """Flush the partial tail and a held name line (call once the process has exited)."""
        events: list[ProgressEvent] = []
        if self._tail:
            self._segment(self._tail, events)
            self._tail = ""
        self._flush_pending(events)
        return events

    def _segment(self, segment: str, events: list[ProgressEvent]) -> None:
        consumed, self._consumed = self._consumed, 0
        if consumed:
            rest = segment[consumed:].strip()
            if rest:
                self._flush_pending(events)
                events.append(RsyncMessage(rest, classify_line(rest) or "info"))
            return
        self._line(segment, events)

    def _report_tail_early(self, events: list[ProgressEvent]) -> None:
        if self._consumed or "%" not in self._tail:
            return
        m = _PROGRESS_RE.match(self._tail)
        if m is None:
            return
        after = self._tail[m.end() :]
        # A redraw ends with two spaces (ETA form) or with `)`; one space may precede `(xfr#`.
        if (m.group("xfr") is not None and not after.strip()) or after.startswith("  "):
            self._emit(m, "", events)
            self._consumed = m.end()

    def _line(self, line: str, events: list[ProgressEvent]) -> None:
        m = _PROGRESS_RE.match(line) if "%" in line and "B/s" in line else None
        if m is not None:
            self._emit(m, line[m.end() :].strip(), events)
            return
        text = line.strip()
        if not text:
            return
        self._flush_pending(events)
        itemized = _ITEMIZED_TRANSFER_RE.match(text)
        if itemized is not None:
            self._start_file(itemized.group("name"), events)
            return
        level = classify_line(text)
        if level is None:
            self._pending_name = text
        else:
            events.append(RsyncMessage(text, level))

    def _emit(self, m: re.Match[str], rest: str, events: list[ProgressEvent]) -> None:
        prefix = m.group("prefix").strip()
        if prefix:
            self._flush_pending(events)
            level = classify_line(prefix)
            if level is None:
                self._start_file(prefix, events)
            else:
                events.append(RsyncMessage(prefix, level))
        elif self._pending_name is not None:
            name, self._pending_name = self._pending_name, None
            self._start_file(name, events)
        bytes_done = parse_size(m.group("bytes"), self._human_base)
        rate = _parse_rate(m.group("rate"), m.group("unit"))
        seconds = _parse_hms(m.group("time"))
        final = m.group("xfr") is not None
        if not final and rate == 0.0:
            seconds = None  # no rate yet: rsync prints 0:00:00, which is not an ETA
        remaining = int(m.group("rem")) if final else None
        total = int(m.group("tot")) if final else None
        if self._counts_up and remaining is not None and total is not None:
            remaining = max(total - remaining, 0)
        events.append(
            Progress(
                bytes_done=bytes_done if bytes_done is not None else 0,
                percent=int(m.group("pct")),
                rate_bps=rate,
                eta_s=None if final else seconds,
                elapsed_s=seconds if final else None,
                xfr=int(m.group("xfr")) if final else None,
                to_check_remaining=remaining,
                to_check_total=total,
                incremental_scan=m.group("chk") == "ir-chk",
                current_file=self._current_file,
            )
        )
        if rest:
            events.append(RsyncMessage(rest, classify_line(rest) or "info"))

    def _start_file(self, name: str, events: list[ProgressEvent]) -> None:
        name = unescape_name(name)
        self._current_file = name
        events.append(FileStarted(name))

    def _flush_pending(self, events: list[ProgressEvent]) -> None:
        if self._pending_name is not None:
            events.append(RsyncMessage(self._pending_name, "info"))
            self._pending_name = None


def parse_progress(text: str, human_base: int = 1000) -> list[ProgressEvent]:
    """All events of a finished output at once (tests, logs read back from disk)."""
    parser = RsyncProgressParser(human_base)
    return parser.feed(text) + parser.finish()


_STATS_FIELDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(rf"^{label}:\s*(?P<v>\S+)", re.MULTILINE))
    for name, label in (
        ("number_of_files", r"Number of files"),
        ("number_of_created_files", r"Number of created files"),
        ("number_of_deleted_files", r"Number of deleted files"),
        # 3.1+ counts regular files only; 3.0 and older say "Number of files transferred".
        ("files_transferred", r"Number of (?:regular )?files transferred"),
        ("total_file_size", r"Total file size"),
        ("total_transferred_file_size", r"Total transferred file size"),
        ("literal_data", r"Literal data"),
        ("matched_data", r"Matched data"),
        ("file_list_size", r"File list size"),
        ("total_bytes_sent", r"Total bytes sent"),
        ("total_bytes_received", r"Total bytes received"),
    )
)
_SPEEDUP_RE = re.compile(r"speedup is (?P<v>\d+(?:[.,]\d+)?)")


def parse_stats(text: str, human_base: int = 1000) -> RsyncStats:
    """Read the `--stats` block (any rsync since 2.6, `-h` or not) from a whole output."""
    text = text.replace("\r", "\n")
    values: dict[str, int | None] = {}
    for name, pattern in _STATS_FIELDS:
        m = pattern.search(text)
        values[name] = parse_size(m.group("v"), human_base) if m else None
    speed = _SPEEDUP_RE.search(text)
    return RsyncStats(
        **values, speedup=float(speed.group("v").replace(",", ".")) if speed else None
    )
