"""Real rsync outputs in ../shared/fixtures/rsync parse to the values a person reads in them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from gpu_companion.core.transfers.rsync.errors import (
    explain_exit_code,
    last_error_line,
    parse_error_line,
)
from gpu_companion.core.transfers.rsync.progress import (
    FileStarted,
    Progress,
    ProgressEvent,
    RsyncMessage,
    RsyncProgressParser,
    parse_progress,
    parse_stats,
)

KIB = 1024.0
MIB = 1024.0**2

# Files whose first line is the user's shell command (SOURCES.md says so), not rsync output.
COMMAND_FIRST_LINE = {
    "progress2-human-ir-chk-ctrl-c-ohmyzsh5867.txt",
    "progress-per-file-human-ir-chk-ohmyzsh5867.txt",
    "progress-per-file-avv-same-line-ubuntu.txt",
}


def rsync_output(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if path.name in COMMAND_FIRST_LINE:
        text = text.split("\n", 1)[1]
    return text


def progresses(events: list[ProgressEvent]) -> list[Progress]:
    return [e for e in events if isinstance(e, Progress)]


@dataclass(frozen=True)
class Seen:
    """One progress line as a person reads it: bytes, %, rate, time, xfr#, remaining/total."""

    bytes_done: int
    percent: int
    rate_bps: float
    seconds: int | None  # ETA on redraws, elapsed on `xfr#` lines
    xfr: int | None = None
    remaining: int | None = None
    total: int | None = None
    incremental: bool = False


def check(p: Progress, seen: Seen) -> None:
    assert p.bytes_done == seen.bytes_done
    assert p.percent == seen.percent
    assert p.rate_bps == pytest.approx(seen.rate_bps)
    assert (p.elapsed_s if p.is_final else p.eta_s) == seen.seconds
    assert (p.xfr, p.to_check_remaining, p.to_check_total) == (seen.xfr, seen.remaining, seen.total)
    assert p.incremental_scan is seen.incremental


PROGRESS: dict[str, tuple[list[str], list[Seen]]] = {
    "progress2-adafruit7-final-99pct.txt": (
        [],
        [Seen(15_446_610_948, 99, 10.48 * MIB, 23 * 60 + 26, 128025, 0, 189353)],
    ),
    "progress2-human-ir-chk-ctrl-c-ohmyzsh5867.txt": (
        [],
        [Seen(10_890_000_000, 26, 27.12 * MIB, 6 * 60 + 51, 8042, 2174, 10561, True)],
    ),
    "progress2-human-ir-chk-unixse215271.txt": (
        [],
        [Seen(105_450_000, 13, 602.83 * KIB, 2 * 60 + 50, 495, 1020, 3825, True)],
    ),
    "progress2-mainframer168.txt": (
        [],
        [
            Seen(49, 0, 0.0, 0, 1, 0, 1618),
            Seen(152_922_494, 99, 19.38 * MIB, 7, 16291, 0, 17711),
        ],
    ),
    "progress-per-file-avv-same-line-ubuntu.txt": (
        ["backup.20210402.tgz.aa", "backup.20210402.tgz.ab"],
        [
            Seen(2_097_152_000, 100, 200.50 * MIB, 9, 1, 1, 2),
            Seen(1_813_868_515, 100, 12.16 * MIB, 2 * 60 + 22, 2, 0, 2),
        ],
    ),
    "progress-per-file-human-ir-chk-ohmyzsh5867.txt": (
        [
            "phone/DCIM/Camera/IMG_20150410_124506.dng",
            "phone/DCIM/Camera/IMG_20150410_124506.jpg",
            "phone/DCIM/Camera/IMG_20150410_124528.dng",
            "phone/DCIM/Camera/IMG_20150410_124528.jpg",
            "phone/DCIM/Camera/IMG_20150411_115839.dng",
        ],
        [
            Seen(16_370_000, 100, 14.88 * MIB, 1, 6035, 2539, 8915, True),
            Seen(1_660_000, 100, 4.77 * MIB, 0, 6036, 2538, 8915, True),
            Seen(16_370_000, 100, 16.93 * MIB, 0, 6037, 2537, 8915, True),
            Seen(1_680_000, 100, 1.40 * MIB, 1, 6038, 2536, 8915, True),
            Seen(16_370_000, 100, 31.31 * MIB, 0, 6039, 2535, 8915, True),
        ],
    ),
    "progress-per-file-human-readable-zw963.txt": (
        ["xray_server.json", "v2ray_server.json", "xray.service", "xray@.service"],
        [
            Seen(2_310, 100, 914.06 * KIB, 0, 1, 0, 1),
            Seen(1_890, 100, 501.95 * KIB, 0, 1, 0, 1),
            Seen(449, 100, 0.0, 0, 1, 0, 1),
            Seen(445, 100, 0.0, 0, 1, 0, 1),
        ],
    ),
    "progress-per-file-old-3.0-format-xfer-to-check.txt": (
        ["Carbon_Billing_oleg.iso"],
        [Seen(2_940_602_368, 100, 31.61 * MIB, 60 + 28, 1, 0, 1)],
    ),
}

