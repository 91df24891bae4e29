"""A host whose command output never ends cannot fill memory during a release check: each
stream of `ctx.run` stops at MAX_OUTPUT_BYTES with a message (real sshd)."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.release.config import ChecklistConfig
from gpu_companion.core.release.context import MAX_OUTPUT_BYTES
from tests.integration.release.conftest import make_ctx

pytestmark = pytest.mark.sshd


@pytest.mark.parametrize("argv", [["yes"], ["sh", "-c", "yes >&2"], ["cat", "/dev/zero"]])
def test_endless_output_is_cut_with_a_message(box, argv) -> None:  # type: ignore[no-untyped-def]
    ctx = make_ctx(box, ChecklistConfig())
    tracemalloc.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(UserError, match=f"more than {MAX_OUTPUT_BYTES // 1024} KiB"):
            ctx.run(argv, timeout=20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        ctx.close()
    assert time.monotonic() - t0 < 15
    assert peak < 8 * MAX_OUTPUT_BYTES, peak
    assert ctx.run(["echo", "ok"]).out == "ok\n"  # a new connection works afterwards
    ctx.close()
