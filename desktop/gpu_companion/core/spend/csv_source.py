"""A CSV file read a line at a time: the ledger import streams a bill of a million rows in
bounded memory, reading the file twice (once to learn its columns and decimal separator, once to
import) instead of holding it, its text and its rows at once.

Text is UTF-8 (with or without BOM) or UTF-16 with BOM; a line that is not valid text becomes an
error of its own (by line number) instead of spoiling the file, and reads as an empty line. A
file without any LF ends its lines with CR (old Mac, some exporters).
"""

from __future__ import annotations

import codecs
import io
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from gpu_companion.core.common.i18n import _

CHUNK = 1 << 20  # bytes read at a time


def _open(source: bytes | Path) -> BinaryIO:
    return io.BytesIO(source) if isinstance(source, bytes) else source.open("rb")


def _split(stream: BinaryIO, eol: bytes) -> Iterator[bytes]:
    """The stream's lines without `eol`, the last one (after the last `eol`) included even
    when empty, as `bytes.split` gives them."""
    rest = b""
    while chunk := stream.read(CHUNK):
        parts = (rest + chunk).split(eol)
        rest = parts.pop()
        yield from parts
    yield rest


class CsvSource:
    """The lines of a file (a path, or bytes already read) as text, each ending in "\\n", for
    `csv.reader`; `bad` collects the lines that are not text (line number: why)."""

    def __init__(self, source: bytes | Path) -> None:
        self.source = source
        self.bad: dict[int, str] = {}
        self.blank = True  # nothing but whitespace (or nothing at all)
        self.utf16 = False
        lf = cr = 0
        with _open(source) as stream:
            first = True
            while chunk := stream.read(CHUNK):
                if first:
                    self.utf16 = chunk.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
                    first = False
                lf += chunk.count(b"\n")
                cr += 0 if lf else chunk.count(b"\r")
                self.blank = self.blank and not chunk.strip()
        self.eol = b"\n" if lf else b"\r"
        self.line_count = (lf or cr) + 1  # an estimate for UTF-16 (and a CR inside a cell)

    def lines(self) -> Iterator[str]:
        """One pass over the file (call again for another); `bad` is filled as it goes."""
        self.bad.clear()
        if self.utf16:
            yield from self._utf16()
            return
        with _open(self.source) as stream:
            for n, raw in enumerate(_split(stream, self.eol), start=1):
                if n == 1:
                    raw = raw.removeprefix(codecs.BOM_UTF8)
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    self.bad[n] = _(
                        "not UTF-8 text (byte {byte} at column {column}); save the file as UTF-8 "
                        "and import it again"
                    ).format(byte=f"0x{raw[exc.start]:02x}", column=exc.start + 1)
                    line = ""
                yield line + "\n"

    def _utf16(self) -> Iterator[str]:
        """UTF-16 (rare: some spreadsheets' "Unicode text"), decoded whole."""
        with _open(self.source) as stream:
            data = stream.read()
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError:
            self.bad[1] = _("the file starts as UTF-16 but is not; save it as UTF-8")
            yield "\n"
            return
        text = text if "\n" in text else text.replace("\r", "\n")
        for line in text.split("\n"):
            yield line + "\n"
