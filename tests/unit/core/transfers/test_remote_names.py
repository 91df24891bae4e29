"""Names and modes from a rented host: what passes as one path component, what a file keeps."""

from __future__ import annotations

import os

import pytest

from gpu_companion.core.transfers.remote_names import (
    UnsafeRemoteName,
    check_remote_name,
    decode_name,
    display_name,
    inside,
    remote_bytes,
    safe_mode,
)


@pytest.mark.parametrize("name", ["", ".", "..", "../../x", "/abs/x", "a/b", "a\0b", "x/.."])
def test_names_that_leave_the_folder_are_refused_and_named(name: str) -> None:
    with pytest.raises(UnsafeRemoteName) as info:
        check_remote_name(name, "/data")
    assert info.value.name == name and "/data" in info.value.message
    assert "\0" not in info.value.message  # shown escaped, never raw


@pytest.mark.parametrize("name", ["ok.txt", "..hidden", "a..b", "with space", "ünï ✓", "-x"])
def test_ordinary_names_pass(name: str) -> None:
    assert check_remote_name(name, "/data") == name


def test_names_that_are_not_utf8_round_trip_to_the_same_bytes() -> None:
    raw = b"caf\xe9 \xff.bin"
    name = decode_name(raw)
    assert remote_bytes(name) == raw == os.fsencode(name)
    assert display_name(name) == "caf\ufffd \ufffd.bin"


@pytest.mark.parametrize(
    ("mode", "kept"),
    [
        (0o104777, 0o755),
        (0o2775, 0o755),
        (0o1777, 0o755),
        (0o644, 0o644),
        (0o600, 0o600),
        (None, 0o644),
    ],
)
def test_setuid_setgid_sticky_and_group_other_write_are_dropped(
    mode: int | None, kept: int
) -> None:
    assert safe_mode(mode) == kept


def test_inside_follows_links(tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path / "dl"
    root.mkdir()
    os.symlink(tmp_path, root / "up")
    assert inside(str(root), str(root / "a" / "b"))
    assert not inside(str(root), str(root / "up" / "x"))
    assert not inside(str(root), str(root / ".." / "x"))