# Every `rsync error:` line of each file, in order: (code, role, version).
ERRORS: dict[str, list[tuple[int, str, str]]] = {
    "issue-datasafehaven286-packet-write-wait-code255-3.1.2.txt": [(255, "sender", "3.1.2")],
    "issue-homebrew129732-code12-3.2.7-generator-sender.txt": [
        (12, "generator", "3.2.7"),
        (12, "sender", "3.2.7"),
    ],
    "issue-mockspacestation30-code23-partial-3.1.2.txt": [(23, "receiver", "3.1.2")],
    "issue-rpki420-rsyncd-syslog-code12-3.0.9.txt": [(12, "receiver", "3.0.9")],
    "issue-rsync266-code12-and-255-broken-pipe-3.2.3dev.txt": [
        (12, "receiver", "v3.2.3-133-g512acd12"),
        (255, "generator", "v3.2.3-133-g512acd12"),
    ],
    "issue-rsync449-comment-locale-dot-thousands-comma-decimal-3.2.7.txt": [
        (255, "sender", "3.2.7")
    ],
    "issue-rsync449-ssh-drop-midfile-progress-3.2.7dev.txt": [
        (255, "sender", "3.2.7-80-g509b6b59")
    ],
    "issue-rsyncserverapp2-code12-3.1.2-receiver.txt": [(12, "receiver", "3.1.2")],
    "issue-rsyncserverapp5-code12-3.2.3-progress-sender.txt": [(12, "sender", "3.2.3")],
    "issue-swish4-code12-macos-2.6.9.txt": [(12, "sender", "2.6.9")],
    "issue-termux2083-code10-socket-io-3.1.3.txt": [(10, "sender", "3.1.3")],
    "issue-wsl3285-code12-midtransfer-3.1.1.txt": [
        (12, "receiver", "3.1.1"),
        (12, "generator", "3.1.1"),
    ],
}


def files_in(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.is_file())


def test_every_progress_file_is_covered(shared_fixtures: Path) -> None:
    assert files_in(shared_fixtures / "rsync") == sorted(PROGRESS)


def test_every_error_file_is_covered(shared_fixtures: Path) -> None:
    assert files_in(shared_fixtures / "rsync" / "errors") == sorted(ERRORS)


@pytest.mark.parametrize("name", sorted(PROGRESS))
def test_progress_file(shared_fixtures: Path, name: str) -> None:
    names, seen = PROGRESS[name]
    events = parse_progress(rsync_output(shared_fixtures / "rsync" / name))
    assert [e.name for e in events if isinstance(e, FileStarted)] == names
    found = progresses(events)
    assert len(found) == len(seen)
    for p, s in zip(found, seen, strict=True):
        check(p, s)
    if names:  # per-file runs: each progress line belongs to the name before it
        assert [p.current_file for p in found] == names


@pytest.mark.parametrize("name", sorted(PROGRESS) + [f"errors/{n}" for n in sorted(ERRORS)])
def test_byte_by_byte_feeding_matches_whole_file(shared_fixtures: Path, name: str) -> None:
    text = (shared_fixtures / "rsync" / name).read_text(encoding="utf-8")
    parser = RsyncProgressParser()
    events: list[ProgressEvent] = []
    for ch in text:
        events += parser.feed(ch)
    events += parser.finish()
    assert events == parse_progress(text)


def test_ctrl_c_echo_is_a_message_not_progress(shared_fixtures: Path) -> None:
    name = "progress2-human-ir-chk-ctrl-c-ohmyzsh5867.txt"
    events = parse_progress(rsync_output(shared_fixtures / "rsync" / name))
    assert events[-1] == RsyncMessage("^C", "info")


