"""Returned files: parallel's --cleanup is never asked for them (it deletes after a failed copy
back); what comes back is checked against the host's own sums, and names from the host are
data."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.fleet.runs import HostSlots, Runs, RunSpec, _verify_returns


def _spec(**kw) -> RunSpec:  # type: ignore[no-untyped-def]
    return RunSpec(hosts=(HostSlots("a"),), command="work {}", inputs=("1",), **kw)


def test_no_cleanup_with_returns_and_the_sums_come_back_too(tmp_path: Path) -> None:
    argv = Runs(tmp_path, ["ssh"]).argv("r1", _spec(returns=("{}.out",), transfer_inputs=True))
    assert "--cleanup" not in argv
    returns = [argv[i + 1] for i, a in enumerate(argv) if a == "--return"]
    assert returns == ["{}.out", ".gpu-companion-r1-{#}.sha256"]
    assert "sha256sum -- {}.out > .gpu-companion-r1-{#}.sha256" in argv[-1]
    assert argv[-1].startswith("( work {}\n); _gpuc_rc=$?;") and argv[-1].endswith("$_gpuc_rc")


def test_inputs_alone_are_still_cleaned_by_parallel(tmp_path: Path) -> None:
    argv = Runs(tmp_path, ["ssh"]).argv("r1", _spec(transfer_inputs=True))
    assert "--cleanup" in argv and argv[-1] == "work {}"


@pytest.mark.parametrize("pattern", ["/abs/{}.out", "../{}.out", "a/../../x"])
def test_a_return_outside_the_hosts_home_is_refused(pattern: str) -> None:
    with pytest.raises(UserError):
        _spec(returns=(pattern,)).validated()


def _sums(out: Path, lines: list[str]) -> None:
    (out / ".s").write_text("".join(f"{line}\n" for line in lines))


def test_verified_mismatched_missing_and_hostile(tmp_path: Path) -> None:
    (tmp_path / "r.out").write_bytes(b"data")
    good = hashlib.sha256(b"data").hexdigest()
    _sums(tmp_path, [f"{good}  r.out"])
    assert _verify_returns(tmp_path, ".s", 1, "a") == (["r.out"], "")
    _sums(tmp_path, [f"{'0' * 64}  r.out"])
    assert "came back different" in _verify_returns(tmp_path, ".s", 1, "a")[1]
    _sums(tmp_path, [f"{good}  gone.out"])
    assert "gone.out did not come back from a" in _verify_returns(tmp_path, ".s", 1, "a")[1]
    _sums(tmp_path, [f"{good}  ../../etc/passwd"])
    assert "outside the run" in _verify_returns(tmp_path, ".s", 1, "a")[1]
    _sums(tmp_path, [f"{good}  r.out"])
    assert "left 1 of 2 result files" in _verify_returns(tmp_path, ".s", 2, "a")[1]
    (tmp_path / ".s").unlink()
    reason = _verify_returns(tmp_path, ".s", 1, "a")[1]
    assert "did not come back from a" in reason and "kept on a" in reason
