"""The Runs page over two real sshd hosts: a run started from the dialog, a finished and a failed
shard shown with host and exit code, rerun failed, cancel, and the fleet exports."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import missing_component


@pytest.fixture
def runs_window(fleet, qtbot):  # type: ignore[no-untyped-def]
    from gpu_companion.ui.common import worker
    from gpu_companion.ui.shell.build import build_window

    if shutil.which("parallel") is None:
        missing_component("GNU parallel not installed (Debian: parallel)")
    win = build_window(fleet.services)
    qtbot.addWidget(win)
    win.show()
    yield win
    worker.wait_all()


def test_a_run_from_the_dialog_shows_done_and_failed_shards_then_reruns_the_failed(
    fleet, runs_window, qtbot, tmp_path: Path
):
    from PySide6.QtCore import QTimer

    from gpu_companion.ui.runs.dialogs import NewRunDialog

    page = runs_window.navigate("runs")
    assert page.stack.currentIndex() == 1 and page.runs_model.rowCount() == 0
    fixed = tmp_path / "fixed"

    def fill() -> None:
        dialog = page.findChild(NewRunDialog, "newRunDialog")
        dialog.command.setText(f"if [ {{1}} = 3 ] && [ ! -e {fixed} ]; then exit 4; fi; "
                               "echo ids {1}..{2}")  # fmt: skip
        dialog.range.setText("0:6")
        dialog.shards.setValue(2)
        dialog.retries.setValue(1)
        dialog.accept()

    QTimer.singleShot(0, fill)
    page.buttons["new"].click()
    qtbot.waitUntil(lambda: page.runs_model.rowCount() == 1, timeout=10_000)
    qtbot.waitUntil(lambda: not page.runs_model.row(0).running, timeout=60_000)
    qtbot.waitUntil(lambda: page.shards_model.rowCount() == 2, timeout=5_000)
    states = {page.shards_model.row(i).input: page.shards_model.row(i) for i in range(2)}
    assert states["0:3"].state == "done" and states["3:6"].state == "failed"
    assert states["3:6"].exit_code == 4 and states["3:6"].host in fleet.aliases
    assert "1 done, 1 failed" in page.status.text()
    page.shards_table.selectRow(0)  # the output is read off the GUI thread
    qtbot.waitUntil(lambda: page.output.toPlainText().strip() == "ids 0..3", timeout=5_000)
    assert page.buttons["resume"].isEnabled() and not page.buttons["cancel"].isEnabled()
    _output_follows_a_growing_shard(fleet, page, qtbot)

    fixed.touch()
    page.buttons["resume"].click()
    qtbot.waitUntil(lambda: page.runs_model.rowCount() == 1
                    and page.runs_model.row(0).count("done") == 2, timeout=60_000)  # fmt: skip
    assert not page.buttons["resume"].isEnabled()


def _output_follows_a_growing_shard(fleet, page, qtbot) -> None:  # type: ignore[no-untyped-def]
    """A shard still writing: the reload adds its new lines where the reader is; one that
    logged more than the page holds shows its end and says how much came before."""
    from gpu_companion.core.fleet.runs import SHARD_TAIL_BYTES

    run_id, seq = page.runs_model.row(0).run_id, page.shards_model.row(0).seq
    stdout = fleet.services.runs.root / run_id / "out" / str(seq) / "stdout"
    stdout.write_text("ids 0..3\n" + "".join(f"line {i}\n" for i in range(300)))
    page.reload()
    qtbot.waitUntil(lambda: "line 299" in page.output.toPlainText(), timeout=5_000)
    bar = page.output.verticalScrollBar()
    bar.setValue(bar.maximum() // 2)
    reading = bar.value()
    with stdout.open("a") as f:
        f.write("line 300\n")
    page.reload()
    qtbot.waitUntil(lambda: "line 300" in page.output.toPlainText(), timeout=5_000)
    assert bar.value() == reading and page.output.toPlainText().startswith("ids 0..3")
    bar.setValue(bar.maximum())  # following the end: it stays followed past the tail size
    last = "".join(f"end {i}\n" for i in range(900))
    stdout.write_bytes(b"x" * (SHARD_TAIL_BYTES + 10) + b"\n" + last.encode())
    page.reload()
    qtbot.waitUntil(lambda: page.output.toPlainText().rstrip().endswith("end 899"), timeout=5_000)
    shown = f"[… the first {SHARD_TAIL_BYTES + 11:,} bytes are not shown]\n{last}"
    assert page.output.toPlainText() == shown  # from the first whole line on
    assert 0 < bar.maximum() == bar.value()


def test_a_run_without_a_command_is_refused_in_the_dialog(fleet, runs_window, qtbot):
    from gpu_companion.ui.runs.dialogs import NewRunDialog

    dialog = NewRunDialog(fleet.services.registry.hosts())
    qtbot.addWidget(dialog)
    dialog.accept()
    assert dialog.spec is None and "needs a command" in dialog.error.text()


def test_export_writes_an_inventory_without_keys(fleet, runs_window, tmp_path: Path):
    page = runs_window.navigate("runs")
    out = tmp_path / "inv.yml"
    page.export_to("ansible", out)
    text = out.read_text()
    assert "box-a" in text and "box-b" in text and "PRIVATE KEY" not in text
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    assert "No private key" in page.status.text()


def test_export_replaces_a_link_and_an_open_file_never_writing_through_them(
    fleet, runs_window, tmp_path: Path
):
    page = runs_window.navigate("runs")
    target = tmp_path / "elsewhere.txt"
    target.write_text("not yours\n")
    link = tmp_path / "pools.yaml"
    link.symlink_to(target)
    page.export_to("skypilot", link)
    assert target.read_text() == "not yours\n" and not link.is_symlink()
    assert oct(link.stat().st_mode & 0o777) == "0o600" and "ip:" in link.read_text()
    assert "its comments say how the hosts are reached" in page.status.text()
    script = tmp_path / "start-ray.sh"
    script.write_text("old\n")
    script.chmod(0o666)
    page.export_to("ray-start", script)
    assert oct(script.stat().st_mode & 0o777) == "0o600"
    assert "ray start --head" in script.read_text()
