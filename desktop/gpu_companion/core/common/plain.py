"""Host text made safe to print: a rented host's output (process names, rsync errors, file names,
nvidia-smi fields) reaches a terminal or a JSON reader as data, never as control.

`plain` drops what a terminal would act on: ESC sequences (CSI, OSC such as the clipboard write
OSC 52 or the title OSC 0, DCS/APC/PM/SOS strings), C1 controls and C0 controls other than newline
and tab. `json_text` is `json.dumps` that never writes NaN or Infinity (not JSON): they become null.
"""

from __future__ import annotations

import math
import re
from typing import Any

# ESC [ ... final (CSI), ESC ] ... BEL or ST (OSC), ESC P/X/^/_ ... ST (DCS, SOS, PM, APC), any
# other two-byte ESC sequence; their 8-bit forms (CSI 0x9b, OSC 0x9d, DCS 0x90, ...) likewise.
# An unterminated string runs to the end of the text (a terminal would swallow it all too).
_SEQUENCE_RE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x9d\x90\x98\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain(text: str) -> str:
    """`text` without escape sequences and control characters (newline and tab are kept; a
    carriage return is dropped: it would let a host overwrite what was printed before it)."""
    if text.isprintable():
        return text
    return _CONTROL_RE.sub("", _SEQUENCE_RE.sub("", text))


def plain_line(text: str) -> str:
    """`plain` on one line: a newline from the host becomes a space."""
    return plain(text).replace("\n", " ")


def finite(value: Any) -> Any:
    """`value` with every float that is NaN or infinite replaced by None, through dicts,
    lists and tuples."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value


def json_text(value: Any, **kwargs: Any) -> str:
    """Valid JSON whatever a host sent: non-finite numbers as null (`allow_nan=False` proves it)."""
    import json  # here: the notifier imports this module before the window's first paint

    return json.dumps(finite(value), allow_nan=False, **kwargs)
