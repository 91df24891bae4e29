# ruff: noqa: F811  (the fixtures come from tests/harness/autorelease.py)
"""What a user sets for auto-release on the Release page and the Hosts page: the policy the page
saves is the one the AutoReleaseService loads; a platform without a provider account has its own
release and verify commands, whose dry run shows the argv and the real output of a stand-in CLI
on PATH and runs only the verify command; a platform with a vast.ai account is released through
it, and "Check the account" reads the instance back from a local server that answers like
vast.ai's API."""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import replace

import pytest
from PySide6.QtWidgets import QDialog, QLineEdit

from gpu_companion.core.autorelease.policy import Policy
from gpu_companion.core.autorelease.service import load_policy
from gpu_companion.core.hosts.registry import Host, Platform
from gpu_companion.core.providers.custom import CustomCommands
from gpu_companion.ui.common import worker
from gpu_companion.ui.release.dialogs import ChecklistSettingsDialog
from gpu_companion.ui.release.policy_dialog import PolicyDialog
from tests.harness.autorelease import calls, vast_api  # noqa: F401  (a fixture)


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
            if name in ("enabled", "budget"):
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
                  action="stop", budget=True)  # fmt: skip
    page.policy_btn.click()
    assert load_policy(ctx.store, rented_host.id) == Policy(
        idle_minutes=20, idle_util_pct=8, idle_power_share=0.25, stall_minutes=40,
        stall_util_pct=95, finished_session="train", runtime_grace_minutes=15,
        forgotten_hours=6, notice_minutes=5, action="stop", on_budget=True,
    )  # fmt: skip
    assert page.policy_label.text().startswith("Auto-stop: on (idle 20 min, stalled 40 min")
    assert "budget used up" in page.policy_label.text()  # no rule acts unseen
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
    return ChecklistSettingsDialog(ctx.release.settings, host, page, ctx.release.accounts)


