"""The first-rental wizard walked page by page with pytest-qt, built as the app builds it
(`FirstRentalWizard(ctx)` over `build_services`): the key vault on the harness keyring, the app's
own connections to the harness sshd (the real CPU build of torch on the test host for the
self-check), the spend ledger; and once with the services a build may lack."""

from __future__ import annotations

import base64

import pytest
from PySide6.QtWidgets import QWizard

from gpu_companion.core.selfcheck.check import SelfCheckOptions
from gpu_companion.core.selfcheck.rules import Status
from gpu_companion.ui.common import worker
from gpu_companion.ui.wizard import FirstRentalWizard
from gpu_companion.ui.wizard.services import NOT_YET, WizardServices

SMALL_CHECK = SelfCheckOptions(disk_test_mb=2, min_free_gb=0.001)


@pytest.fixture
def app_keyring(ctx, keyring_backend, monkeypatch):  # type: ignore[no-untyped-def]
    """The app's own key vault (`ctx.vault`, as `build_services` makes it) on the harness
    keyring: keyring picks its backend once per process, so it picks again on this test's D-Bus,
    as a fresh app process would. The keys the test made leave the keyring afterwards."""
    import keyring.backend
    import keyring.core

    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    monkeypatch.delattr(keyring.backend.get_all_keyring, "saved_result", raising=False)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)  # only the app's own keys
    yield ctx.vault
    worker.wait_all()
    for key in ctx.vault.keys():
        ctx.vault.delete(key.platform)


def _fingerprint(server) -> str:  # type: ignore[no-untyped-def]
    """The host key's SHA256 fingerprint: what the provider's console shows."""
    import paramiko

    return paramiko.Ed25519Key(data=base64.b64decode(server.host_public_key())).fingerprint


def _ssh_command(server) -> str:  # type: ignore[no-untyped-def]
    """What the provider's console shows to paste."""
    return f"ssh -p {server.port} {server.user}@127.0.0.1"


def _next(wizard: FirstRentalWizard, qtbot) -> None:
    button = wizard.button(QWizard.WizardButton.NextButton)
    qtbot.waitUntil(button.isEnabled, timeout=5000)
    before = wizard.currentId()
    button.click()
    assert wizard.currentId() == before + 1, "the page did not accept its answers"


def _walk_to_connection(wizard: FirstRentalWizard, qtbot, ssh_command: str, server=None) -> None:
    """Plan, create (the key generated when the build has keys, and pasted into `server`'s
    authorized keys as a user pastes it into the provider's console), then the connection
    details; ends on the first-connection page once the host answered the first contact."""
    task = wizard.task_page
    task.task.setCurrentIndex(task.task.findData("qlora-4bit"))
    task.model.setCurrentIndex(task.model.findData("qwen2.5-7b"))
    task.context.setValue(2048)
    _next(wizard, qtbot)
    assert "GiB</b> in total for Qwen2.5 7B" in wizard.estimate_page.total.text()
    assert wizard.estimate_page.model.rowCount() >= 5
    _next(wizard, qtbot)
    ranked = [job.card.id for job in wizard.gpu_page.model.rows()]
    assert len(ranked) >= 10
    costs = [job.low + job.high for job in wizard.gpu_page.model.rows()]
    assert costs == sorted(costs)  # cheapest job first
    wizard.gpu_page.select("h100-sxm")
    assert "INT8 TOPS" in wizard.gpu_page.int8.text() and "fits" in wizard.gpu_page.verdict.text()
    _next(wizard, qtbot)
    billing = wizard.billing_page
    billing.fields["spot"].setText("1.20")
    advice = billing.result.toPlainText()
    assert "For a first run, rent on demand" in advice and "checkpoint" in advice
    # back to the task: the answers are still there, and so is the chosen card
    for _ in range(3):
        wizard.back()
    assert wizard.currentPage() is task and task.selected_task().value == "qlora-4bit"
    _next(wizard, qtbot)
    _next(wizard, qtbot)
    assert wizard.state.card.id == "h100-sxm"
    _next(wizard, qtbot)
    assert billing.fields["spot"].text() == "1.20"
    _next(wizard, qtbot)
    create = wizard.create_page
    create.platform.setEditText("vast.ai")
    assert not wizard.button(QWizard.WizardButton.NextButton).isEnabled()  # checklist first
    for box in create.checks.values():
        box.setChecked(True)
    if wizard.services.keys is not None:
        create.generate.click()
        qtbot.waitUntil(lambda: wizard.state.key is not None, timeout=10000)
        if server is not None:
            server.authorize(wizard.state.key.public_key)  # pasted into the provider's console
    _next(wizard, qtbot)
    conn = wizard.connection_page
    conn.paste.setText("ssh -p 2222 root@bad;host")
    assert "Not understood" in conn.paste_note.text()
    conn.paste.setText(ssh_command)
    _next(wizard, qtbot)
    if wizard.services.sessions is not None:  # the page connects at once: wait for the answer
        first = wizard.first_connection_page
        qtbot.waitUntil(lambda: not first.connecting, timeout=15000)


