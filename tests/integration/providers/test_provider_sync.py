"""`gpu-companion providers add|sync|import` as shipped: the real vastai and runpod client code
against local servers that answer like their APIs. An empty data dir gains platforms, hosts and
meters at the providers' own prices; a forgotten instance is raised with its price."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest

from gpu_companion.cli import main
from tests.harness.fake_runpod import FakeRunPod
from tests.harness.fake_vast import FakeVast

pytestmark = pytest.mark.keyring


@pytest.fixture
def clouds(app_paths, keyring_backend, monkeypatch) -> Iterator[tuple[FakeVast, FakeRunPod]]:  # type: ignore[no-untyped-def]
    import keyring.backend
    import keyring.core

    monkeypatch.setattr(keyring.core, "_keyring_backend", None)
    monkeypatch.delattr(keyring.backend.get_all_keyring, "saved_result", raising=False)
    with FakeVast() as vast, FakeRunPod() as runpod:
        monkeypatch.setenv("VAST_URL", vast.url)
        monkeypatch.setenv("RUNPOD_API_BASE_URL", runpod.url)
        yield vast, runpod


def cli(capsys, monkeypatch, *argv: str, stdin: str = "") -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def services(app_paths) -> Any:  # type: ignore[no-untyped-def]
    from gpu_companion.services import build_services

    return build_services(app_paths)


def _add_accounts(capsys, monkeypatch, vast: FakeVast, runpod: FakeRunPod) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    vname, rname = f"vast-{uuid.uuid4().hex[:4]}", f"runpod-{uuid.uuid4().hex[:4]}"
    code, out, err = cli(capsys, monkeypatch, "providers", "add", "vast.ai", "--platform", vname,
                         stdin=vast.api_key + "\n")  # fmt: skip
    assert code == 0, err
    assert "the API key is in the keyring" in out and "0 instance(s)" not in err
    code, _, err = cli(capsys, monkeypatch, "providers", "add", "runpod", "--platform", rname,
                       stdin=runpod.api_key + "\n")  # fmt: skip
    assert code == 0, err
    return vname, rname


def test_from_an_empty_data_dir_sync_imports_every_instance_with_its_price(
    clouds, app_paths, capsys, monkeypatch
) -> None:
    vast, runpod = clouds
    vast.add_instance(4242, label="llama-ft", gpu_name="RTX 4090", num_gpus=2, dph_total=0.81,
                      is_bid=True, ssh_host="ssh5.vast.ai", ssh_port=41022,
                      ports={})  # fmt: skip
    runpod.add_pod("abc123xyz4lmno", name="serve", costPerHr=0.69, gpuCount=1)
    vname, rname = _add_accounts(capsys, monkeypatch, vast, runpod)

    code, out, err = cli(capsys, monkeypatch, "providers", "sync", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert sorted(report["imported"]) == ["llama-ft", "serve"] and report["orphans"] == []

    s = services(app_paths)
    try:
        host = s.registry.host("llama-ft")
        platform = s.registry.platform(host.platform_id)
        assert platform.name == vname
        assert (host.hostname, host.port, host.user) == ("ssh5.vast.ai", 41022, "root")
        assert (host.instance_id, host.gpu_model, host.gpu_count) == ("4242", "RTX 4090", 2)
        rental = s.ledger.running_for_alias("llama-ft")
        assert rental.rate == Decimal("0.81") and rental.billing_mode == "spot"
        assert rental.currency == "USD"
        pod = s.registry.host("serve")
        assert pod.instance_id == "abc123xyz4lmno" and pod.hostname and pod.port
        assert s.ledger.running_for_alias("serve").rate == Decimal("0.69")
        # the key is in the keyring, nowhere in the app's files
        assert vast.api_key.encode() not in app_paths.database.read_bytes()
    finally:
        s.close()

    # a second sync changes nothing; a price change starts a new meter from now
    code, out, _ = cli(capsys, monkeypatch, "providers", "sync", "--json")
    assert json.loads(out)["imported"] == [] and code == 0
    vast.instances[4242]["dph_total"] = 0.95
    cli(capsys, monkeypatch, "providers", "sync")
    s = services(app_paths)
    try:
        assert s.ledger.running_for_alias("llama-ft").rate == Decimal("0.95")
        assert [r.end_reason for r in s.ledger.history() if r.ended_at] == ["price change"]
    finally:
        s.close()


def test_stopped_and_gone_instances_follow_the_provider(
    clouds, app_paths, capsys, monkeypatch
) -> None:
    vast, runpod = clouds
    vast.add_instance(4242, label="a", dph_total=0.4)
    vast.add_instance(4343, label="b", dph_total=0.5)
    _add_accounts(capsys, monkeypatch, vast, runpod)
    assert cli(capsys, monkeypatch, "providers", "sync")[0] == 0
    # stopped in the console: the disk bills on; destroyed in the console: gone
    vast.instances[4242].update(actual_status="exited", intended_status="stopped",
                                cur_state="stopped")  # fmt: skip
    vast.instances.pop(4343)
    code, out, _ = cli(capsys, monkeypatch, "providers", "sync")
    assert "stopped (disk metered): a" in out and "gone at the provider: b" in out
    s = services(app_paths)
    try:
        stopped = s.ledger.running_for_alias("a")
        assert s.registry.host("a").state == "stopped" and stopped.billing_mode == "stopped"
        assert stopped.rate == Decimal(str(vast.instances[4242]["storage_total_cost"]))
        assert s.registry.host("b").state == "gone" and s.ledger.running_for_alias("b") is None
        gone = next(r for r in s.ledger.history() if r.host_alias == "b")
        assert gone.end_reason == "gone"
    finally:
        s.close()


def test_a_forgotten_instance_is_an_orphan_with_its_price(
    clouds, app_paths, capsys, monkeypatch
) -> None:
    """Released in the app but running at the provider, and one the app never knew."""
    from dataclasses import replace

    vast, runpod = clouds
    vast.add_instance(4242, label="a", dph_total=0.4)
    _add_accounts(capsys, monkeypatch, vast, runpod)
    cli(capsys, monkeypatch, "providers", "sync")
    s = services(app_paths)
    try:  # the app believes it released "a" (the old CLI's 'Aborted.' did exactly this)
        rental = s.ledger.running_for_alias("a")
        s.ledger.end_rental(rental.id, reason="release")
        s.registry.save_host(replace(s.registry.host("a"), state="released"))
    finally:
        s.close()
    vast.add_instance(5555, gpu_name="H100 SXM", num_gpus=8, dph_total=19.2)

    code, out, _ = cli(capsys, monkeypatch, "providers", "sync", "--check")
    assert code == 1
    lines = [line for line in out.splitlines() if line.startswith("orphan: ")]
    assert len(lines) == 2
    assert any("instance 4242 (a) is running" in x and "$0.40/h" in x
               and "believes a released" in x for x in lines)  # fmt: skip
    assert any("instance 5555 is running (8× H100 SXM, $19.20/h)" in x
               and "does not know it" in x for x in lines)  # fmt: skip

    # the background sync (the always-on loop's step) raises the same as alerts
    s = services(app_paths)
    heard: list[tuple[str, str]] = []
    s.notifier.subscribe(lambda m: heard.append((m.key, m.text)))
    try:
        s.provider_sync.tick()
        keys = {k for k, _ in heard}
        assert any(k.endswith(":4242") for k in keys) and any(k.endswith(":5555") for k in keys)
        assert s.registry.host("a").state == "released"  # an alert changes nothing
        account = s.providers.accounts()[0] if s.providers.accounts()[0].kind == "vast.ai" else (
            s.providers.accounts()[1])  # fmt: skip
        alias = s.provider_sync.import_instance(account, "5555")
        assert s.ledger.running_for_alias(alias).rate == Decimal("19.2")
        assert [o.instance.id for o in s.provider_sync.orphans] == ["4242"]
    finally:
        s.close()


def test_refusals_are_said_and_change_nothing(clouds, app_paths, capsys, monkeypatch) -> None:
    vast, runpod = clouds
    vast.add_instance(4242, dph_total=0.4)
    code, out, err = cli(capsys, monkeypatch, "providers", "add", "vast.ai",
                         stdin="short\n")  # fmt: skip
    assert code == 1 and "refused (api_key)" in err
    code, out, err = cli(capsys, monkeypatch, "providers", "add", "vast.ai",
                         stdin="wrong-key-0123456789\n")  # fmt: skip
    assert code == 1 and "vast.ai refused the API key" in err and "wrong-key" not in err
    code, out, err = cli(capsys, monkeypatch, "providers", "sync")
    assert code == 1 and "vast.ai refused the API key" in out
    s = services(app_paths)
    try:
        assert [h for h in s.registry.hosts()] == []
    finally:
        s.close()
    code, _, err = cli(capsys, monkeypatch, "providers", "test", "nope")
    assert code == 1 and "No provider account named 'nope'" in err


def test_from_an_empty_data_dir_to_a_released_instance_without_the_window(
    clouds, app_paths, capsys, monkeypatch
) -> None:
    """The headless path a new user takes: key, account, sync, release, confirmed."""
    vast, _runpod = clouds
    vast.add_instance(4242, label="trainer", dph_total=0.4, ssh_host="127.0.0.1", ssh_port=9,
                      ports={})  # fmt: skip
    assert cli(capsys, monkeypatch, "platforms", "add", "vast.ai")[0] == 0
    code, public, _ = cli(capsys, monkeypatch, "keys", "generate", "vast.ai")
    assert code == 0 and public.startswith("ssh-ed25519 ")
    assert cli(capsys, monkeypatch, "providers", "add", "vast.ai", stdin=vast.api_key)[0] == 0
    assert cli(capsys, monkeypatch, "providers", "sync")[0] == 0
    # not passed (the host cannot be reached to check), and not confirmed: nothing is sent
    code, out, err = cli(capsys, monkeypatch, "release", "trainer")
    assert code == 1 and "cannot be released yet" in err and vast.methods("DELETE") == []
    code, out, err = cli(capsys, monkeypatch, "release", "trainer", "--override",
                         "results already in the bucket", "--yes", "--json")  # fmt: skip
    assert code == 0, err
    result = json.loads(out[out.index("{"):])
    assert result["released"] and result["kind"] == "override"
    assert "read back: gone" in result["provider_said"] and 4242 not in vast.instances
    s = services(app_paths)
    try:
        assert s.ledger.running() == [] and s.registry.host("trainer").state == "released"
    finally:
        s.close()


def test_release_exit_3_when_the_provider_does_not_confirm(
    clouds, app_paths, capsys, monkeypatch
) -> None:
    vast, _runpod = clouds
    vast.add_instance(4242, label="trainer", dph_total=0.4, ssh_host="127.0.0.1", ssh_port=9,
                      ports={})  # fmt: skip
    cli(capsys, monkeypatch, "providers", "add", "vast.ai", stdin=vast.api_key)
    cli(capsys, monkeypatch, "providers", "sync")
    vast.linger(4242, reads=1_000_000)
    code, out, err = cli(capsys, monkeypatch, "release", "trainer", "--override", "copied",
                         "--yes", "--within", "1")  # fmt: skip
    assert code == 3
    assert "vast.ai still reports instance 4242 running after the destroy request" in err
    s = services(app_paths)
    try:
        assert s.ledger.running_for_alias("trainer") is not None
        assert s.registry.host("trainer").state == "active"
    finally:
        s.close()
