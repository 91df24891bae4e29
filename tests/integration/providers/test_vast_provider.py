"""VastProvider through vast.ai's real client code (`vastai.api`) against FakeVast, a local server
that answers like vast.ai's REST API; and the real `vastai` CLI, to show why the app does not
drive it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pytest

from gpu_companion.core.common.errors import ValidationError
from gpu_companion.core.providers.model import Instance, ProviderError
from gpu_companion.core.providers.vast import VastProvider
from tests.conftest import missing_component
from tests.harness.fake_vast import FakeVast

pytest.importorskip("vastai.api.instances", reason="the providers extra (vastai) is not installed")

KEY = "vk-7f3a9c2e1b8d4f6a0e5c3b9d7a1f2e4c"
REPO = Path(__file__).resolve().parents[3]
VASTAI_CLI = Path(sys.executable).parent / "vastai"


def _harness_threads() -> list[threading.Thread]:
    return [
        t
        for t in threading.enumerate()
        if t.name == "FakeVast" or "process_request_thread" in t.name
    ]


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """requests honours proxy variables: loopback must be reached directly."""
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("VAST_URL", raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def vast() -> Iterator[FakeVast]:
    fake = FakeVast(KEY).start()
    try:
        yield fake
    finally:
        fake.stop()
    assert _harness_threads() == [], "FakeVast left a thread running"


@pytest.fixture
def provider(vast: FakeVast) -> VastProvider:
    return VastProvider(KEY, vast.url, timeout=5)


def assert_no_key(*texts: object) -> None:
    for text in texts:
        assert KEY not in str(text)
        assert KEY not in repr(text)


# --- listing ---------------------------------------------------------------------------------


def test_instances_maps_every_field(vast: FakeVast, provider: VastProvider) -> None:
    direct = vast.add_instance(4101, label="train-a")
    proxied = vast.add_instance(
        4102, label="notebook", ports={}, image_runtype="jupyter_direc ssh_direc ssh_proxy",
        ssh_host="ssh3.vast.ai", ssh_port=22710, gpu_name="A100 SXM4", num_gpus=4, is_bid=True,
        dph_total=2.4016, storage_total_cost=0.0416, actual_status="exited",
        intended_status="stopped", cur_state="stopped",
    )  # fmt: skip
    loading = vast.add_instance(4103, actual_status="loading", label=None, ports=None)
    vast.add_instance(4104, actual_status=None, intended_status="running")
    vast.add_instance(4105, actual_status="offline")
    vast.add_instance(4106, storage_total_cost=None, instance=None, dph_total=None)

    got = {i.id: i for i in provider.instances()}

    assert got["4101"] == Instance(
        id="4101",
        state="running",
        provider_state="running",
        label="train-a",
        ssh_host="203.0.113.7",  # the direct port, as `vastai ssh-url` picks it
        ssh_port=41022,
        ssh_user="root",
        gpu_model="RTX 4090",
        gpu_count=1,
        hourly=Decimal(str(direct["dph_total"])),
        storage_hourly=Decimal(str(direct["storage_total_cost"])),
        currency="USD",
        billing_mode="on-demand",
    )
    assert got["4102"] == Instance(
        id="4102",
        state="stopped",
        provider_state="exited",
        label="notebook",
        ssh_host="ssh3.vast.ai",
        ssh_port=22711,  # vast.ai's proxy port, one higher for a jupyter image (ssh-url's rule)
        gpu_model="A100 SXM4",
        gpu_count=4,
        hourly=Decimal("2.4016"),
        storage_hourly=Decimal("0.0416"),
        billing_mode="spot",
    )
    assert proxied["is_bid"] is True
    assert got["4103"].state == "starting" and got["4103"].label == ""
    assert (got["4103"].ssh_host, got["4103"].ssh_port) == ("ssh7.vast.ai", loading["ssh_port"])
    assert (got["4104"].state, got["4104"].provider_state) == ("starting", "")
    assert (got["4105"].state, got["4105"].provider_state) == ("other", "offline")
    assert (got["4106"].hourly, got["4106"].storage_hourly) == (None, None)
    assert vast.requests == [("GET", "/api/v1/instances/")]


def test_instances_pages_through_every_instance(vast: FakeVast, provider: VastProvider) -> None:
    for n in range(60):
        vast.add_instance(5000 + n)
    ids = [i.id for i in provider.instances()]
    assert ids == [str(5000 + n) for n in range(60)]
    assert vast.methods("GET") == ["/api/v1/instances/"] * 3  # 25 a page
    assert [q.get("after_token") for q in vast.queries] == [None, "fv-25", "fv-50"]
    assert vast.queries[0]["limit"] == "25"


def test_an_empty_account_lists_nothing(provider: VastProvider) -> None:
    assert provider.instances() == []


# --- reading ---------------------------------------------------------------------------------


def test_read_running(vast: FakeVast, provider: VastProvider) -> None:
    vast.add_instance(777, label="run")
    reading = provider.read(" 777 ")
    assert reading.state == "running"
    assert reading.instance is not None and reading.instance.id == "777"
    assert reading.instance.label == "run"
    assert '"actual_status": "running"' in reading.said and len(reading.said) <= 500
    assert vast.requests == [("GET", "/api/v0/instances/777/")]
    assert vast.queries == [{"owner": "me"}]


def test_read_stopped(vast: FakeVast, provider: VastProvider) -> None:
    vast.add_instance(778, actual_status="exited", intended_status="stopped", cur_state="stopped")
    reading = provider.read("778")
    assert reading.state == "stopped"
    assert reading.instance is not None and reading.instance.provider_state == "exited"


def test_read_a_missing_instance_as_vast_answers_it(vast: FakeVast, provider: VastProvider) -> None:
    reading = provider.read("779")  # HTTP 200 {"instances": null}
    assert (reading.state, reading.instance) == ("gone", None)
    assert reading.said == '{"instances": null}'


def test_read_a_404_is_gone(vast: FakeVast, provider: VastProvider) -> None:
    vast.missing_answer = "404"
    reading = provider.read("780")
    assert reading.state == "gone"
    assert reading.said.startswith("HTTP 404")


@pytest.mark.parametrize(
    ("code", "body", "words"),
    [
        (500, {"success": False, "msg": "database is down"}, "server error (HTTP 500)"),
        (400, {"success": False, "error": "invalid_args", "msg": "bad id"}, "HTTP 400"),
        (200, "<html>maintenance</html>", "cannot read"),
        (200, {"instances": {"id": 781}}, "cannot read"),  # no start_date: vastai cannot read it
    ],
)
def test_read_never_says_gone_on_an_error(
    vast: FakeVast, provider: VastProvider, code: int, body: object, words: str
) -> None:
    vast.add_instance(781)
    vast.status_next("GET", code, body)  # type: ignore[arg-type]
    with pytest.raises(ProviderError) as err:
        provider.read("781")
    assert words in str(err.value)
    assert "vast.ai" in err.value.message
    assert len(err.value.said) <= 500


def test_an_unreachable_api_is_an_error(vast: FakeVast) -> None:
    dead = FakeVast(KEY).start()
    url = dead.url
    dead.stop()
    with pytest.raises(ProviderError, match="Could not reach vast.ai at http://127.0.0.1"):
        VastProvider(KEY, url, timeout=2).read("782")


# --- destroy and stop --------------------------------------------------------------------------


def test_destroy_then_read_gone(vast: FakeVast, provider: VastProvider) -> None:
    vast.add_instance(901)
    said = provider.request("901", "destroy")
    assert '"success": true' in said
    assert vast.methods("DELETE") == ["/api/v0/instances/901/"]
    assert provider.read("901").state == "gone"


def test_stop_then_read_stopped(vast: FakeVast, provider: VastProvider) -> None:
    vast.add_instance(902)
    provider.request("902", "stop")
    assert vast.requests == [("PUT", "/api/v0/instances/902/")]
    assert vast.bodies == [{"state": "stopped"}]
    reading = provider.read("902")
    assert reading.state == "stopped"
    assert reading.instance is not None and reading.instance.provider_state == "exited"


def test_destroy_of_a_missing_instance_names_the_404(provider: VastProvider) -> None:
    with pytest.raises(ProviderError) as err:
        provider.request("903", "destroy")
    assert err.value.message.startswith("vast.ai has no instance 903 (HTTP 404)")
    assert "Instance 903 not found\"." in err.value.message
    assert err.value.said.startswith("HTTP 404")


def test_a_refusal_quotes_vast(vast: FakeVast, provider: VastProvider) -> None:
    vast.add_instance(904)
    vast.refuse_next("destroy", {"success": False, "msg": "Instance is locked by a pending job."})
    with pytest.raises(ProviderError) as err:
        provider.request("904", "destroy")
    assert "Instance is locked by a pending job\"." in err.value.message
    assert '"success": false' in err.value.said
    assert provider.read("904").state == "running"


def test_an_answer_that_does_not_say_success_is_not_one(
    vast: FakeVast, provider: VastProvider
) -> None:
    vast.add_instance(905)
    vast.refuse_next("stop", {"msg": "queued"})
    with pytest.raises(ProviderError, match="does not say it succeeded"):
        provider.request("905", "stop")


def test_a_destroy_that_lingers_for_three_reads(vast: FakeVast, provider: VastProvider) -> None:
    vast.add_instance(906)
    vast.linger(906, reads=3)
    provider.request("906", "destroy")
    assert [provider.read("906").state for _ in range(4)] == [
        "running",
        "running",
        "running",
        "gone",
    ]


# --- the key -------------------------------------------------------------------------------


def test_a_refused_key_is_said_plainly_and_never_shown(vast: FakeVast) -> None:
    vast.add_instance(1001)
    bad = VastProvider(KEY[::-1], vast.url, timeout=5)
    good = VastProvider(KEY, vast.url, timeout=5)
    for call in (bad.instances, lambda: bad.read("1001"), lambda: bad.request("1001", "destroy")):
        with pytest.raises(ProviderError) as err:
            call()
        assert err.value.message.startswith("vast.ai refused the API key (HTTP 401)")
        assert "Invalid user key" in err.value.message
        assert "API key" in err.value.hint and "manage-keys" in err.value.hint
        assert_no_key(err.value, err.value.said, err.value.hint, bad, good)
        assert KEY[::-1] not in f"{err.value} {err.value.said} {err.value.hint!r} {bad!r}"
    assert 1001 in vast.instances
    assert_no_key(*vast.requests, *vast.queries)


def test_an_expired_session_key_404_is_not_gone(vast: FakeVast, provider: VastProvider) -> None:
    """vast.ai answers an expired 2FA session key with a 404: about the key, not the instance."""
    vast.add_instance(1004)
    expired = {"success": False, "msg": "Session expired. Please log in again."}
    vast.status_next("GET", 404, expired)
    with pytest.raises(ProviderError, match=r"refused the API key \(HTTP 404\)"):
        provider.read("1004")
    vast.status_next("DELETE", 404, expired)
    with pytest.raises(ProviderError, match=r"refused the API key \(HTTP 404\)"):
        provider.request("1004", "destroy")
    assert 1004 in vast.instances


def test_a_key_echoed_by_the_server_is_scrubbed(vast: FakeVast, provider: VastProvider) -> None:
    vast.status_next("GET", 500, {"success": False, "msg": f"bad request with key {KEY}"})
    with pytest.raises(ProviderError) as err:
        provider.read("1002")
    assert_no_key(err.value, err.value.said, err.value.message)
    assert "[API key]" in err.value.said


def test_nothing_is_printed(
    vast: FakeVast, provider: VastProvider, capfd: pytest.CaptureFixture[str]
) -> None:
    vast.add_instance(1003)
    provider.instances()
    provider.read("1003")
    provider.request("1003", "stop")
    with pytest.raises(ProviderError):
        VastProvider("wrong-key-123", vast.url).read("1003")
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


# --- time, base URL, ids -------------------------------------------------------------------


def test_a_hang_longer_than_the_timeout_is_an_error_in_bounded_time(vast: FakeVast) -> None:
    vast.add_instance(1101)
    quick = VastProvider(KEY, vast.url, timeout=1)
    with vast.hanging("GET"):
        started = time.monotonic()
        with pytest.raises(ProviderError) as err:
            quick.read("1101")
        elapsed = time.monotonic() - started
    # vastai tries twice (retry=2) with a 0.15 s pause: about 2 x timeout.
    assert 1.0 <= elapsed < 4.0, elapsed
    assert err.value.message == "vast.ai did not answer within 1 s while reading instance 1101."
    assert len(vast.methods("GET")) == 2


def test_vast_url_is_read_when_no_base_is_given(
    vast: FakeVast, monkeypatch: pytest.MonkeyPatch
) -> None:
    vast.add_instance(1201)
    monkeypatch.setenv("VAST_URL", vast.url)
    assert [i.id for i in VastProvider(KEY, timeout=5).instances()] == ["1201"]
    # an explicit base outranks VAST_URL
    monkeypatch.setenv("VAST_URL", "http://127.0.0.1:9")
    assert VastProvider(KEY, vast.url + "/", timeout=5).read("1201").state == "running"
    monkeypatch.delenv("VAST_URL")
    assert VastProvider(KEY).api_base == "https://console.vast.ai"


@pytest.mark.parametrize(
    "bad",
    ["-1", "--all", "12 34", "abc", "", "   ", "0", "0123", "1234567890123", "1e5", "4.2",
     "\u0661\u0662", "12\n34", "+12", "12/../13"],
)  # fmt: skip
def test_check_id_refuses_what_is_not_a_vast_id(vast: FakeVast, bad: str) -> None:
    provider = VastProvider(KEY, vast.url)
    with pytest.raises(ValidationError) as err:
        provider.check_id(bad)
    assert err.value.field == "instance_id"
    assert "vast.ai instance id" in err.value.message
    with pytest.raises(ValidationError):
        provider.read(bad)
    with pytest.raises(ValidationError):
        provider.request(bad, "destroy")
    assert vast.requests == []


def test_check_id_strips(provider: VastProvider) -> None:
    assert provider.check_id(" 123456789012 \n") == "123456789012"


# --- importing -----------------------------------------------------------------------------


def _python(code: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "desktop"), str(REPO)])}
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def test_the_module_does_not_import_vastai() -> None:
    done = _python(
        "import sys, gpu_companion.core.providers.vast as v; "
        "print(v.VastProvider('k' * 10).name, 'vastai' in sys.modules, 'requests' in sys.modules)"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["vast.ai", "False", "False"]


def test_it_works_without_a_console(vast: FakeVast) -> None:
    """pythonw and a frozen GUI build run with sys.stdout None: vastai's import reads it."""
    vast.add_instance(1301)
    done = _python(
        "import sys; real = sys.stdout; sys.stdout = None\n"
        "from gpu_companion.core.providers.vast import VastProvider\n"
        f"ids = [i.id for i in VastProvider({KEY!r}, {vast.url!r}, timeout=5).instances()]\n"
        "assert sys.stdout is None\n"
        "real.write(' '.join(ids))\n"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "1301"


# --- the CLI, and why the app does not drive it ---------------------------------------------


def test_the_vastai_cli_destroy_aborts_without_a_terminal_and_exits_0(vast: FakeVast) -> None:
    """`vastai destroy instance ID` asks for a confirmation on stdin; with none it prints
    "Aborted." and exits 0 having sent nothing; with -y a refused destroy exits 0 too: its exit
    code says nothing about a destroy."""
    if not VASTAI_CLI.exists():
        missing_component(f"no vastai CLI at {VASTAI_CLI} (the providers extra installs it)")
    vast.add_instance(1401)
    env = {**os.environ, "VASTAI_NO_UPDATE_CHECK": "1"}
    done = subprocess.run(
        [str(VASTAI_CLI), "destroy", "instance", "1401", "--url", vast.url, "--api-key", KEY],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Are you sure you want to destroy instance 1401?" in done.stdout
    assert done.stdout.rstrip().endswith("Aborted.")
    assert vast.methods("DELETE") == []
    assert 1401 in vast.instances
    assert VastProvider(KEY, vast.url).read("1401").state == "running"
    # and with -y, a destroy vast.ai answers 404 for also exits 0 (the message goes to stderr)
    done = subprocess.run(
        [str(VASTAI_CLI), "destroy", "instance", "1499", "-y", "--url", vast.url, "--api-key", KEY],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip
    assert done.returncode == 0
    assert "Failed with error 404: Instance 1499 not found." in done.stderr
    assert vast.methods("DELETE") == ["/api/v0/instances/1499/"]
