"""The transfer command's progress: a redrawn line on a terminal, state lines on a pipe."""

from __future__ import annotations

import io

from gpu_companion.commands.transfer import _Progress
from gpu_companion.core.transfers.headless import BatchResult
from gpu_companion.core.transfers.job import JobState, TransferJob


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def job(**kw) -> TransferJob:  # type: ignore[no-untyped-def]
    return TransferJob("gpu1", "upload", "/d", "r", id=7, **kw)


def test_a_terminal_gets_one_redrawn_line_and_messages_on_their_own() -> None:
    stream = Tty()
    progress = _Progress(stream)
    progress.width = 80
    progress(job(state=JobState.RUNNING, message="rsync on both sides"))
    sizes = {"bytes_done": 500_000, "bytes_total": 1_000_000, "rate_bps": 2_000_000}
    progress(job(state=JobState.RUNNING, message="rsync on both sides", eta_s=3,
                 current_file="a b.bin", **sizes))  # fmt: skip
    text = stream.getvalue()
    assert text.count("\n#7 rsync on both sides\n") == 1
    last = text.rsplit("\r", 1)[1]
    assert last.startswith("#7 running  50%  500.0 KB / 1.0 MB  2.0 MB/s  3 s left  a b.bin")
    assert len(last) == 80


def test_a_pipe_gets_a_line_per_change() -> None:
    stream = io.StringIO()
    progress = _Progress(stream)
    for j in (job(state=JobState.RUNNING), job(state=JobState.RUNNING, bytes_done=5),
              job(state=JobState.DONE, message="Verified.")):  # fmt: skip
        progress(j)
    assert stream.getvalue() == "#7 running\n#7 done: Verified.\n"


def test_exit_codes() -> None:
    done, failed = job(state=JobState.DONE), job(state=JobState.FAILED)
    assert BatchResult([done, done]).exit_code == 0
    assert BatchResult([failed]).exit_code == 1
    assert BatchResult([done, failed]).exit_code == 3
    assert BatchResult([done, job(state=JobState.PAUSED)], interrupted=True).exit_code == 130