@pytest.fixture
def mycloud(tmp_path, monkeypatch):  # type: ignore[no-untyped-def]
    """`mycloud` on PATH, a custom platform's CLI: records its argv; `show ID` answers a table
    with the instance RUNNING, anything else a line."""
    bin_dir = tmp_path / "mycloud-bin"
    bin_dir.mkdir()
    log = tmp_path / "mycloud-calls.jsonl"
    script = bin_dir / "mycloud"
    script.write_text(
        "#!/usr/bin/env python3\nimport json, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"
        "if sys.argv[1:2] == ['show']:\n"
        "    print('ID    STATUS   GPU')\n"
        "    print(sys.argv[2] + '  RUNNING  RTX_4090')\n"
        "else:\n"
        "    print('deleting ' + sys.argv[-1])\n"
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def mycloud_calls(log) -> list[list[str]]:  # type: ignore[no-untyped-def]
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


MYCLOUD = CustomCommands(
    "mycloud delete {instance_id} --yes", "mycloud show {instance_id}", "not found", "RUNNING"
)


def _fill(box, commands: CustomCommands) -> None:  # type: ignore[no-untyped-def]
    box.release.setText(commands.release)
    box.verify.setText(commands.verify)
    box.gone_when.setText(commands.gone_when)
    box.running_when.setText(commands.running_when)


def _test(box, qtbot) -> str:  # type: ignore[no-untyped-def]
    box.test_btn.click()
    qtbot.waitUntil(lambda: not box.busy(), timeout=30_000)
    return box.output.toPlainText()


def test_the_dry_run_shows_the_argv_and_only_runs_the_verify_command(
    window, ctx, rented_host, mycloud, qtbot
):
    page = window.navigate("release")
    page.open_host("vast-4090")
    dialog = _settings(ctx, rented_host, page)
    box = dialog.provider
    assert box.editable() and box.account is None  # no provider account: the platform's commands
    assert box.test_btn.text() == "Test the command"
    assert "{instance_id}, {alias}, {hostname}, {port}, {user}" in box.hint.text()
    assert "Instance id of vast-4090: 4242" in box.instance.text()
    _fill(box, MYCLOUD)
    text = _test(box, qtbot)
    assert "Release would run: mycloud delete 4242 --yes" in text
    assert "Nothing was released or stopped." in text
    assert "Verify call: mycloud show 4242 (exit 0):" in text
    assert "4242  RUNNING  RTX_4090" in text  # the stand-in's own output
    assert mycloud_calls(mycloud) == [["show", "4242"]]  # nothing deleted
    dialog.save()
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert ctx.release.settings.commands(rented_host.platform_id) == MYCLOUD
    reopened = _settings(ctx, rented_host, page).provider
    assert reopened.commands() == MYCLOUD
    worker.wait_all()


def test_the_dry_run_and_the_save_say_what_is_wrong(window, ctx, rented_host, qtbot, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no mycloud installed
    page = window.navigate("release")
    dialog = _settings(ctx, rented_host, page)
    box = dialog.provider
    _fill(box, MYCLOUD)
    text = _test(box, qtbot)
    assert "Release would run: mycloud delete 4242 --yes" in text
    assert "The command 'mycloud' was not found on this computer." in text

    # the providers' own CLIs are refused: they can answer "Aborted." and exit 0
    _fill(box, replace(MYCLOUD, release="vastai destroy instance {instance_id}"))
    text = _test(box, qtbot)
    assert text.startswith("The command cannot run: The vast.ai CLI cannot be trusted")
    assert "add a vast.ai provider account instead" in text
    dialog.save()
    assert dialog.result() != QDialog.DialogCode.Accepted
    assert dialog.error.isVisibleTo(dialog)
    assert "add a vast.ai provider account instead" in dialog.error.text()
    assert ctx.release.settings.commands(rented_host.platform_id) == CustomCommands()

    # a release command that could never be confirmed
    _fill(box, CustomCommands("mycloud delete {instance_id}"))
    dialog.save()
    assert dialog.result() != QDialog.DialogCode.Accepted
    assert "needs a read-only verify command" in dialog.error.text()
    assert ctx.release.settings.commands(rented_host.platform_id) == CustomCommands()

    _fill(box, replace(MYCLOUD, verify="mycloud show {instance}"))  # a typo in the placeholder
    assert "Unknown placeholder" in _test(box, qtbot)

    no_id = ctx.registry.save_host(Host("box", "198.51.100.4", 22, "root",
                                        rented_host.platform_id))  # fmt: skip
    box = _settings(ctx, no_id, page).provider
    assert "box has no instance id yet" in box.instance.text()
    _fill(box, MYCLOUD)
    assert "The command cannot run: box has no instance id" in _test(box, qtbot)
    worker.wait_all()


@pytest.mark.keyring
def test_a_platform_with_a_provider_account_is_released_through_it(
    window, ctx, rented_host, keyring_backend, vast_api, qtbot
):
    ctx.vault.backend = keyring_backend
    ctx.vault.service = f"gpu-companion-uitest-{uuid.uuid4().hex[:8]}"
    account = ctx.providers.add("vast.ai", vast_api.api_key, platform="vast.ai")
    try:
        page = window.navigate("release")
        page.open_host("vast-4090")
        dialog = _settings(ctx, rented_host, page)
        box = dialog.provider
        assert not box.editable() and box.account == account
        assert box.summary.text() == (
            "Released through the vast.ai API account (vast.ai): the instance is read back "
            "until the provider reports it gone."
        )
        assert dialog.findChild(QLineEdit, "releaseCommand") is None  # no template to edit
        assert box.test_btn.text() == "Check the account"
        text = _test(box, qtbot)
        assert text.startswith("vast.ai reports instance 4242: running.")
        assert "$2.40/h while running" in text
        assert calls(vast_api) == []  # only read: nothing destroyed or stopped
        dialog.save()
        assert dialog.result() == QDialog.DialogCode.Accepted
        assert ctx.release.settings.commands(rented_host.platform_id) == CustomCommands()

        del vast_api.instances[4242]
        assert _test(box, qtbot) == "vast.ai has no instance 4242 (it reports it gone)."
        vast_api.api_key = "rotated-key-0123456789"  # the stored key is refused now
        assert "vast.ai refused the API key (HTTP 401)" in _test(box, qtbot)
    finally:
        ctx.providers.remove(account)
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