def _wizard(ctx, qtbot, services: WizardServices | None = None) -> FirstRentalWizard:
    """The wizard as the app opens it (`FirstRentalWizard(ctx)`), unless a test hands it the
    services of a build that lacks some."""
    wizard = FirstRentalWizard(ctx) if services is None else FirstRentalWizard(ctx, services)
    wizard.selfcheck_options = SMALL_CHECK
    qtbot.addWidget(wizard)
    wizard.show()
    return wizard


def test_walk_without_the_services_this_build_lacks(ctx, qtbot):
    # hand-built on purpose: a build without keys, connections or ledger ("not in this version")
    wizard = _wizard(ctx, qtbot, WizardServices())
    _walk_to_connection(wizard, qtbot, "ssh -p 2222 root@1.2.3.4 -L 8080:localhost:8080")
    assert wizard.create_page.key_status.text() == NOT_YET["keys"]
    host = ctx.registry.host("gpu1")
    assert (host.hostname, host.port, host.user) == ("1.2.3.4", 2222, "root")
    assert host.gpu_model == "H100 SXM" and host.platform_id == wizard.state.platform.id
    assert wizard.first_connection_page.status.text() == NOT_YET["sessions"]
    _next(wizard, qtbot)
    assert wizard.selfcheck_page.notice.text() == NOT_YET["sessions"]
    _next(wizard, qtbot)
    assert wizard.budget_page.notice.text() == NOT_YET["ledger"]
    assert wizard.budget_page.plans() is not None
    wizard.button(QWizard.WizardButton.FinishButton).click()
    assert wizard.result() == QWizard.DialogCode.Accepted
    assert wizard.state.rental is None  # no ledger: nothing pretends to meter


def test_the_estimate_page_suggests_checkpointing_when_it_changes_the_verdict(ctx, qtbot):
    # Llama 3.1 8B LoRA at 4,096 tokens without checkpointing needs 41.5 GiB: no 24-40 GB card
    # holds it; with checkpointing 21.7 GiB does. The tip names what it buys; with the box ticked
    # (the default) or for inference there is no tip.
    wizard = _wizard(ctx, qtbot)
    task = wizard.task_page
    assert task.checkpointing.isChecked()
    task.task.setCurrentIndex(task.task.findData("lora"))
    assert task.context.value() == 1024  # the training default
    task.model.setCurrentIndex(task.model.findData("llama-3.1-8b"))
    task.context.setValue(4096)
    task.checkpointing.setChecked(False)
    _next(wizard, qtbot)
    tip = wizard.estimate_page.tip.text()
    assert tip.startswith("Turn on gradient checkpointing: 41.5 → 21.7 GiB")
    assert "from the RTX 3090 (24 GB)" in tip
    wizard.back()
    task.checkpointing.setChecked(True)
    _next(wizard, qtbot)
    assert wizard.estimate_page.tip.text() == ""
    assert "21.7 GiB</b> in total" in wizard.estimate_page.total.text()


def test_a_config_json_and_the_moe_presets_size_in_the_wizard(ctx, qtbot, tmp_path):
    wizard = _wizard(ctx, qtbot)
    task = wizard.task_page
    assert task.model.findData("qwen3-30b-a3b") >= 0
    assert "MoE 3.4 B active" in task.model.itemText(task.model.findData("qwen3-30b-a3b"))
    bad = tmp_path / "broken" / "config.json"
    bad.parent.mkdir()
    bad.write_text("{not json", encoding="utf-8")
    task.load_config(bad)
    assert task.config_note.text().startswith(f"Could not use {bad}")
    good = tmp_path / "Mixtral-8x7B" / "config.json"
    good.parent.mkdir()
    good.write_text(
        '{"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, '
        '"num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, '
        '"num_local_experts": 8, "num_experts_per_tok": 2, "vocab_size": 32000}',
        encoding="utf-8",
    )
    task.load_config(good)
    assert task.request().model.params == 46_702_792_704
    _next(wizard, qtbot)
    assert "in total for Mixtral-8x7B" in wizard.estimate_page.total.text()


