# ruff: noqa: F811  (provider_cli comes from tests/harness/autorelease.py)
"""One rental, start to bill, as shipped: Services built as `run_gui` builds them, the first-rental
wizard against the harness host (key from the keyring, host key trusted in the wizard, the real
self-check with the nvidia-smi stand-in and CPU torch), the window closed to the tray while the
rental is watched, an idle alert with its cost, checkpoints downloaded on the Transfers page, the
release checklist passed on that evidence, the provider's release command run and the bill on the
Spend page. Only the GPU and the provider's CLI are stand-ins; time moves on the ledger's clock."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from PySide6.QtWidgets import QWizard

from gpu_companion.app import start_services
from gpu_companion.core.common.clock import ManualClock
from gpu_companion.core.common.notifier import Message
from gpu_companion.core.release import ChecklistConfig, ItemState
from gpu_companion.core.transfers.job import JobState
from gpu_companion.core.transfers.presets import backup_dir
from gpu_companion.services import Services, build_services
from gpu_companion.ui.common import worker
from gpu_companion.ui.shell.build import build_window
from gpu_companion.ui.shell.main_window import MainWindow
from gpu_companion.ui.transfers.dialogs import SyncCheckpointsDialog
from gpu_companion.ui.wizard import FirstRentalWizard
from tests.harness.autorelease import calls, vast_api  # noqa: F401  (a fixture)
from tests.journey.test_connections_as_shipped import host_fingerprint
from tests.ui.wizard.test_wizard import SMALL_CHECK, _next

pytestmark = [pytest.mark.sshd, pytest.mark.keyring]

WAIT = 60_000
GPUS, PER_GPU = 8, "2,65"  # typed with a decimal comma, as many users type it
IDLE_MINUTES = 40  # longer than the monitor's default 15: the wizard's choice is the one used


@dataclass
class App:
    services: Services
    window: MainWindow
    clock: ManualClock
    platform: str
    messages: list[Message]


@pytest.fixture
def app(app_paths, keyring_backend, qapp, qtbot, monkeypatch, caplog) -> Iterator[App]:  # type: ignore[no-untyped-def]
    """What `run_gui` runs, in its order and through its own `start_services`: services,
    window, watching, the app's agent, keys, auto-release; the one test seam is the clock, set
    before any service is made."""
    import keyring.backend
    import keyring.core

    # keyring picks its backend once per process: pick again on this test's D-Bus, as a fresh
    # app process would
    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    monkeypatch.delattr(keyring.backend.get_all_keyring, "saved_result", raising=False)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)  # only the app's own agent
    services = build_services(app_paths)
    clock = ManualClock(datetime.now(timezone.utc).replace(microsecond=0))
    services.clock = clock  # the one injected clock: meter, idle stretches, release
    messages: list[Message] = []
    services.notifier.subscribe(messages.append)
    window = build_window(services)
    qtbot.addWidget(window)
    window.show()
    with caplog.at_level(logging.WARNING, logger="gpu_companion.app"):
        start_services(services, window, run=lambda fn, *args: fn(*args))  # as run_gui does
    assert [r.getMessage() for r in caplog.records if r.name == "gpu_companion.app"] == []
    assert services.always_on_here  # its policies tick too, as in the app
    platform = f"journey-{uuid.uuid4().hex[:8]}"  # the keyring outlives a test: a fresh name
    try:
        yield App(services, window, clock, platform, messages)
    finally:
        worker.wait_all()
        window.save_state()
        window.close()
        services.close()
        if services.vault.key(platform) is not None:
            services.vault.delete(platform)


# --- the steps ---------------------------------------------------------------------------


def wizard_to_a_metered_rental(app: App, qtbot, server) -> FirstRentalWizard:  # type: ignore[no-untyped-def]
    """Plan, key, trust, self-check and budget, through the wizard the main window opens."""
    app.window.open_wizard()
    wizard = app.window.wizard
    wizard.selfcheck_options = SMALL_CHECK  # a 2 MB disk test on the harness disk
    task = wizard.task_page
    task.task.setCurrentIndex(task.task.findData("qlora-4bit"))
    task.model.setCurrentIndex(task.model.findData("qwen2.5-7b"))
    for _ in range(2):
        _next(wizard, qtbot)
    wizard.gpu_page.select("h100-sxm")
    _next(wizard, qtbot)
    wizard.billing_page.fields["on_demand"].setText(PER_GPU)
    _next(wizard, qtbot)
    create = wizard.create_page
    create.platform.setEditText(app.platform)
    for box in create.checks.values():
        box.setChecked(True)
    create.generate.click()
    qtbot.waitUntil(lambda: wizard.state.key is not None, timeout=10_000)
    server.authorize(wizard.state.key.public_key)  # pasted into the provider's console
    _next(wizard, qtbot)
    wizard.connection_page.paste.setText(f"ssh -p {server.port} {server.user}@127.0.0.1")
    wizard.connection_page.gpu_count.setValue(GPUS)
    _next(wizard, qtbot)
    first = wizard.first_connection_page  # the wizard's own trust step
    qtbot.waitUntil(first.trust_button.isVisible, timeout=10_000)
    assert host_fingerprint(server.host_key_path) in first.status.text()  # the provider's
    first.ask = lambda box: "trust"  # the host-key question, answered
    first.trust_button.click()
    qtbot.waitUntil(lambda: wizard.state.connected, timeout=10_000)
    _next(wizard, qtbot)
    view = wizard.selfcheck_page.view
    qtbot.waitUntil(lambda: not view.running and bool(view.steps), timeout=WAIT)
    steps = {s.key: s for s in view.steps}
    assert steps["gpus"].status.value == "pass"
    assert steps["gpus"].evidence.startswith("8 × NVIDIA H100 80GB HBM3 (")
    assert steps["cuda_available"].evidence.startswith("False")  # CPU torch, really asked
    _next(wizard, qtbot)
    budget = wizard.budget_page
    budget.budget.setText("500")
    budget.idle.setValue(IDLE_MINUTES)  # "alert when the GPU is idle for"
    assert budget.rate_note.text() == "Metered on demand at 8 × $2.65 = $21.20/h."
    wizard.button(QWizard.WizardButton.FinishButton).click()
    assert wizard.result() == QWizard.DialogCode.Accepted, budget.notice.text()
    return wizard


def closed_to_the_tray_it_watches(app: App, qtbot, alias: str) -> None:  # type: ignore[no-untyped-def]
    """No tray offscreen: 'closed to the tray' is the window hidden while the services run."""
    app.window.hide()
    qtbot.waitUntil(lambda: app.services.monitor().aliases() == [alias], timeout=WAIT)
    qtbot.waitUntil(lambda: len(_latest(app, alias)) == GPUS, timeout=WAIT)


def _latest(app: App, alias: str) -> dict[int, object]:
    history = app.services.monitor().history(alias)
    return dict(history.latest) if history is not None else {}


def _samples_pass(app: App, qtbot, alias: str, n: int = 2) -> None:  # type: ignore[no-untyped-def]
    history = app.services.monitor().history(alias)
    seen = history.version
    qtbot.waitUntil(lambda: history.version >= seen + n, timeout=WAIT)


def idle_alert_with_its_cost(app: App, qtbot, standin, alias: str) -> str:  # type: ignore[no-untyped-def]
    standin.configure(gpu_count=GPUS, mem_used=3, util="idle")
    idle = lambda: all(s.utilization_gpu == 0 for s in _latest(app, alias).values())  # type: ignore[attr-defined]  # noqa: E731
    qtbot.waitUntil(idle, timeout=WAIT)
    app.clock.advance(minutes=31)  # past the monitor's default, short of the wizard's 40
    _samples_pass(app, qtbot, alias)
    assert not any(m.key == f"idle:{alias}" for m in app.messages)
    app.clock.advance(minutes=10)
    expected = f"41 min idle = $14.49 so far on {alias} ($21.20/h)."  # 8 × 2.65 × 41 / 60
    qtbot.waitUntil(lambda: any(expected in m.text for m in app.messages), timeout=WAIT)
    [alert] = [m for m in app.messages if expected in m.text]
    assert alert.key == f"idle:{alias}" and alert.level.value == "warning"
    assert not app.window.isVisible()  # it reached the user with the window closed
    return expected


def checkpoints_downloaded_on_transfers(app: App, qtbot, host, remote: Path) -> Path:  # type: ignore[no-untyped-def]
    transfers = app.window.navigate("transfers")
    dialog = SyncCheckpointsDialog(transfers._hosts(), lambda h: None,
                                   transfers.default_backup_root())  # fmt: skip
    qtbot.addWidget(dialog)
    dialog.remote.setText(str(remote))
    job = transfers.queue_checkpoint_sync(dialog)
    assert job is not None
    qtbot.waitUntil(lambda: app.services.transfers.get(job.id).state.finished, timeout=WAIT)
    done = app.services.transfers.get(job.id)
    assert done.state is JobState.DONE and done.verified, done.message
    landed = backup_dir(app.services.release.backup_root, host, str(remote))
    assert (landed / "step-100.pt").read_bytes() == (remote / "step-100.pt").read_bytes()
    return landed


def checklist_passes_and_release_runs(app: App, qtbot, host, remote: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    settings = app.services.release.settings
    # the harness host is this very machine: its leftovers scan and process list are this
    # machine's, and an archive is not what this journey is about; the checkpoints item is
    settings.save_config(host.alias, ChecklistConfig(
        synced_dirs=(str(remote),), manual=(), custom=(),
        disabled=("archive", "leftovers", "processes")))  # fmt: skip
    page = app.window.navigate("release")
    # the config was saved behind the page's back (its dialog would drop the page's checklist):
    # a page built before this, after the first paint, holds the default one
    page.checklists.pop(host.alias, None)
    app.window.open_release(host.alias)
    page.run_all()
    qtbot.waitUntil(lambda: not page.busy(), timeout=WAIT)
    item = page.checklist().item("checkpoints")
    assert item.state is ItemState.PASSED and "(transfer #" in item.evidence.summary, item.evidence
    states = lambda: [(i.key, i.state.name) for i in page.checklist().items]  # noqa: E731
    assert page.release_btn.isEnabled(), (states(), page.host(), page.busy())
    asked: list[str] = []
    monkeypatch.setattr(page, "_ask", lambda title, text: asked.append(text) or True)
    page.release_btn.click()
    services = app.services
    qtbot.waitUntil(lambda: services.registry.host(host.alias).state == "released", timeout=WAIT)
    qtbot.waitUntil(lambda: not page.busy(), timeout=WAIT)
    assert "ask vast.ai to destroy instance 4242" in asked[0]


def the_bill(app: App, qtbot) -> str:  # type: ignore[no-untyped-def]
    page = app.window.navigate("spend")
    page.refresh()
    qtbot.waitUntil(lambda: not page.busy(), timeout=WAIT)  # read off the GUI thread
    assert "nothing billing now" in page.summary.text()
    return page.history_total.text()


# --- the journey ---------------------------------------------------------------------------


@pytest.mark.qt_log_ignore("This plugin does not support raise")  # offscreen: bring_forward
def test_one_rental_from_the_wizard_to_the_bill(  # type: ignore[no-untyped-def]
    app, qtbot, torch_sshd, standin, vast_api, tmp_path, monkeypatch
):
    standin.configure(gpu_count=GPUS, mem_used=3)
    wizard_to_a_metered_rental(app, qtbot, torch_sshd)
    s = app.services
    host = s.registry.host("gpu1")
    rental = s.ledger.running_for_host(host.id)
    assert (rental.gpu_count, str(rental.rate), rental.started_at) == (8, "21.20", app.clock.now())
    key = s.vault.key(app.platform)  # made by the wizard, the private half in the keyring
    assert key is not None and key.public_line == app.window.wizard.state.key.public_key

    closed_to_the_tray_it_watches(app, qtbot, host.alias)
    alert = idle_alert_with_its_cost(app, qtbot, standin, host.alias)
    app.window.bring_forward()  # from the tray's menu: the alert waits in the window
    qtbot.waitUntil(lambda: any(alert in b.label.text() for b in app.window.banners.banners()))

    remote = tmp_path / "remote-home" / "run" / "ckpt"
    remote.mkdir(parents=True)
    (remote / "step-100.pt").write_bytes(os.urandom(40_000))
    host = s.registry.save_host(replace(host, instance_id="4242"))  # from the provider console
    platform = s.registry.platform(host.platform_id)  # its vast.ai account: key in the keyring
    s.providers.add("vast.ai", vast_api.api_key, platform=platform.name)
    checkpoints_downloaded_on_transfers(app, qtbot, host, remote)
    assert any(key.fingerprint in line for line in s.agent.identities())  # rsync's way in

    app.clock.advance(minutes=19)  # released one hour after Finish
    checklist_passes_and_release_runs(app, qtbot, host, remote, monkeypatch)
    assert calls(vast_api) == [["destroy", "instance", "4242"]]
    assert 4242 not in vast_api.instances  # read back: the provider no longer lists it
    ended = s.ledger.rental(rental.id)
    assert ended.ended_at == rental.started_at + timedelta(hours=1)
    assert ended.end_reason == "release" and not s.ledger.running()
    assert the_bill(app, qtbot) == "1 rentals: $21.20"  # 8 × $2.65 × 1 h

    assert app.window.pages["monitor"].monitor is None  # the Monitor page was never opened
