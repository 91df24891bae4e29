"""RunPodProvider through RunPod's real SDK (`runpod`), against FakeRunPod on 127.0.0.1."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from decimal import Decimal

import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.providers.model import Instance, ProviderError, Reading
from gpu_companion.core.providers.runpod import RunPodProvider
from tests.harness.fake_runpod import DEFAULT_KEY, FakeRunPod

pytest.importorskip("runpod")

POD = "iaw3m6iyadpmgq"
SPOT = "wu5ekmn69oh1xr"
STOPPED = "gq9xi2p0tn8kd1"


def _join_workers() -> list[threading.Thread]:
    """The provider's workers ("runpod-call") still alive after a grace period."""
    deadline = time.monotonic() + 5
    for t in threading.enumerate():
        if t.name == "runpod-call":
            t.join(max(0.0, deadline - time.monotonic()))
    return [t for t in threading.enumerate() if t.name == "runpod-call" and t.is_alive()]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeRunPod]:
    import runpod.api.graphql  # noqa: F401 - the SDK's import (~2 s) is not part of any timing

    server = FakeRunPod().start()
    monkeypatch.setenv("RUNPOD_API_BASE_URL", server.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    try:
        yield server
    finally:
        server.stop()
        assert _join_workers() == [], "a RunPod call thread outlived the test"
        assert not any(t.name == "fake-runpod" for t in threading.enumerate())


@pytest.fixture
def provider() -> RunPodProvider:
    return RunPodProvider(DEFAULT_KEY, timeout=5)


def _no_key(*texts: object) -> None:
    for text in texts:
        assert DEFAULT_KEY not in str(text)
        assert DEFAULT_KEY not in repr(text)


# -- listing ----------------------------------------------------------------------------------


def test_list_reads_every_field(fake: FakeRunPod, provider: RunPodProvider) -> None:
    fake.add_pod(POD, name="train-llama", costPerHr=0.69, gpuCount=2, volumeInGb=73)
    fake.add_pod(
        SPOT,
        podType="INTERRUPTABLE",
        costPerHr=0.35,
        machine={"gpuDisplayName": "A100 SXM"},
        volumeInGb=0,
    )
    fake.add_pod(STOPPED, desiredStatus="EXITED", costPerHr=1.19, volumeInGb=100)
    fake.add_pod("starting0pod1", runtime=None)
    fake.add_pod("created0pod1", desiredStatus="CREATED")
    fake.add_pod("ended0pod001", desiredStatus="TERMINATED")
    fake.add_pod("paused0pod01", desiredStatus="PAUSED")

    found = {i.id: i for i in provider.instances()}

    assert found[POD] == Instance(
        id=POD,
        state="running",
        provider_state="RUNNING",
        label="train-llama",
        ssh_host="203.0.113.10",
        ssh_port=40122,
        ssh_user="root",
        gpu_model="RTX 4090",
        gpu_count=2,
        hourly=Decimal("0.69"),
        storage_hourly=Decimal("0.020000"),  # 73 GB x $0.20/GB-month / 730 h
        currency="USD",
        billing_mode="on-demand",
    )
    spot = found[SPOT]
    assert (spot.billing_mode, spot.gpu_model, spot.hourly) == ("spot", "A100 SXM", Decimal("0.35"))
    assert spot.storage_hourly == Decimal("0")
    stopped = found[STOPPED]
    assert (stopped.state, stopped.provider_state) == ("stopped", "EXITED")
    assert (stopped.ssh_host, stopped.ssh_port) == ("", 0)
    assert stopped.storage_hourly == Decimal("0.027397")  # 100 x 0.20 / 730
    assert found["starting0pod1"].state == "starting"
    assert found["created0pod1"].state == "starting"
    assert found["ended0pod001"].state == "gone"
    assert (found["paused0pod01"].state, found["paused0pod01"].provider_state) == (
        "other",
        "PAUSED",
    )
    assert fake.actions() == ["list"]


def test_list_of_an_empty_account(fake: FakeRunPod, provider: RunPodProvider) -> None:
    assert provider.instances() == []


# -- reading ----------------------------------------------------------------------------------


def test_read_running(fake: FakeRunPod, provider: RunPodProvider) -> None:
    fake.add_pod(POD)
    reading = provider.read(POD)
    assert reading.state == "running"
    assert reading.instance is not None and reading.instance.ssh_port == 40122
    assert '"desiredStatus":"RUNNING"' in reading.said
    assert "JUPYTER_PASSWORD" not in reading.said  # the pod's env never goes on the record
    assert fake.requests[0].action == "read" and fake.requests[0].pod_id == POD


def test_read_stopped(fake: FakeRunPod, provider: RunPodProvider) -> None:
    fake.add_pod(POD, desiredStatus="EXITED")
    assert provider.read(POD).state == "stopped"


def test_read_unknown_pod_is_gone(fake: FakeRunPod, provider: RunPodProvider) -> None:
    assert provider.read("nosuchpod123") == Reading("gone", said='{"pod":null}')


def test_read_terminated_pod_is_gone(fake: FakeRunPod, provider: RunPodProvider) -> None:
    fake.add_pod(POD, desiredStatus="TERMINATED")
    reading = provider.read(POD)
    assert reading.state == "gone"
    assert reading.instance is not None and reading.instance.provider_state == "TERMINATED"


def test_read_id_is_stripped(fake: FakeRunPod, provider: RunPodProvider) -> None:
    fake.add_pod(POD)
    assert provider.read(f"  {POD}\n").state == "running"


# -- requests ---------------------------------------------------------------------------------


def test_destroy_then_read_gone(fake: FakeRunPod, provider: RunPodProvider) -> None:
    fake.add_pod(POD)
    said = provider.request(POD, "destroy")
    assert said == '{"podTerminate":null}'
    assert provider.read(POD).state == "gone"
    assert fake.actions() == ["destroy", "read"]
    assert "podTerminate" in fake.requests[0].query


def test_stop_then_read_stopped(fake: FakeRunPod, provider: RunPodProvider) -> None:
    fake.add_pod(POD)
    said = provider.request(POD, "stop")
    assert '"desiredStatus":"EXITED"' in said
    reading = provider.read(POD)
    assert reading.state == "stopped"
    assert reading.instance is not None and reading.instance.ssh_host == ""


def test_destroy_of_unknown_pod_is_refused_with_runpods_words(
    fake: FakeRunPod, provider: RunPodProvider
) -> None:
    with pytest.raises(ProviderError) as caught:
        provider.request("nosuchpod123", "destroy")
    assert "Pod not found." in caught.value.message
    assert caught.value.said == "Pod not found."


def test_linger_terminate_accepted_but_pod_reads_running(
    fake: FakeRunPod, provider: RunPodProvider
) -> None:
    fake.add_pod(POD)
    fake.linger(POD, reads=3)
    provider.request(POD, "destroy")
    assert [provider.read(POD).state for _ in range(3)] == ["running"] * 3
    assert provider.read(POD).state == "gone"


# -- refusals and failures --------------------------------------------------------------------


def test_wrong_key_is_401_without_the_key_anywhere(fake: FakeRunPod) -> None:
    wrong = "rpa_WRONGKEYWRONGKEYWRONGKEY0000000000000000"
    provider = RunPodProvider(wrong, timeout=5)
    fake.add_pod(POD)
    for call in (provider.instances, lambda: provider.read(POD)):
        with pytest.raises(ProviderError) as caught:
            call()
        err = caught.value
        assert err.message == "RunPod refused the API key (HTTP 401)."
        assert err.hint
        for text in (str(err), repr(err), err.said, err.hint, repr(provider)):
            assert wrong not in text and DEFAULT_KEY not in text
        assert err.__cause__ is None and err.__context__ is None
    assert [r.authorized for r in fake.requests] == [False, False]


def test_graphql_refusal_quotes_runpod(fake: FakeRunPod, provider: RunPodProvider) -> None:
    fake.add_pod(POD)
    fake.refuse_next("stop", "Cannot stop a pod with a pending transfer.")
    with pytest.raises(ProviderError) as caught:
        provider.request(POD, "stop")
    assert "Cannot stop a pod with a pending transfer." in caught.value.message
    assert caught.value.said == "Cannot stop a pod with a pending transfer."
    assert fake.pods[POD]["desiredStatus"] == "RUNNING"

    fake.refuse_next("read", "Something went wrong. Please try again later or contact support.")
    with pytest.raises(ProviderError, match="Something went wrong"):
        provider.read(POD)  # an error is never "gone"


def test_non_json_answer(fake: FakeRunPod, provider: RunPodProvider) -> None:
    fake.add_pod(POD)
    fake.status_next(502, "<html><body>502 Bad Gateway</body></html>")
    with pytest.raises(ProviderError, match="not JSON"):
        provider.read(POD)


def test_answer_without_data(fake: FakeRunPod, provider: RunPodProvider) -> None:
    fake.status_next(429, {"message": "rate limited"})
    with pytest.raises(ProviderError, match="cannot read") as caught:
        provider.read(POD)
    assert "rate limited" in caught.value.said


def test_unreachable_api(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeRunPod() as gone:
        url = gone.url
    monkeypatch.setenv("RUNPOD_API_BASE_URL", url)  # nothing listens there any more
    with pytest.raises(ProviderError, match="Could not reach RunPod") as caught:
        RunPodProvider(DEFAULT_KEY, timeout=5).read(POD)
    _no_key(caught.value, caught.value.said)


def test_hang_beyond_timeout(fake: FakeRunPod) -> None:
    provider = RunPodProvider(DEFAULT_KEY, timeout=1)
    fake.add_pod(POD)
    fake.hang()
    start = time.monotonic()
    with pytest.raises(ProviderError, match="did not answer") as caught:
        provider.read(POD)
    elapsed = time.monotonic() - start
    assert fake.hung.is_set()
    assert 0.9 <= elapsed < 2.5
    assert "1 s" in caught.value.message
    fake.unhang()
    assert _join_workers() == []


def test_empty_key_never_uses_the_sdks_global_key(
    fake: FakeRunPod, monkeypatch: pytest.MonkeyPatch
) -> None:
    import runpod

    monkeypatch.setattr(runpod, "api_key", DEFAULT_KEY)  # as ~/.runpod/config.toml would set it
    with pytest.raises(ProviderError, match="No RunPod API key"):
        RunPodProvider("  ").instances()
    assert fake.requests == []


def test_two_accounts_in_parallel_share_nothing(fake: FakeRunPod) -> None:
    import runpod

    fake.add_pod(POD)
    good = RunPodProvider(DEFAULT_KEY, timeout=5)
    bad = RunPodProvider("rpa_OTHERACCOUNT000000000000000000000000000", timeout=5)
    results: dict[str, list[str]] = {"good": [], "bad": []}

    def run(name: str, p: RunPodProvider) -> None:
        for _ in range(5):
            try:
                results[name].append(p.read(POD).state)
            except ProviderError as e:
                results[name].append(e.message)

    threads = [
        threading.Thread(target=run, args=("good", good)),
        threading.Thread(target=run, args=("bad", bad)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results["good"] == ["running"] * 5
    assert results["bad"] == ["RunPod refused the API key (HTTP 401)."] * 5
    assert runpod.api_key != DEFAULT_KEY  # the module global was never set


def test_nothing_recorded_or_shown_holds_the_key(
    fake: FakeRunPod, provider: RunPodProvider
) -> None:
    fake.add_pod(POD)
    reading = provider.read(POD)
    said = provider.request(POD, "stop")
    _no_key(reading, said, provider, fake.requests, [r.query for r in fake.requests])


# -- ids --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        'x") { id } #',
        'abcdef123"}) { id } myself { pods { env } } #',
        "-abcdef123",
        "abc def123",
        "abcdef{123}",
        "ABCDEF123456",
        "abc12",
        "a" * 33,
        "",
        "abcdef\n123",
        "abcdef１２３",  # fullwidth digits
        "abcdef123\x00",
    ],
)
def test_check_id_refuses(fake: FakeRunPod, provider: RunPodProvider, bad: str) -> None:
    with pytest.raises(ValidationError) as caught:
        provider.check_id(bad)
    assert caught.value.field == "instance_id"
    assert "RunPod pod id" in caught.value.message
    for call in (lambda: provider.read(bad), lambda: provider.request(bad, "destroy")):
        with pytest.raises(ValidationError):
            call()
    assert fake.requests == []  # nothing was sent


def test_check_id_accepts_runpod_ids(provider: RunPodProvider) -> None:
    assert provider.check_id(POD) == POD
    assert provider.check_id(f" {SPOT} ") == SPOT
    assert provider.name == "RunPod"


# -- the SDK ----------------------------------------------------------------------------------


def test_sdk_missing_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "runpod.api.graphql", None)  # import fails as if absent
    with pytest.raises(ProviderError) as caught:
        RunPodProvider(DEFAULT_KEY).instances()
    assert caught.value.message == "The RunPod client is not installed."
    assert "gpu-companion[providers]" in caught.value.hint


def test_module_import_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    code = (
        "import sys, gpu_companion.core.providers.runpod as m; "
        "m.RunPodProvider('k').check_id('abcdef123'); "
        "print(any(n == 'runpod' or n.startswith('runpod.') for n in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "False"
