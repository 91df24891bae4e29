"""`plain`: whatever a host prints, nothing a terminal acts on survives; `json_text` is JSON."""

from __future__ import annotations

import json
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_companion.core.common.notifier import Level, Message
from gpu_companion.core.common.plain import json_text, plain, plain_line


def test_osc_csi_and_controls_are_dropped_text_stays() -> None:
    assert plain("a\x1b]52;c;aGVsbG8=\x07b") == "ab"  # clipboard write
    assert plain("a\x1b]0;title\x1b\\b") == "ab"  # window title, ST-terminated
    assert plain("\x1b[2J\x1b[Hclear") == "clear"  # clear screen, cursor home
    assert plain("x\x9b31my\x9d0;t\x9cz") == "xyz"  # 8-bit CSI and OSC
    assert plain("tab\tnew\nline\r\x00\x7f") == "tab\tnew\nline"
    assert plain("café 数据 ✓") == "café 数据 ✓"
    assert plain_line("two\nlines") == "two lines"


def test_a_notifier_message_quoting_a_host_is_plain() -> None:
    m = Message(Level.ERROR, "rsync: \x1b]52;c;eA==\x07failed \x1b[31mred")
    assert m.text == "rsync: failed red"


def test_json_text_never_writes_nan_or_infinity() -> None:
    text = json_text({"power": float("inf"), "util": [float("nan"), 1.5]}, indent=2)
    assert json.loads(text) == {"power": None, "util": [None, 1.5]}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_fuzz_nothing_a_terminal_acts_on_survives(text: str) -> None:
    out = plain(text)
    assert not any(ord(c) < 32 and c not in "\n\t" for c in out)
    assert not any(0x7F <= ord(c) <= 0x9F for c in out)


def test_linear_on_a_flood() -> None:
    flood = ("\x1b]52;c;" + "A" * 1000 + "\x07" + "text " * 200) * 200
    start = time.process_time()
    assert "\x1b" not in plain(flood)
    assert time.process_time() - start < 2