def test_own_prices_and_a_latency_target_on_the_gpu_page(ctx, qtbot):
    wizard = _wizard(ctx, qtbot)
    task = wizard.task_page
    task.model.setCurrentIndex(task.model.findData("llama-3.1-8b"))
    task.context.setValue(8192)
    task.answer_tokens.setValue(3000)
    task.target_seconds.setValue(10)
    _next(wizard, qtbot)
    _next(wizard, qtbot)
    gpu = wizard.gpu_page
    gpu.select("mi300x")
    assert "MI300X is an AMD card: nvidia-smi and CUDA do not apply" in gpu.verdict.text()
    row = [job.card.id for job in gpu.model.rows()].index("mi300x")
    assert gpu.model.index(row, 0).data() == "MI300X *"
    gpu.select("l4")
    # test_estimate: 300 GB/s / 17.13 GB per token = 17.5 tokens/s, 3,000 tokens take 171 s.
    assert "fits" in gpu.verdict.text()
    assert "A 3,000-token answer at 17.5 tokens/s takes 171 s" in gpu.verdict.text()
    assert "over your 10 s target" in gpu.verdict.text()
    gpu.own_price.setText("abc")
    gpu.apply_own_price()
    assert gpu.price_note.text().startswith("Not used: the price 'abc' is not a number")
    assert "l4" not in gpu.prices
    gpu.own_currency.setCurrentText("CNY")
    gpu.own_price.setText("1.50")
    gpu.apply_own_price()
    assert gpu.price_note.text() == "Ranked with your CNY 1.50/h for the L4."
    l4 = next(job for job in gpu.model.rows() if job.card.id == "l4")
    assert l4.currency == "CNY" and l4.low == l4.high == (l4.hours * 150 / 100).quantize(l4.low)
    assert wizard.state.card.id == "l4"
    _next(wizard, qtbot)
    assert wizard.billing_page.fields["on_demand"].text() == "1.50"
    assert wizard.billing_page.currency.currentText() == "CNY"


@pytest.mark.sshd
@pytest.mark.keyring
def test_changing_the_address_after_going_back_updates_the_same_host(ctx, qtbot, app_keyring, sshd):
    wizard = _wizard(ctx, qtbot)
    _walk_to_connection(wizard, qtbot, _ssh_command(sshd), sshd)
    wizard.back()
    wizard.connection_page.paste.setText(f"ssh {sshd.user}@localhost -p {sshd.port} -i key")
    _next(wizard, qtbot)
    assert [(h.alias, h.hostname, h.port) for h in ctx.registry.hosts()] == [
        ("gpu1", "localhost", sshd.port)
    ]
    first = wizard.first_connection_page  # a new address: its first contact again
    qtbot.waitUntil(lambda: not first.connecting and first.trust_button.isVisible(), timeout=15000)
    assert not wizard.state.connected


def _to_create_page(wizard, qtbot):
    for _ in range(4):
        _next(wizard, qtbot)
    assert wizard.currentPage() is wizard.create_page
    return wizard.create_page


@pytest.mark.keyring
def test_the_key_is_generated_for_the_platform_and_copied(ctx, qtbot, app_keyring):
    from PySide6.QtGui import QGuiApplication

    wizard = _wizard(ctx, qtbot)
    create = _to_create_page(wizard, qtbot)
    create.generate.click()
    assert "Name the platform first" in create.key_status.text() and ctx.vault.keys() == []
    create.platform.setEditText("RunPod")
    create.generate.click()
    qtbot.waitUntil(lambda: wizard.state.key is not None, timeout=10000)
    assert [k.platform for k in ctx.vault.keys()] == ["RunPod"]
    stored = ctx.vault.key("RunPod")  # the app's vault: the private half in the keyring
    assert stored is not None and ctx.vault.load_pkeys("RunPod", None)
    assert create.public_key.toPlainText() == stored.public_line
    assert " gpu-companion:RunPod:" in create.public_key.toPlainText()
    assert stored.fingerprint in create.key_status.text()
    create.copy.click()
    assert QGuiApplication.clipboard().text() == create.public_key.toPlainText()