def test_summary_lines_of_per_file_runs(shared_fixtures: Path) -> None:
    text = rsync_output(shared_fixtures / "rsync" / "progress-per-file-avv-same-line-ubuntu.txt")
    stats = parse_stats(text)
    assert stats.speedup == pytest.approx(1.0)
    assert stats.number_of_files is None  # no --stats block in that run
    old = rsync_output(
        shared_fixtures / "rsync" / "progress-per-file-old-3.0-format-xfer-to-check.txt"
    )
    assert parse_stats(old).speedup == pytest.approx(1.0)


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_file(shared_fixtures: Path, name: str) -> None:
    text = (shared_fixtures / "rsync" / "errors" / name).read_text(encoding="utf-8")
    parsed = [e for line in text.splitlines() if (e := parse_error_line(line)) is not None]
    assert [(e.code, e.role, e.version) for e in parsed] == ERRORS[name]
    assert all(e.level == "error" and e.source_line is not None for e in parsed)
    last = last_error_line(text)
    assert last is not None and last.code == ERRORS[name][-1][0]
    info = explain_exit_code(last.code, text)
    expected = {10: "connection", 12: "connection", 23: "partial", 255: "connection"}
    assert info.category == expected[last.code]
    assert info.retryable is (last.code != 23)
    events = parse_progress(text)
    error_texts = {m.text for m in events if isinstance(m, RsyncMessage) and m.level == "error"}
    assert all(any(f"(code {e.code})" in t for t in error_texts) for e in parsed)


def test_absolute_source_paths(shared_fixtures: Path) -> None:
    errors = shared_fixtures / "rsync" / "errors"
    mac = last_error_line((errors / "issue-swish4-code12-macos-2.6.9.txt").read_text())
    assert mac is not None
    assert mac.source_file == (
        "/BuildRoot/Library/Caches/com.apple.xbs/Sources/rsync/rsync-51/rsync/io.c"
    )
    assert mac.source_line == 453
    termux = last_error_line((errors / "issue-termux2083-code10-socket-io-3.1.3.txt").read_text())
    assert termux is not None
    assert termux.source_file == "/home/builder/.termux-build/rsync.src/io.c"
    assert termux.text == "error in socket IO"


def test_ssh_disconnect_is_split_off_a_progress_line(shared_fixtures: Path) -> None:
    name = "issue-rsync449-ssh-drop-midfile-progress-3.2.7dev.txt"
    events = parse_progress((shared_fixtures / "rsync" / "errors" / name).read_text())
    i = next(i for i, e in enumerate(events) if isinstance(e, Progress))
    assert events[i - 1] == FileStarted("movie.mp4")
    check(progresses(events)[0], Seen(195_035_136, 3, 93.03 * MIB, 56))
    assert events[i + 1] == RsyncMessage("client_loop: send disconnect: Broken pipe", "error")
    assert (
        RsyncMessage(
            "Warning: Permanently added 'mini' (ED25519) to the list of known hosts.", "warning"
        )
        in events
    )


def test_locale_digits_and_packet_write_wait(shared_fixtures: Path) -> None:
    name = "issue-rsync449-comment-locale-dot-thousands-comma-decimal-3.2.7.txt"
    events = parse_progress((shared_fixtures / "rsync" / "errors" / name).read_text())
    found = progresses(events)
    check(found[0], Seen(962_408_775_680, 48, 112.95 * MIB, 2 * 3600 + 29 * 60 + 34))
    check(found[1], Seen(1_765_917_753_344, 88, 80.62 * MIB, 47 * 60 + 20))
    assert all(p.current_file == "sdc" for p in found)  # named by the itemized `<f.stp.g...` line
    i = events.index(found[0])
    assert events[i + 1] == RsyncMessage(
        "packet_write_wait: Connection to 184.146.206.172 port 3177: Broken pipe", "error"
    )


def test_packet_write_wait_on_its_own_line(shared_fixtures: Path) -> None:
    name = "issue-datasafehaven286-packet-write-wait-code255-3.1.2.txt"
    events = parse_progress((shared_fixtures / "rsync" / "errors" / name).read_text())
    assert [m.level for m in events if isinstance(m, RsyncMessage)] == ["error"] * 3
    assert not progresses(events)
