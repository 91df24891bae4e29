#!/usr/bin/env python3
"""Writes docs/troubleshooting.md from the app's own messages, so the page says what the app says.

    python scripts/make_troubleshooting.py          # rewrite the page
    python scripts/make_troubleshooting.py --check  # exit 1 when the page is out of date
    python scripts/make_troubleshooting.py --lang zh_CN [--check]  # docs/zh_CN/troubleshooting.md

The tables come from core/transfers/rsync/errors.py (exit codes and the output lines that refine
them), core/monitor/nvsmi_errors.py, core/system/envcheck.py and core/common/validation.py; the
provider tables from core/providers/ (vast.ai's and RunPod's adapters on prepared HTTP answers,
through their own client code), core/release/gate.py and recovery.py (on a stand-in provider
in a temporary store) and core/providers/reconcile.py; the prose around them is here.

With `--lang zh_CN` the app's language is installed first, so its messages come from the
catalogs in resources/i18n/zh_CN/, and the words written here come from PROSE["zh_CN"] and ZH.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "desktop"))

from gpu_companion.core.common.errors import UserError, ValidationError  # noqa: E402
from gpu_companion.core.common.i18n import _  # noqa: E402
from gpu_companion.core.common.validation import (  # noqa: E402
    validate_alias,
    validate_hostname,
    validate_port,
    validate_user,
)
from gpu_companion.core.monitor import nvsmi_errors  # noqa: E402
from gpu_companion.core.system import envcheck  # noqa: E402
from gpu_companion.core.transfers.rsync import errors as rsync_errors  # noqa: E402

OUT = REPO / "docs" / "troubleshooting.md"
# The page of each language; the app's messages in it are in that language too.
OUTS = {"en": OUT, "zh_CN": REPO / "docs" / "zh_CN" / "troubleshooting.md"}
LANG = "en"  # the page being written (--lang)


def t(text: str) -> str:
    """A label this script writes (a table's header, a situation) in the page's language."""
    if LANG == "en":
        return text
    if text not in ZH:
        raise KeyError(f"no Chinese for {text!r}: add it to ZH in scripts/make_troubleshooting.py")
    return ZH[text]


def prose(name: str, **fields: object) -> list[str]:
    """A block of PROSE in the page's language, as lines (`fields` filled in when given)."""
    text = PROSE[LANG][name]
    return (text.format(**fields) if fields else text).split("\n")


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def agent_messages() -> list[str]:
    """What ssh prints when the app's agent is not running, and the words for a refused key."""
    from pathlib import Path as P

    from gpu_companion.core.hosts.registry import Host
    from gpu_companion.core.ssh.agent import IDENTITY_DIR, auth_help

    class Key:
        platform, kind, fingerprint = "vast.ai", "ed25519", t("SHA256:<the key's fingerprint>")
        public_path = P("~/.local/share/gpu-companion/keys/vast.ai.pub")

    class Vault:
        def platform_of(self, _host: object) -> str:
            return "vast.ai"

        def key(self, _platform: str) -> Key:
            return Key()

    host = Host("gpu1", "203.0.113.7", 41022, "root")
    return [
        *prose("agent"),
        "",
        f"    no such identity: /run/user/1000/gpu-companion-1000-…/{IDENTITY_DIR}/vast.ai: No "
        "such file or directory",
        "    root@203.0.113.7: Permission denied (publickey).",
        "",
        *prose("agent_refused"),
        "",
        f"> {auth_help(host, Vault())}",  # type: ignore[arg-type]
    ]


def rsync_codes() -> list[str]:
    rows = [
        t("| exit code | kind | what the app tells you | retry helps |"),
        "| --- | --- | --- | --- |",
    ]
    for code in sorted(rsync_errors._EXITS):
        if code == 0:
            continue
        info = rsync_errors.explain_exit_code(code)
        rows.append(
            f"| {code} | {t(info.category)} | {cell(info.message)} | "
            f"{t('yes') if info.retryable else t('no')} |"
        )
    return rows


def rsync_hints() -> list[str]:
    rows = [t("| the output contains | what the app tells you |"), "| --- | --- |"]
    for pattern, _category, message, _retry in rsync_errors._OUTPUT_HINTS:
        readable = re.sub(r"\\\(|\(\?:|\)|\\", "", pattern.pattern).replace("|", " / ")
        # the table holds the English (N_); the app shows it through _said, translated
        rows.append(f"| {cell(readable)} | {cell(rsync_errors._said(message))} |")
    return rows


def gpu_errors() -> list[str]:
    samples = {
        "GPU lost": "Unable to determine the device handle for GPU0000:3B:00.0: GPU is lost.",
        "driver/library mismatch": "Failed to initialize NVML: Driver/library version mismatch",
        "no driver": "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
        "driver.",
        "inside a container": "Failed to initialize NVML: Unknown Error",
        "not installed": "bash: nvidia-smi: command not found",
        "no GPU": "No devices were found",
    }
    rows = [t("| nvidia-smi prints | the app says | what to do |"), "| --- | --- | --- |"]
    for sample in samples.values():
        err = nvsmi_errors.detect_gpu_error(sample)
        assert err is not None, sample
        rows.append(f"| `{cell(sample)}` | {cell(err.message)} | {cell(err.hint)} |")
    return rows


def field_messages() -> list[str]:
    cases = [
        (validate_alias, "gpu box"),
        (validate_alias, "-x"),
        (validate_hostname, "host#1"),
        (validate_hostname, "exämple.com"),
        (validate_user, "9root"),
        (validate_port, "70000"),
    ]
    rows = [t("| you typed | the app says |"), "| --- | --- |"]
    for fn, value in cases:
        try:
            fn(value)
        except ValidationError as exc:
            rows.append(f"| `{value}` | {cell(exc.message)} |")
    return rows


def install_lines() -> list[str]:
    systems = [
        ("Debian, Ubuntu", envcheck.OsInfo("linux", ("debian",))),
        ("Fedora, RHEL", envcheck.OsInfo("linux", ("fedora",))),
        ("Arch", envcheck.OsInfo("linux", ("arch",))),
        ("openSUSE", envcheck.OsInfo("linux", ("opensuse",))),
        ("macOS", envcheck.OsInfo("darwin")),
        ("Windows", envcheck.OsInfo("windows")),
    ]
    rows = [t("| system | ssh, ssh-agent | rsync | keyring |"), "| --- | --- | --- | --- |"]
    # "Install it with: " in the page's language: the table shows the commands alone
    prefix = _("Install it with: {command}").format(command="")
    for name, info in systems:
        hints = [
            envcheck.install_hint(tool, info).removeprefix(prefix)
            for tool in ("ssh", "rsync", "keyring")
        ]
        rows.append(f"| {name} | " + " | ".join(cell(h) for h in hints) + " |")
    return rows


def connection_messages() -> list[str]:
    """Each failure kind as the app words it, produced by the real classifier."""
    import socket
    import tempfile
    from pathlib import Path

    import paramiko
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from gpu_companion.core.hosts.registry import Host
    from gpu_companion.core.ssh.connection import ConnectionProblem, SessionFactory
    from gpu_companion.core.ssh.keys import to_paramiko
    from gpu_companion.core.ssh.vault import KeyVault
    from gpu_companion.core.storage.store import Store

    host = Host("gpu1", "203.0.113.7", 41022, "root")
    where = "203.0.113.7:41022"  # as connect() words it
    # fixed example keys, so the page does not change from one run to the next
    offered, before = (
        to_paramiko(Ed25519PrivateKey.from_private_bytes(bytes([seed]) * 32)) for seed in (1, 2)
    )
    empty = paramiko.HostKeys()
    known = paramiko.HostKeys()
    known.add("[203.0.113.7]:41022", before.get_name(), before)
    refused = paramiko.ssh_exception.NoValidConnectionsError(
        {("203.0.113.7", 41022): ConnectionRefusedError(111, "Connection refused")}
    )
    cases = [
        ("first contact", paramiko.SSHException("not found in known_hosts"), offered, empty),
        ("host key changed", paramiko.BadHostKeyException("h", offered, before), None, known),
        ("key refused", paramiko.AuthenticationException("Authentication failed."), None, empty),
        ("name not found", socket.gaierror(-2, "Name or service not known"), None, empty),
        ("refused", refused, None, empty),
        ("timeout", TimeoutError("timed out"), None, empty),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "db.sqlite3")
        try:
            factory = SessionFactory(KeyVault(store, Path(tmp) / "keys"), Path(tmp) / "kh")
            problems = [
                (what, factory._explain(exc, host, where, key, hk)) for what, exc, key, hk in cases
            ]
            try:
                factory.connect(host)  # no platform, so no key: the app says so before dialling
            except ConnectionProblem as exc:
                problems.append(("no key", exc))
        finally:
            store.close()
    rows = [t("| situation | what the app tells you | what to do |"), "| --- | --- | --- |"]
    for what, problem in problems:
        rows.append(f"| {t(what)} | {cell(problem.message)} | {cell(problem.hint)} |")
    return rows


# --- providers ------------------------------------------------------------------------------
# Every text comes from the adapters, the gate, the recovery and the sync themselves, run on
# prepared answers: only the HTTP round trip, the provider in a release and the keyring are
# stand-ins.

IID, POD = "4242", "iaw3m6iyadpmgq"  # the example vast.ai instance and RunPod pod
EXAMPLE_KEY = "example-api-key-0000"  # never shown: the adapters scrub it out
AT = "2026-03-07T14:15:00+00:00"  # the example clock of a release and of its recovery
NEEDS_HOST = ("checkpoints", "archive", "leftovers", "processes")  # checklist items left out
BAD_GATEWAY = "<html>502 Bad Gateway</html>"

Row = tuple[str, str, str]  # situation, what the app tells you, what to do


def provider_table(rows: list[Row]) -> list[str]:
    out = [t("| situation | what the app tells you | what to do |"), "| --- | --- | --- |"]
    for what, message, hint in rows:
        out.append(f"| {t(what)} | {cell(message)} | {cell(hint) or '—'} |")
    return out


def row(what: str, exc: UserError) -> Row:
    return what, exc.message, exc.hint


def error_of(call: Callable[[], object]) -> UserError:
    try:
        call()
    except UserError as exc:
        return exc
    raise AssertionError(f"{call} did not refuse")


def http_answer(code: int, body: str) -> Any:
    """A `requests` response as the provider's server would send it."""
    import requests

    response = requests.Response()
    response.status_code, response.encoding = code, "utf-8"
    response._content = body.encode()
    return response


def vast_error(call: str, answer: object, instance_id: str = IID) -> UserError:
    """What VastProvider says when vast.ai's own client code (vastai.api) gets `answer` while
    listing, reading or destroying the instance: only its VastClient is replaced."""
    from gpu_companion.core.providers.vast import DEFAULT_API_BASE, VastProvider

    class Answered:  # stands in for vastai's VastClient: every request gets `answer`
        def send(self, *_args: object, **_kwargs: object) -> object:
            if isinstance(answer, Exception):
                raise answer
            return answer

        get = put = delete = send

    class Vast(VastProvider):
        def _client(self, *_args: object) -> Answered:
            return Answered()

    provider = Vast(EXAMPLE_KEY, DEFAULT_API_BASE)  # not $VAST_URL: the page is the same anywhere
    calls = {
        "list": provider.instances,
        "read": lambda: provider.read(instance_id),
        "destroy": lambda: provider.request(instance_id, "destroy"),
    }
    return error_of(calls[call])


def runpod_error(call: str, answer: object, key: str = EXAMPLE_KEY) -> UserError:
    """What RunPodProvider says when RunPod's SDK (`run_graphql_query`) gets `answer` while
    listing, reading or terminating the example pod: only its HTTP post is replaced."""
    from unittest import mock

    import runpod.api.graphql

    from gpu_companion.core.providers.runpod import RunPodProvider

    def post(*_args: object, **_kwargs: object) -> object:
        if isinstance(answer, Exception):
            raise answer
        return answer

    provider = RunPodProvider(key)
    calls = {
        "list": provider.instances,
        "read": lambda: provider.read(POD),
        "destroy": lambda: provider.request(POD, "destroy"),
    }
    with mock.patch.object(runpod.api.graphql, "requests", SimpleNamespace(post=post)):
        return error_of(calls[call])


def not_installed(module: str, call: Callable[[], object]) -> UserError:
    """The adapter's words when the providers extra is missing (`module` cannot be imported)."""
    from unittest import mock

    with mock.patch.dict(sys.modules, {module: None}):
        return error_of(call)


def vast_rows() -> list[Row]:
    import requests

    from gpu_companion.core.providers.vast import VastProvider

    refused = '{"success": false}'
    expired = '{"success": false, "msg": "Session expired. Please log in again."}'
    cases = [
        ("key refused (HTTP 401)", "list", http_answer(401, refused)),
        ("two-factor session expired (HTTP 404)", "list", http_answer(404, expired)),
        ("key without the permission (HTTP 403)", "list", http_answer(403, refused)),
        ("destroy of an id vast.ai does not have (HTTP 404)", "destroy", http_answer(404, refused)),
        ('destroy answered `{"success": false}`', "destroy", http_answer(200, refused)),
        ('destroy answered without `"success": true`', "destroy", http_answer(200, "{}")),
        ("too many requests (HTTP 429)", "destroy", http_answer(429, refused)),
        ("server error (HTTP 502)", "read", http_answer(502, BAD_GATEWAY)),
        ("no answer in time", "destroy", requests.Timeout("read timed out")),
        ("no connection", "list", requests.ConnectionError("Network is unreachable")),
        ("an answer that is not JSON", "read", http_answer(200, "<html>maintenance</html>")),
    ]
    rows = [row(what, vast_error(call, answer)) for what, call, answer in cases]
    vast = VastProvider(EXAMPLE_KEY)
    return [
        *rows,
        row("client not installed", not_installed("vastai.api.client", vast.instances)),
        # the container's name in vast.ai's ssh prompt, not the instance id
        row("instance id `C.4242`", error_of(lambda: vast.check_id("C.4242"))),
    ]


def runpod_rows() -> list[Row]:
    import requests

    from gpu_companion.core.providers.runpod import RunPodProvider

    refusal = '{"errors": [{"message": "(RunPod\'s own words)"}], "data": null}'
    cases = [
        ("key refused (HTTP 401)", "list", http_answer(401, "")),
        ("RunPod refused the terminate", "destroy", http_answer(200, refusal)),
        ("terminate answered without `podTerminate`", "destroy", http_answer(200, '{"data": {}}')),
        ("server error page (HTTP 502)", "read", http_answer(502, BAD_GATEWAY)),
        ("no answer in time", "destroy", requests.Timeout("read timed out")),
        ("no connection", "list", requests.ConnectionError("Network is unreachable")),
    ]
    rows = [row(what, runpod_error(call, answer)) for what, call, answer in cases]
    runpod = RunPodProvider(EXAMPLE_KEY)
    ssh_user = f"{POD}-64410f3b"  # what RunPod's ssh command shows before the @
    return [
        *rows,
        row("no API key for the account", runpod_error("list", http_answer(200, "{}"), key="")),
        row("client not installed", not_installed("runpod.api.graphql", runpod.instances)),
        row(f"pod id `{ssh_user}`", error_of(lambda: runpod.check_id(ssh_user))),
    ]


def custom_rows() -> list[Row]:
    from gpu_companion.core.providers.custom import CustomCommands

    verify = {"verify": "mycloud show {instance_id}", "gone_when": "not found"}
    cases = [
        ("the release command calls `vastai`",
         CustomCommands("vastai destroy instance {instance_id}", **verify)),
        ("the release command calls `runpodctl`",
         CustomCommands("runpodctl remove pod {instance_id}", **verify)),
        ("no verify command, or no words to read",
         CustomCommands("mycloud delete {instance_id} --yes")),
        ("an unknown placeholder", CustomCommands("mycloud delete {id} --yes", **verify)),
    ]  # fmt: skip
    return [row(what, error_of(commands.validated)) for what, commands in cases]


class StubProvider:
    """The stand-in for a provider: its instance reads as `reads` say (the last one repeats),
    every read fails with `unreadable` when given, the destroy request raises `refusal` (what
    an adapter raised) or is accepted, and `listed` is the account's list."""

    def __init__(
        self,
        reads: tuple[str, ...] = ("running",),
        refusal: UserError | None = None,
        unreadable: UserError | None = None,
        listed: tuple[object, ...] = (),
    ) -> None:
        self.name, self.reads, self.refusal = "vast.ai", list(reads), refusal
        self.unreadable, self.listed = unreadable, list(listed)

    def check_id(self, instance_id: str) -> str:
        return instance_id.strip()

    def instances(self) -> list[object]:
        return self.listed

    def read(self, instance_id: str) -> object:
        from gpu_companion.core.providers.model import Reading

        if self.unreadable is not None:
            raise self.unreadable
        state = self.reads.pop(0) if len(self.reads) > 1 else self.reads[0]
        return Reading(state, said=f'{{"id": {instance_id}, "actual_status": "{state}"}}')  # type: ignore[arg-type]

    def request(self, instance_id: str, action: str) -> str:
        if self.refusal is not None:
            raise self.refusal
        return '{"success": true}'


class Keyring:
    """The OS keyring's three calls, on a dict."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def secret(self, name: str) -> str | None:
        return self.values.get(name)

    def set_secret(self, name: str, value: str) -> None:
        self.values[name] = value

    def delete_secret(self, name: str) -> None:
        self.values.pop(name, None)


@contextmanager
def example_store() -> Iterator[Any]:
    """A store in a temporary folder with the example platforms."""
    import tempfile

    from gpu_companion.core.hosts.registry import HostRegistry, Platform
    from gpu_companion.core.storage.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "db.sqlite3")
        try:
            for name in ("vast.ai", "RunPod", "Lambda"):
                HostRegistry(store).save_platform(Platform(name))
            yield store
        finally:
            store.close()


def platform_id(store: Any, name: str) -> int:
    from gpu_companion.core.hosts.registry import HostRegistry

    return next(p.id for p in HostRegistry(store).platforms() if p.name == name)


def add_host(store: Any, alias: str, platform: str, instance_id: str, state: str = "active") -> Any:
    from gpu_companion.core.hosts.registry import Host, HostRegistry

    return HostRegistry(store).save_host(
        Host(alias, "203.0.113.7", 41022, "root", platform_id(store, platform),
             instance_id=instance_id, state=state)
    )  # fmt: skip


def release_services(store: Any) -> Any:
    """The gate's services on `store`, with a clock of its own: a read back "waits" its 3 s
    between reads without sleeping, and a release happens at AT."""
    from datetime import datetime

    from gpu_companion.core.hosts.registry import HostRegistry
    from gpu_companion.core.release import ReleaseServices
    from gpu_companion.core.release.journal import ReleaseJournal
    from gpu_companion.core.release.record import StoreReleaseLedger
    from gpu_companion.core.spend.ledger import SpendLedger

    elapsed = [0.0]
    return ReleaseServices(
        StoreReleaseLedger(store, SpendLedger(store)),
        HostRegistry(store),
        SimpleNamespace(remove_host=lambda alias: None),  # type: ignore[arg-type]
        ReleaseJournal(store),
        clock=lambda: datetime.fromisoformat(AT),
        sleep=lambda s: elapsed.__setitem__(0, elapsed[0] + s),
        mono=lambda: elapsed[0],
    )


def release_rows() -> list[Row]:
    """release_host itself on host gpu1 (an override, so no checklist item needs the host), with
    the stub provider, then with a custom platform's commands."""
    import requests

    from gpu_companion.core.providers.custom import (
        CommandResult,
        CustomCommands,
        CustomProvider,
        target_of,
    )
    from gpu_companion.core.release import ChecklistConfig, Override, ReleaseChecklist, release_host
    from gpu_companion.core.release.gate import InstanceAction

    refused = vast_error("destroy", http_answer(200, '{"success": false}'))
    no_answer = vast_error("destroy", requests.Timeout("read timed out"))

    def mycloud(argv: list[str]) -> CommandResult:  # a custom platform's CLI, as the app runs it
        if argv[1] == "delete":
            return CommandResult(1, "mycloud: not logged in (run mycloud login)")
        if argv[1] == "show":
            return CommandResult(0, f"{argv[2]} running")
        return CommandResult(2, f"mycloud: unknown command '{argv[1]}'")

    with example_store() as store:
        host = add_host(store, "gpu1", "vast.ai", IID)
        services = release_services(store)
        checklist = ReleaseChecklist.build(host, ChecklistConfig(disabled=NEEDS_HOST))
        works = CustomCommands("mycloud delete {instance_id} --yes", "mycloud show {instance_id}",
                               gone_when="not found", running_when="running")  # fmt: skip
        typo = CustomCommands(works.release, "mycloud status {instance_id}", "not found")

        def release(provider: object) -> UserError:
            action = InstanceAction(provider, IID)  # type: ignore[arg-type]
            override = Override("gpu1", "an example")
            return error_of(lambda: release_host(checklist, services, action, override))

        return [
            row("vast.ai has no such instance already", release(StubProvider(reads=("gone",)))),
            row('the destroy answered `{"success": false}`',
                release(StubProvider(refusal=refused))),
            row("the destroy got no answer and the instance still runs",
                release(StubProvider(refusal=no_answer))),
            row("still running at the deadline", release(StubProvider())),
            row("a custom platform's release command failed",
                release(CustomProvider("mycloud", works, target_of(host), run=mycloud))),
            row("a custom platform's verify command failed",
                release(CustomProvider("mycloud", typo, target_of(host), run=mycloud))),
        ]  # fmt: skip


def setup_rows() -> list[Row]:
    """Provider accounts (on a dict keyring) and what a release needs of a host."""
    from gpu_companion.core.hosts.registry import HostRegistry
    from gpu_companion.core.providers.accounts import ProviderAccounts, kind_of, require_account
    from gpu_companion.core.release.record import ChecklistSettings
    from gpu_companion.core.release.wiring import ReleaseWiring

    with example_store() as store:
        registry, keyring = HostRegistry(store), Keyring()
        accounts = ProviderAccounts(store, registry, keyring)
        account = accounts.add("vast.ai", EXAMPLE_KEY, platform="vast.ai")
        s = release_services(store)
        wiring = ReleaseWiring(registry, ChecklistSettings(store), s.ledger, Path("."), None,
                               None, s.ssh_config, accounts, s.journal)  # type: ignore[arg-type]  # fmt: skip
        no_id = add_host(store, "gpu2", "vast.ai", "")
        by_hand = add_host(store, "gpu3", "Lambda", "")
        keyring.values.clear()  # the key was deleted from the keyring outside the app
        cases = [
            ("the account's key is not in the keyring", lambda: accounts.provider(account)),
            ("an API key that cannot be one", lambda: accounts.add("runpod", "my key")),
            ("a provider the app does not talk to", lambda: kind_of("lambda")),
            ("`providers test lambda`: no such account",
             lambda: require_account(accounts, "lambda")),
            ("a release through the account of a host without an instance id",
             lambda: wiring.instance_action(no_id, "destroy")),
            ("`release --stop` on a platform without an account",
             lambda: wiring.instance_action(by_hand, "stop")),
        ]  # fmt: skip
        return [row(what, error_of(call)) for what, call in cases]


def recovery_rows() -> list[Row]:
    """resolve_interrupted on the journal entries a killed release left, after the destroy was
    asked: one instance gone now, one still running, one whose provider does not answer."""
    import requests

    from gpu_companion.core.common.notifier import Notifier
    from gpu_companion.core.release.gate import InstanceAction
    from gpu_companion.core.release.journal import ReleaseJournal
    from gpu_companion.core.release.recovery import resolve_interrupted

    class NextStart(ReleaseJournal):  # the process that wrote the entries is gone
        def orphaned(self) -> list[Any]:
            return self.open_entries()

        def adopt(self, entry_id: int) -> bool:
            return True

    silent = vast_error("read", requests.Timeout("read timed out"), str(int(IID) + 2))
    providers = {
        "gpu1": StubProvider(reads=("gone",)),
        "gpu2": StubProvider(reads=("running",)),
        "gpu3": StubProvider(unreadable=silent),
    }
    with example_store() as store:
        services = release_services(store)
        services.journal = journal = NextStart(store)
        for n, alias in enumerate(providers):
            host = add_host(store, alias, "vast.ai", str(int(IID) + n))
            entry = journal.open(
                host_id=host.id, host_alias=alias, platform_id=host.platform_id,
                provider="vast.ai", instance_id=host.instance_id, action="destroy",
                kind="release", at=services.clock(),
                record={"host_alias": alias, "kind": "release", "at": AT},
            )  # fmt: skip
            journal.step(entry, "requested", '{"success": true}')
        wiring = SimpleNamespace(
            registry=services.registry,
            journal=journal,
            services=lambda: services,
            instance_action=lambda h, _action: InstanceAction(providers[h.alias], h.instance_id),
        )
        said = resolve_interrupted(wiring, Notifier())  # type: ignore[arg-type]
    situations = ("the instance is gone now", "the instance still runs", "vast.ai does not answer")
    return [(what, text, "") for what, text in zip(situations, said, strict=True)]


def sync_rows() -> list[Row]:
    """One ProviderSync of two example accounts: vast.ai lists two running instances (one the
    app does not know, one of a host it believes released) and no longer lists gpu1's; RunPod
    refuses the key. Then an import of an instance vast.ai no longer has."""
    from decimal import Decimal

    from gpu_companion.core.common.notifier import Notifier
    from gpu_companion.core.hosts.registry import HostRegistry
    from gpu_companion.core.providers.accounts import Account
    from gpu_companion.core.providers.model import Instance
    from gpu_companion.core.providers.reconcile import ProviderSync
    from gpu_companion.core.spend.ledger import SpendLedger

    listed = (
        Instance("4240", "running", "running", gpu_model="RTX 4090", gpu_count=1,
                 hourly=Decimal("0.40")),
        Instance("4244", "running", "running", label="train-b", gpu_model="A100 SXM4",
                 gpu_count=2, hourly=Decimal("2.80")),
    )  # fmt: skip
    with example_store() as store:
        add_host(store, "gpu0", "vast.ai", "4240", state="released")
        add_host(store, "gpu1", "vast.ai", IID)
        vast = Account(1, "vast.ai", platform_id(store, "vast.ai"), "vast.ai")
        runpod = Account(2, "runpod", platform_id(store, "RunPod"), "RunPod")
        answers: dict[Account, Any] = {
            vast: StubProvider(listed=listed),
            runpod: runpod_error("list", http_answer(401, "")),
        }

        def provider(account: Account) -> Any:
            if isinstance(answers[account], Exception):
                raise answers[account]
            return answers[account]

        accounts = SimpleNamespace(accounts=lambda: list(answers), provider=provider)
        notifier, notices = Notifier(), []
        notifier.subscribe(notices.append)
        sync = ProviderSync(accounts, HostRegistry(store), SpendLedger(store), notifier)  # type: ignore[arg-type]
        released, unknown = sync.sync().orphans
        answers[vast] = StubProvider(reads=("gone",))
        no_longer = error_of(lambda: sync.import_instance(vast, "4245"))
    said = {m.key.split(":")[0]: m.text for m in notices}
    return [
        ("an instance runs that the app does not know", unknown.text(), ""),
        ("an instance runs whose host the app believes released", released.text(), ""),
        ("a known instance is no longer listed", said["gone"], ""),
        ("an account cannot be read", said["provider-error"], ""),
        row("an import of an instance that is gone", no_longer),
    ]


def provider_lines() -> list[str]:
    lines = [
        *prose("providers", iid=IID, pod=POD),
        "",
        *prose("vast"),
        "",
        *provider_table(vast_rows()),
        "",
        *prose("runpod"),
        "",
        *provider_table(runpod_rows()),
        "",
        *prose("accounts"),
        "",
        *provider_table(setup_rows()),
        "",
        *prose("custom"),
        "",
        *provider_table(custom_rows()),
        "",
        *prose("release"),
        "",
        *provider_table(release_rows()),
        "",
        *prose("recovery"),
        "",
        *provider_table(recovery_rows()),
        "",
        *prose("sync"),
        "",
        *provider_table(sync_rows()),
    ]
    assert not any(EXAMPLE_KEY in line for line in lines), "an API key reached the page"
    return lines


def render() -> str:
    parts = [
        *prose("head"),
        "",
        *prose("first_run"),
        "",
        *install_lines(),
        "",
        *prose("keyring"),
        "",
        *prose("ssh_output"),
        "",
        *rsync_hints(),
        "",
        *prose("agent_head"),
        "",
        *agent_messages(),
        "",
        *prose("connecting"),
        "",
        *connection_messages(),
        "",
        *prose("providers_head"),
        "",
        *provider_lines(),
        "",
        *prose("transfers"),
        "",
        *rsync_codes(),
        "",
        *prose("gpu"),
        "",
        *gpu_errors(),
        "",
        *prose("fields"),
        "",
        *field_messages(),
        "",
        *prose("no_start"),
        "",
    ]
    return "\n".join(parts)


# The words of the page that are not the app's: one dict per language, the same names in each.
PROSE: dict[str, dict[str, str]] = {
    "en": {
        "head": """\
# Troubleshooting

<!-- Generated by scripts/make_troubleshooting.py from the app's own messages: edit the
     script (or the messages in desktop/gpu_companion/core/), then run it again. -->

Every message below is the exact text GPU Companion shows. Find the one you saw, then do
what its row says. The log file (Settings → Logs → Open folder) has the details of
anything unexpected.""",
        "first_run": """\
## First run: something is missing on this computer

The welcome dialog, **Settings → Check this computer…** and `gpu-companion doctor` check
the system keyring, `ssh`, `ssh-agent` and `rsync`. For anything missing they print the
install command for your system:""",
        "keyring": """\
**The system keyring is locked and could not be unlocked.** Log in to your desktop
session (the login password unlocks the default keyring), or open your keyring manager
(Passwords and Keys, KWalletManager, Keychain Access) and unlock it, then *Check again*.

**No system keyring was found.** GPU Companion keeps private keys only in the system
keyring and never in plain files, so key generation stays off until one exists. On a
desktop without one, install gnome-keyring (or use KWallet) and log in again.""",
        "ssh_output": """\
## Host key changed, key refused, disk full: what ssh and rsync said

During a transfer the app reads ssh's and rsync's output; these lines say more than
the exit code, so their message wins (core/transfers/rsync/errors.py):""",
        "agent_head": "## `ssh ALIAS` in a terminal, and a key the host refused",
        "agent": """\
The managed entries send `ssh`, `scp` and rsync to GPU Companion's own ssh-agent, which
runs while the app runs (window or tray) and holds each platform's key from the keyring.
With the app closed, a terminal prints:""",
        "agent_refused": """\
Start the app (the tray is enough) and run the command again. When the host itself
refuses the key, a transfer stops at once, without retries, and says:""",
        "connecting": """\
## Connecting: what the app's own SSH connections say

Test connection, the monitor, the self-check and the release checklist connect with the
platform's key from the keyring and the app's own known_hosts (core/ssh/connection.py).
Example host `gpu1` (`root` at 203.0.113.7, port 41022):""",
        "providers_head": "## Providers: what vast.ai, RunPod and a release said",
        "providers": """\
With a provider account the app talks to vast.ai's and RunPod's APIs through their own
client code (see [Providers](user-guide.md#providers) in the user guide); the API key
never appears in a message. Examples: host `gpu1`, vast.ai instance {iid}, RunPod pod
`{pod}`.""",
        "vast": "**vast.ai** (at https://console.vast.ai, or `VAST_URL`):",
        "runpod": "**RunPod** (at https://api.runpod.io, or `RUNPOD_API_BASE_URL`):",
        "accounts": """\
**Accounts, and a host's instance id** (`gpu-companion providers …`, *Provider
accounts…* on the Hosts page, a release):""",
        "custom": """\
**A custom platform's commands** (**Checklist settings…** on the Release page) are
refused when they could not confirm a release:""",
        "release": """\
**A release** counts only once the provider reports the instance gone (or stopped): the
instance is read, the destroy is asked, then it is read back every 3 s for up to 180 s
(`gpu-companion release ALIAS --within S`). Anything else keeps the meter going and the
host active, says what the provider said, and makes `gpu-companion release` exit 3:""",
        "recovery": """\
**After a crash in the middle of a release**, the next start (the window, the tray,
`gpu-companion watch` or the next `gpu-companion release`) reads each interrupted
release's instance back:""",
        "sync": """\
**Sync** (*Sync providers* on the Hosts page, `gpu-companion providers sync`, and every
5 minutes while the window, the tray or `gpu-companion watch` runs). A forgotten
instance is listed under *Forgotten instances…* on the Hosts page: *Import* meters it,
*Import and release…* meters it and opens its release; in a terminal,
`gpu-companion providers import ACCOUNT ID` imports it:""",
        "transfers": """\
## Transfers stopped: rsync exit codes

When a transfer stops, the app reads rsync's exit code and its last lines.
"Retry helps" means starting the same transfer again is likely to work; files that
already arrived are not sent twice.""",
        "gpu": "## The GPU stopped reporting",
        "fields": """\
## A field was refused when adding a host

Values end up in ssh config files and remote commands, so anything that could inject
a directive is refused, with the reason next to the field:""",
        "no_start": """\
## The app does not start

- `GPU Companion could not start: ...` followed by the log path: the database could not
  be opened. Nothing was changed; the log says why. A copy of the database is taken
  before every schema upgrade, next to it in the data folder.
- On Linux, `qt.qpa.plugin: Could not load the Qt platform plugin "xcb"`: the system
  lacks X libraries Qt needs. On Debian/Ubuntu:
  `sudo apt install libxcb-icccm4 libxcb-keysyms1 libxcb-cursor0 libxkbcommon-x11-0`.
- A second start only brings the running window forward: GPU Companion runs once per
  user. Look for it in the tray.""",
    },
    # Chinese paragraphs stay on one line each: a line break inside one shows as a space.
    "zh_CN": {
        "head": (
            "# 故障排查\n"
            "\n"
            "<!-- 由 scripts/make_troubleshooting.py --lang zh_CN 根据应用自身的提示生成："
            "请修改该脚本\n"
            "     （或 desktop/gpu_companion/core/ 中的提示、resources/i18n/zh_CN/ 中的译文），"
            "再重新运行。 -->\n"
            "\n"
            "下面每一条提示都与 GPU Companion 显示的文字完全一致。找到你看到的那一条，"
            "按该行的说明处理。任何意外情况的详细信息都记录在日志文件中（设置 → 日志 → 打开文件夹）"
            "。"
        ),
        "first_run": (
            "## 首次运行：本机缺少某些组件\n"
            "\n"
            "欢迎对话框、**设置 → 检查本机…** 和 `gpu-companion doctor` 会检查系统密钥环、"
            "`ssh`、`ssh-agent` 和 `rsync`。缺少哪一项，就给出适用于你系统的安装命令："
        ),
        "keyring": (
            "**系统密钥环已锁定，且无法解锁。** 请登录桌面会话（登录密码会解锁默认密钥环），"
            "或打开密钥环管理器（“密码和密钥”、KWalletManager、“钥匙串访问”）将其解锁，"
            "然后点击 *重新检查*。\n"
            "\n"
            "**未找到系统密钥环。** GPU Companion 只把私钥保存在系统密钥环中，绝不写入明文文件，"
            "因此在有可用的密钥环之前，无法生成密钥。如果你的桌面没有密钥环，请安装 gnome-keyring（"
            "或使用 KWallet），然后重新登录。"
        ),
        "ssh_output": (
            "## 主机密钥变更、密钥被拒、磁盘已满：ssh 和 rsync 的输出\n"
            "\n"
            "传输过程中，应用会读取 ssh 和 rsync 的输出。下面这些行比退出码说得更具体，"
            "所以以它们对应的提示为准（core/transfers/rsync/errors.py）："
        ),
        "agent_head": "## 在终端中运行 `ssh ALIAS`，以及被主机拒绝的密钥",
        "agent": (
            "由应用管理的 ssh 配置条目让 `ssh`、`scp` 和 rsync 使用 GPU Companion 自己的 ssh-agent"
            "。它在应用运行期间（窗口或托盘）一直运行，持有从系统密钥环中取出的各平台密钥。"
            "应用关闭时，终端会输出："
        ),
        "agent_refused": (
            "启动应用（只在托盘中运行即可），再重新运行命令。如果是主机本身拒绝了密钥，"
            "传输会立即停止、不再重试，并提示："
        ),
        "connecting": (
            "## 连接：应用自身的 SSH 连接提示\n"
            "\n"
            "测试连接、监控、自检和备份清单都用系统密钥环中该平台的密钥和应用自己的 known_hosts 建"
            "立连接（core/ssh/connection.py）。示例主机 `gpu1`（203.0.113.7 上的 `root` 用户，"
            "端口 41022）："
        ),
        "providers_head": "## 服务商：vast.ai、RunPod 与释放时的提示",
        "providers": (
            "添加平台账户后，应用通过 vast.ai 和 RunPod 各自的客户端代码调用它们的 API（见用户指南"
            "的[服务商](user-guide.md#服务商)一节）；API 密钥绝不会出现在任何提示中。"
            "示例：主机 `gpu1`、vast.ai 实例 {iid}、RunPod Pod `{pod}`。"
        ),
        "vast": "**vast.ai**（地址 <https://console.vast.ai>，或 `VAST_URL`）：",
        "runpod": "**RunPod**（地址 <https://api.runpod.io>，或 `RUNPOD_API_BASE_URL`）：",
        "accounts": (
            "**平台账户与主机的实例 ID**（`gpu-companion providers …`、主机页的 *平台账户…*、"
            "释放实例时）："
        ),
        "custom": "**自定义平台的命令**（释放页的 **清单设置…**）如果无法确认释放结果，会被拒绝：",
        "release": (
            "**释放实例** 只有在服务商报告实例已不存在（或已关机）后才算数：先读取实例，"
            "再请求销毁，然后每 3 秒读回一次，最长 180 秒（`gpu-companion release ALIAS --within S"
            "`）。其他任何结果都会让计费继续、主机保持活动状态，显示服务商的原话，并让 `gpu-compan"
            "ion release` 以退出码 3 结束："
        ),
        "recovery": (
            "**释放进行到一半时应用崩溃**：下次启动时（窗口、托盘、`gpu-companion watch` 或下一次 "
            "`gpu-companion release`），应用会读回每个被中断的释放所对应的实例："
        ),
        "sync": (
            "**同步**（主机页的 *同步平台*、`gpu-companion providers sync`，以及窗口、"
            "托盘或 `gpu-companion watch` 运行期间每 5 分钟一次）。遗忘的实例列在主机页的 *遗忘的实"
            "例…* 中：*导入* 从现在起计量它，*导入并释放…* 计量它并打开它的释放流程；"
            "在终端中用 `gpu-companion providers import ACCOUNT ID` 导入："
        ),
        "transfers": (
            "## 传输中断：rsync 退出码\n"
            "\n"
            "传输停止时，应用会读取 rsync 的退出码和最后几行输出。“重试有用”为“是”，表示重新开始同"
            "一个传输很可能成功；已经传到的文件不会重复发送。"
        ),
        "gpu": "## GPU 不再上报数据",
        "fields": (
            "## 添加主机时字段被拒绝\n"
            "\n"
            "这些值会写进 ssh 配置文件和远程命令，所以任何可能注入指令的内容都会被拒绝，"
            "原因显示在字段旁边："
        ),
        "no_start": (
            "## 应用无法启动\n"
            "\n"
            "- `GPU Companion 无法启动：...`，后面跟着日志路径：数据库无法打开。什么都没有改动，"
            "原因见日志。每次升级数据库结构前，都会在数据文件夹中数据库旁边留一份副本。"
            "\n"
            '- 在 Linux 上出现 `qt.qpa.plugin: Could not load the Qt platform plugin "xcb"`：'
            "系统缺少 Qt 需要的 X 库。在 Debian/Ubuntu 上运行：`sudo apt install libxcb-icccm4 lib"
            "xcb-keysyms1 libxcb-cursor0 libxkbcommon-x11-0`。\n"
            "- 再次启动只会把正在运行的窗口调到最前：每个用户只运行一个 GPU Companion。"
            "请在托盘中找它。"
        ),
    },
}

# The Chinese of each label the script writes in English (table headers, situations, rsync's
# kinds): t() looks them up, and fails on a label missing here.
ZH: dict[str, str] = {
    # table headers
    "| system | ssh, ssh-agent | rsync | keyring |":
        "| 系统 | ssh、ssh-agent | rsync | 系统密钥环 |",
    "| the output contains | what the app tells you |": "| 输出中包含 | 应用的提示 |",
    "| situation | what the app tells you | what to do |": "| 情况 | 应用的提示 | 怎么办 |",
    "| exit code | kind | what the app tells you | retry helps |":
        "| 退出码 | 类别 | 应用的提示 | 重试有用 |",
    "| nvidia-smi prints | the app says | what to do |":
        "| nvidia-smi 输出 | 应用的提示 | 怎么办 |",
    "| you typed | the app says |": "| 你输入的 | 应用的提示 |",
    "yes": "是",
    "no": "否",
    # rsync's kinds (core/transfers/rsync/errors.py)
    "usage": "用法",
    "auth": "认证",
    "connection": "连接",
    "disk_full": "磁盘已满",
    "partial": "部分完成",
    "cancelled": "已取消",
    "unknown": "未知",
    # a key the host refused
    "SHA256:<the key's fingerprint>": "SHA256:<密钥指纹>",
    # connecting
    "first contact": "首次连接",
    "host key changed": "主机密钥已变更",
    "key refused": "密钥被拒绝",
    "name not found": "找不到主机名",
    "refused": "连接被拒绝",
    "timeout": "超时",
    "no key": "没有密钥",
    # vast.ai
    "key refused (HTTP 401)": "API 密钥被拒绝（HTTP 401）",
    "two-factor session expired (HTTP 404)": "两步验证会话已过期（HTTP 404）",
    "key without the permission (HTTP 403)": "密钥缺少权限（HTTP 403）",
    "destroy of an id vast.ai does not have (HTTP 404)": "销毁 vast.ai 上没有的实例 ID（HTTP 404）",
    'destroy answered `{"success": false}`': '销毁请求的回复是 `{"success": false}`',
    'destroy answered without `"success": true`': '销毁请求的回复中没有 `"success": true`',
    "too many requests (HTTP 429)": "请求过多（HTTP 429）",
    "server error (HTTP 502)": "服务器错误（HTTP 502）",
    "no answer in time": "未及时回复",
    "no connection": "无法连接",
    "an answer that is not JSON": "回复不是 JSON",
    "client not installed": "未安装客户端",
    "instance id `C.4242`": "实例 ID 填成了 `C.4242`",
    # RunPod
    "RunPod refused the terminate": "RunPod 拒绝终止 Pod",
    "terminate answered without `podTerminate`": "终止请求的回复中没有 `podTerminate`",
    "server error page (HTTP 502)": "服务器错误页面（HTTP 502）",
    "no API key for the account": "该账户没有 API 密钥",
    f"pod id `{POD}-64410f3b`": f"Pod ID 填成了 `{POD}-64410f3b`",
    # accounts, and a host's instance id
    "the account's key is not in the keyring": "账户的 API 密钥不在系统密钥环中",
    "an API key that cannot be one": "API 密钥的格式不对",
    "a provider the app does not talk to": "应用不支持的服务商",
    "`providers test lambda`: no such account": "`providers test lambda`：没有这个账户",
    "a release through the account of a host without an instance id":
        "通过平台账户释放一台没有实例 ID 的主机",
    "`release --stop` on a platform without an account":
        "对没有平台账户的平台使用 `release --stop`",
    # a custom platform's commands
    "the release command calls `vastai`": "释放命令调用了 `vastai`",
    "the release command calls `runpodctl`": "释放命令调用了 `runpodctl`",
    "no verify command, or no words to read": "没有核验命令，或没有用来判断的输出文字",
    "an unknown placeholder": "未知的占位符",
    # a release
    "vast.ai has no such instance already": "vast.ai 上已经没有这个实例",
    'the destroy answered `{"success": false}`': '销毁请求的回复是 `{"success": false}`',
    "the destroy got no answer and the instance still runs": "销毁请求没有回复，实例仍在运行",
    "still running at the deadline": "到期限时仍在运行",
    "a custom platform's release command failed": "自定义平台的释放命令失败",
    "a custom platform's verify command failed": "自定义平台的核验命令失败",
    # after a crash
    "the instance is gone now": "实例现已不存在",
    "the instance still runs": "实例仍在运行",
    "vast.ai does not answer": "vast.ai 没有回复",
    # sync
    "an instance runs that the app does not know": "有一个应用不知道的实例在运行",
    "an instance runs whose host the app believes released": "应用认为已释放的主机，其实例仍在运行",
    "a known instance is no longer listed": "已知的实例不再出现在列表中",
    "an account cannot be read": "无法读取某个平台账户",
    "an import of an instance that is gone": "导入一个已不存在的实例",
}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument(
        "--lang", choices=sorted(OUTS), default="en", help="the page's language (default: en)"
    )
    args = parser.parse_args()
    # before the RunPod SDK's import, which sets the root logger to INFO on stderr
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    global LANG
    LANG = args.lang
    if LANG != "en":
        from gpu_companion.core.common import i18n

        i18n.install(LANG)  # before any of the app's messages is produced
    out = OUTS[LANG]
    text = render()
    if args.check:
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            again = "scripts/make_troubleshooting.py" + ("" if LANG == "en" else f" --lang {LANG}")
            print(f"{out} is out of date: run {again}", file=sys.stderr)
            return 1
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