@pytest.mark.keyring
# keyring's SecretService backend leaves its D-Bus connection open when the collection stays
# locked (get_preferred_collection raises KeyringLocked without closing it): collected here
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_key_failure_is_shown_and_nothing_is_kept(ctx, qtbot, tmp_path, monkeypatch):
    """The app's vault on a keyring that worked earlier and is locked now (the login keyring
    reopened with a wrong password): a keyring of this test's own, the shared one stays open."""
    import keyring.backend
    import keyring.core

    from tests.conftest import missing_component
    from tests.harness.keyring_session import KeyringSession
    from tests.harness.sshd import ComponentMissing

    session = KeyringSession(tmp_path / "locked", password="right")
    try:
        session.start()
    except ComponentMissing as exc:
        missing_component(str(exc))
    try:
        monkeypatch.setattr(keyring.core, "_keyring_backend", None)
        monkeypatch.delattr(keyring.backend.get_all_keyring, "saved_result", raising=False)
        ctx.vault.check_keyring()  # it worked earlier in this session
        session.restart_daemon("wrong")  # and is locked now
        wizard = _wizard(ctx, qtbot)
        create = _to_create_page(wizard, qtbot)
        create.platform.setEditText("RunPod")
        create.generate.click()
        qtbot.waitUntil(lambda: "No key was made" in create.key_status.text(), timeout=10000)
        assert "locked" in create.key_status.text() and "Unlock it" in create.key_status.text()
        assert wizard.state.key is None and not create.copy.isEnabled()
        assert create.generate.isEnabled()
        assert ctx.vault.keys() == [] and not ctx.vault.public_key_path("RunPod").exists()
    finally:
        import gc

        worker.wait_all()
        session.stop()
        gc.collect()


def _trust_first_contact(wizard, qtbot, server) -> None:  # type: ignore[no-untyped-def]
    """The first-connection page shows the host key's fingerprint; the user compares it with the
    provider's console and trusts it."""
    first = wizard.first_connection_page
    qtbot.waitUntil(first.trust_button.isVisible, timeout=10000)
    assert _fingerprint(server) in first.status.text()
    first.ask = lambda box: "trust"  # the host-key question, answered
    first.trust_button.click()
    qtbot.waitUntil(lambda: wizard.state.connected, timeout=10000)


def _connect_and_check(wizard, qtbot, server) -> None:  # type: ignore[no-untyped-def]
    """From the first-connection page to the budget page: trust, then the whole self-check."""
    _trust_first_contact(wizard, qtbot, server)
    _next(wizard, qtbot)
    view = wizard.selfcheck_page.view
    qtbot.waitUntil(lambda: view.complete, timeout=60000)
    _next(wizard, qtbot)
    assert wizard.currentPage() is wizard.budget_page


def _check_and_finish(wizard, qtbot, server, standin):
    _trust_first_contact(wizard, qtbot, server)
    _next(wizard, qtbot)
    view = wizard.selfcheck_page.view
    qtbot.waitUntil(lambda: not view.running and bool(view.steps), timeout=60000)
    steps = {s.key: s for s in view.steps}
    assert steps["gpus"].status is Status.PASS
    available = steps["cuda_available"]
    assert available.status is Status.FAIL and available.evidence.startswith("False")
    assert "CPU-only" in available.hint and "download.pytorch.org/whl/cu" in available.hint
    assert "failed" in view.status.text()
    # back and forth keeps the result rather than re-running it; "Run again" repeats it
    wizard.back()
    _next(wizard, qtbot)
    assert not view.running and view.steps
    standin.configure(mem_used=3, processes=[{"pid": 4242, "name": "python", "used_mib": 900}])
    wizard.selfcheck_page.again.click()
    assert not wizard.button(QWizard.WizardButton.NextButton).isEnabled()
    qtbot.waitUntil(lambda: not view.running and len(view.steps) == 10, timeout=60000)
    assert "pid 4242 python" in {s.key: s for s in view.steps}["gpus"].evidence
    _next(wizard, qtbot)
    wizard.budget_page.budget.setText("abc")
    assert not wizard.button(QWizard.WizardButton.FinishButton).isEnabled()
    wizard.budget_page.budget.setText("80")
    wizard.button(QWizard.WizardButton.FinishButton).click()
    worker.wait_all()


@pytest.mark.sshd
@pytest.mark.keyring
def test_walk_connects_and_self_checks_the_harness_host(
    ctx, qtbot, app_keyring, torch_sshd, standin
):
    standin.configure(mem_used=3)
    wizard = _wizard(ctx, qtbot)
    _walk_to_connection(wizard, qtbot, _ssh_command(torch_sshd), torch_sshd)
    _check_and_finish(wizard, qtbot, torch_sshd, standin)
    host = ctx.registry.host("gpu1")  # the key trusted is in the app's own known_hosts
    assert ctx.sessions.trusted_fingerprints(host) == [f"ssh-ed25519 {_fingerprint(torch_sshd)}"]
    assert wizard.result() == QWizard.DialogCode.Accepted


