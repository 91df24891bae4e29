"""Job validation, remote path rules and exclude matching."""

from __future__ import annotations

import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.transfers.job import (
    JobState,
    TransferJob,
    TransferOptions,
    is_excluded,
    validate_remote_path,
)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("/workspace/out", "/workspace/out"),
        ("~/runs", "runs"),
        ("~", "."),
        ("-dash dir/ünï 'q'", "-dash dir/ünï 'q'"),
        ("  data  ", "data"),
    ],
)
def test_remote_paths_accepted(raw: str, clean: str) -> None:
    assert validate_remote_path(raw) == clean


@pytest.mark.parametrize(
    ("raw", "words"),
    [("", "Choose"), ("a\nb", "control"), ("x\x00", "control"), ("~bob/x", "~user")],
)
def test_remote_paths_refused_with_a_message(raw: str, words: str) -> None:
    with pytest.raises(ValidationError, match=words) as info:
        validate_remote_path(raw)
    assert info.value.field == "remote_path"


def test_job_validation_messages() -> None:
    with pytest.raises(ValidationError, match="local"):
        TransferJob("h", "upload", " ", "x").validated()
    with pytest.raises(ValidationError, match="negative"):
        TransferJob("h", "upload", "/a", "x", TransferOptions(bwlimit_kbps=-1)).validated()
    with pytest.raises(ValidationError, match="direction"):
        TransferJob("h", "sideways", "/a", "x").validated()  # type: ignore[arg-type]


def test_excludes_match_any_component_like_rsync() -> None:
    ex = (".git", "__pycache__", "*.tmp")
    assert is_excluded(".git/HEAD", ex)
    assert is_excluded("pkg/__pycache__/m.pyc", ex)
    assert is_excluded("a/b.tmp", ex)
    assert is_excluded("x/.rsync-partial/w", ())  # partial data never travels
    assert not is_excluded("a/b.tmpl", ex)
    assert not is_excluded("gitignore", ex)


def test_options_round_trip_and_progress_figures() -> None:
    opts = TransferOptions(excludes=("a",), bwlimit_kbps=5, delete=True, delete_previewed=True)
    assert TransferOptions.from_json(opts.to_json()) == opts
    job = TransferJob("h", "upload", "/a", "x", bytes_done=50, bytes_total=200, active_s=4.0)
    assert job.percent == 25 and job.mean_rate_bps == 50.0
    assert TransferJob("h", "upload", "/a", "x", state=JobState.DONE).percent == 100
    assert JobState.FAILED.finished and not JobState.PAUSED.finished
