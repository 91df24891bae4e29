# ruff: noqa: F811  (the fixtures come from tests/harness/autorelease.py)
"""What a user sets for auto-release on the Release page and the Hosts page: the policy the page
saves is the one the AutoReleaseService loads; the provider preset's dry run shows the argv and
the real output of a `vastai` stand-in on PATH, and makes only the read-only call."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QDialog

from gpu_companion.core.autorelease.policy import Policy
from gpu_companion.core.autorelease.service import load_policy
from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.ui.common import worker
from gpu_companion.ui.release.dialogs import ChecklistSettingsDialog
from gpu_companion.ui.release.policy_dialog import PolicyDialog
from tests.harness.autorelease import calls, provider_cli  # noqa: F401  (a fixture)


@pytest.fixture
def rented_host(ctx):  # type: ignore[no-untyped-def]
    platform = ctx.registry.save_platform(Platform("vast.ai"))
    return ctx.registry.save_host(
        Host(
            "vast-4090",
            "203.0.113.7",
            41022,
            "root",
            platform.id,
            "RTX 4090",
            1,
            instance_id="4242",
        )  # fmt: skip
    )


def answer_policy(monkeypatch, **fields):  # type: ignore[no-untyped-def]
    """The dialog the page opens, filled in as a user would and saved."""
    seen: list[PolicyDialog] = []

    def fill(dialog: PolicyDialog) -> int:
        seen.append(dialog)
        for name, value in fields.items():
            widget = getattr(dialog, name)
            if name == "enabled":
                widget.setChecked(value)
            elif name == "session":
                widget.setText(value)
            elif name == "action":
                widget.setCurrentIndex(widget.findData(value))
            else:
                widget.setValue(value)
        dialog.save()
        return int(dialog.result())

    monkeypatch.setattr(PolicyDialog, "exec", fill)
    return seen


def test_the_policy_saved_from_the_release_page_is_what_load_policy_reads(
    window, ctx, rented_host, monkeypatch
):
    page = window.navigate("release")
    page.open_host("vast-4090")
    assert page.policy_label.text() == "Auto-release: off"
    answer_policy(monkeypatch, enabled=True, idle=20, idle_util=8, idle_power=25, stall=40,
                  stall_util=95, session="train", grace=15, forgotten=6, notice=5,
                  action="stop")  # fmt: skip
    page.policy_btn.click()
    assert load_policy(ctx.store, rented_host.id) == Policy(
        idle_minutes=20, idle_util_pct=8, idle_power_share=0.25, stall_minutes=40,
        stall_util_pct=95, finished_session="train", runtime_grace_minutes=15,
        forgotten_hours=6, notice_minutes=5, action="stop",
    )  # fmt: skip
    assert page.policy_label.text().startswith("Auto-stop: on (idle 20 min, stalled 40 min")
    # the service's detector runs on the same policy
    assert ctx.autorelease._detector("vast-4090").policy.idle_minutes == 20

    answer_policy(monkeypatch, enabled=False)
    page.policy_btn.click()
    assert load_policy(ctx.store, rented_host.id) is None
    assert page.policy_label.text() == "Auto-release: off"


def test_a_bad_session_name_is_refused_with_a_message_and_nothing_is_lost(
    window, ctx, rented_host, monkeypatch
):
    page = window.navigate("release")
    page.open_host("vast-4090")
    answer_policy(monkeypatch, enabled=True, idle=30)
    page.policy_btn.click()
    before = load_policy(ctx.store, rented_host.id)
    seen = answer_policy(monkeypatch, enabled=True, idle=10, session="train; rm -rf ~")
    page.policy_btn.click()
    assert seen[0].result() != QDialog.DialogCode.Accepted
    assert seen[0].error.isVisibleTo(seen[0]) and "tmux session name" in seen[0].error.text()
    assert load_policy(ctx.store, rented_host.id) == before  # the earlier policy stays


def _settings(ctx, host, page):  # type: ignore[no-untyped-def]
    return ChecklistSettingsDialog(ctx.release.settings, host, page)


def _choose(box, key: str) -> None:  # type: ignore[no-untyped-def]
    idx = box.preset.findData(key)
    box.preset.setCurrentIndex(idx)
    box.preset.activated.emit(idx)


def test_the_dry_run_shows_the_argv_and_the_cli_s_read_only_answer(
    window, ctx, rented_host, provider_cli, qtbot
):
    page = window.navigate("release")
    page.open_host("vast-4090")
    dialog = _settings(ctx, rented_host, page)
    box = dialog.provider
    assert box.preset_key() == ""  # nothing set yet: custom
    assert "Instance id of vast-4090: 4242" in box.instance.text()
    _choose(box, "vast.ai")
    assert dialog.release_command.text() == "vastai destroy instance {instance_id}"
    assert "vastai set api-key" in box.hint.text()
    box.test_btn.click()
    qtbot.waitUntil(lambda: not box.busy(), timeout=30_000)
    text = box.output.toPlainText()
    assert "Release would run: vastai destroy instance 4242" in text
    assert "Stop would run: vastai stop instance 4242" in text
    assert "Read-only check: vastai show instance 4242 (exit 0)" in text
    assert "4242     7781     running" in text  # the stand-in's own output
    assert calls(provider_cli) == [["show", "instance", "4242"]]  # nothing destroyed or stopped
    dialog.save()
    assert ctx.release.settings.release_command(rented_host.platform_id) == (
        "vastai destroy instance {instance_id}"
    )
    reopened = _settings(ctx, rented_host, page)
    assert reopened.provider.preset_key() == "vast.ai"
    worker.wait_all()


def test_the_dry_run_says_what_is_missing(window, ctx, rented_host, qtbot, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no provider CLI installed
    page = window.navigate("release")
    dialog = _settings(ctx, rented_host, page)
    box = dialog.provider
    _choose(box, "runpod")
    box.test_btn.click()
    qtbot.waitUntil(lambda: not box.busy(), timeout=30_000)
    text = box.output.toPlainText()
    assert "Release would run: runpodctl remove pod 4242" in text
    assert "runpodctl is not installed on this computer." in text

    no_id = ctx.registry.save_host(Host("box", "198.51.100.4", 22, "root",
                                        rented_host.platform_id))  # fmt: skip
    box = _settings(ctx, no_id, page).provider
    assert "box has no instance id yet" in box.instance.text()
    _choose(box, "vast.ai")
    box.test_btn.click()
    qtbot.waitUntil(lambda: not box.busy(), timeout=30_000)
    assert "The command cannot run: box has no instance id" in box.output.toPlainText()

    box.command.setText("vastai destroy instance {instance}")  # a typo in the placeholder
    box.test_btn.click()
    qtbot.waitUntil(lambda: not box.busy(), timeout=30_000)
    assert "Unknown placeholder" in box.output.toPlainText()
    worker.wait_all()


def test_the_instance_id_is_shown_and_edited_on_the_edit_host_dialog(ctx, rented_host, window):
    from gpu_companion.ui.hosts.page import HostDialog

    dialog = HostDialog(ctx, rented_host, window)
    assert dialog.instance_id.text() == "4242"
    dialog.instance_id.setText("  98765  ")
    dialog._try_accept()
    assert ctx.registry.host("vast-4090").instance_id == "98765"
    dialog = HostDialog(ctx, ctx.registry.host("vast-4090"), window)
    dialog.instance_id.setText("98\n765")
    dialog._try_accept()
    assert dialog.error.isVisibleTo(dialog)
    assert ctx.registry.host("vast-4090").instance_id == "98765"  # nothing lost