@pytest.mark.sshd
@pytest.mark.keyring
def test_end_to_end_leaves_host_key_rental_and_budget(ctx, qtbot, app_keyring, torch_sshd, standin):
    """The issue's acceptance walk with the app's real services: the key vault on the harness
    keyring, the app's own verified connection, the spend ledger."""
    standin.configure(mem_used=3)
    wizard = _wizard(ctx, qtbot)
    _walk_to_connection(wizard, qtbot, _ssh_command(torch_sshd), torch_sshd)
    _check_and_finish(wizard, qtbot, torch_sshd, standin)
    assert wizard.result() == QWizard.DialogCode.Accepted
    host = ctx.registry.host("gpu1")
    assert host is not None
    platform = ctx.registry.platform(host.platform_id)
    stored = ctx.vault.key(platform.name)
    assert stored is not None and stored.public_line == wizard.state.key.public_key
    rental = ctx.ledger.running_for_host(host.id)
    assert rental is not None and rental.gpu_model == host.gpu_model
    assert [b.platform_id for b in ctx.budgets.all()] == [host.platform_id]


def _to_budget_page(ctx, qtbot, server) -> FirstRentalWizard:  # type: ignore[no-untyped-def]
    wizard = _wizard(ctx, qtbot)
    _walk_to_connection(wizard, qtbot, _ssh_command(server), server)
    _connect_and_check(wizard, qtbot, server)
    return wizard


@pytest.mark.sshd
@pytest.mark.keyring
def test_finish_hands_the_rental_and_budget_to_the_ledger(ctx, qtbot, app_keyring, sshd):
    from datetime import timedelta
    from decimal import Decimal

    wizard = _to_budget_page(ctx, qtbot, sshd)
    budget = wizard.budget_page
    budget.budget.setText("120")
    budget.hours.setValue(8)
    assert budget.rate_note.text() == "Metered on demand at $2.65/h."
    assert budget.summary.text() == "8 h on demand ≈ $21.20, 18% of this budget."
    wizard.button(QWizard.WizardButton.FinishButton).click()
    assert wizard.result() == QWizard.DialogCode.Accepted
    host = ctx.registry.host("gpu1")
    [rental] = ctx.ledger.running()
    assert (rental.host_id, rental.gpu_model, rental.billing_mode) == (
        host.id,
        "H100 SXM",
        "on-demand",
    )
    assert (rental.rate, rental.currency, rental.planned_end - rental.started_at) == (
        Decimal("2.65"),
        "USD",
        timedelta(hours=8),
    )
    [kept] = ctx.budgets.all()
    assert kept.amount_minor == 12000 and wizard.state.budget.id == kept.id


@pytest.mark.sshd
@pytest.mark.keyring
def test_a_ledger_failure_keeps_the_wizard_open(ctx, qtbot, app_keyring, sshd):
    wizard = _to_budget_page(ctx, qtbot, sshd)
    host = wizard.state.host
    # meanwhile the user started the meter for this host on the Spend page: the ledger refuses
    # a second one
    ctx.ledger.start_rental(host.platform_id, "2.65", host_id=host.id)
    wizard.button(QWizard.WizardButton.FinishButton).click()
    assert wizard.isVisible() and wizard.result() != QWizard.DialogCode.Accepted
    assert "A rental on gpu1 is already being metered." in wizard.budget_page.notice.text()
    assert len(ctx.ledger.running()) == 1 and wizard.state.rental is None
    from gpu_companion.core.spend.alerts import idle_minutes

    assert idle_minutes(ctx.store, host.id) is None  # the refused Finish changed no alert


@pytest.mark.sshd
@pytest.mark.keyring
def test_finish_meters_the_rental_and_sets_the_budget_in_the_spend_ledger(
    ctx, qtbot, app_keyring, sshd
):
    from datetime import timedelta
    from decimal import Decimal

    wizard = _to_budget_page(ctx, qtbot, sshd)
    wizard.budget_page.budget.setText("120")
    wizard.budget_page.hours.setValue(8)
    wizard.button(QWizard.WizardButton.FinishButton).click()
    assert wizard.result() == QWizard.DialogCode.Accepted
    host = ctx.registry.host("gpu1")
    rental = ctx.ledger.running_for_host(host.id)
    assert rental is not None
    assert (rental.rate, rental.currency, rental.gpu_model) == (Decimal("2.65"), "USD", "H100 SXM")
    assert rental.planned_end - rental.started_at == timedelta(hours=8)
    [budget] = ctx.budgets.all()
    assert (budget.period, budget.amount_minor, budget.platform_id) == (
        "month",
        12000,
        host.platform_id,
    )
