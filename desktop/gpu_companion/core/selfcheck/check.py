"""The 5-minute self-check of a freshly rented host: is the GPU there, free and fast, does PyTorch
see it, is the data disk big and quick enough — before the first paid hour goes to finding out.

`run_selfcheck` sends one probe script (probe.py) over SSH and streams a `CheckStep`
per finding as the probe's JSON lines arrive; `selfcheck_rules` judges each record.
"""

from __future__ import annotations

import json
import shlex
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from typing import Any

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import _
from gpu_companion.core.hosts.registry import Host
from gpu_companion.core.monitor.nvsmi import build_query_gpu_argv
from gpu_companion.core.planning.catalogue import GpuSpec
from gpu_companion.core.selfcheck.rules import (
    CheckStep,
    Findings,
    Status,
    judge,
    step_title,
)

PROBE_TIMEOUT_S = 300.0
POLL_S = 0.25  # how often a waiting read looks at the cancel flag


@dataclass(frozen=True)
class SelfCheckOptions:
    """What to expect and how hard to test. `expected_gpus` None takes the host's GPU count;
    `gpu` None takes the catalogue card nvidia-smi names."""

    expected_gpus: int | None = None
    gpu: GpuSpec | None = None
    data_dir: str = ""  # empty: the login user's home
    disk_test_mb: int = 256
    matmul_n: int = 8192
    bench_seconds: float = 1.0
    min_free_gb: float = 20.0
    python: str = "python3"
    timeout_s: float = PROBE_TIMEOUT_S


def probe_source() -> str:
    """The probe script's text, as shipped inside the package."""
    return resources.files("gpu_companion.core.selfcheck").joinpath("probe.py").read_text("utf-8")


def build_probe_command(options: SelfCheckOptions) -> str:
    """The remote command line: the interpreter reads the script from stdin, arguments quoted."""
    argv = [
        options.python,
        "-",
        "--data-dir",
        options.data_dir,
        "--disk-mb",
        str(options.disk_test_mb),
        "--matmul-n",
        str(options.matmul_n),
        "--bench-seconds",
        str(options.bench_seconds),
    ]
    return " ".join(shlex.quote(a) for a in argv)


def _connect_step(host: Host, exc: Exception) -> CheckStep:
    hint = exc.hint if isinstance(exc, UserError) else ""
    return CheckStep(
        "connect",
        step_title("connect"),
        Status.FAIL,
        f"{host.user}@{host.hostname}:{host.port}: {str(exc) or type(exc).__name__}",
        hint
        or _(
            "Check the host, port and user in the provider's console, and that the instance "
            "is running."
        ),
    )


def _exec(client: Any, command: str, stdin_text: str, timeout: float) -> tuple[Any, Any, Any]:
    stdin, stdout, stderr = client.exec_command(command, timeout=timeout)
    try:
        if stdin_text:
            stdin.write(stdin_text)
            stdin.flush()
        stdin.channel.shutdown_write()
    except OSError:
        if not (stdin.channel.closed or stdin.channel.exit_status_ready()):
            raise  # a timeout or a broken link: the caller says so
        # the command ended before reading its input (no python3): its output and exit status,
        # read next, say what happened
    return stdin, stdout, stderr


def _without_python(
    client: Any, findings: Findings, options: SelfCheckOptions
) -> Iterator[CheckStep]:
    """python3 is missing: still ask nvidia-smi directly, so the GPU steps have an answer."""
    _stdin, helped, _stderr = _exec(client, "nvidia-smi --help-query-gpu", "", options.timeout_s)
    known = helped.read().decode("utf-8", "replace")
    driver = "kmd_version" if '"kmd_version"' in known else "driver_version"  # R610: kmd
    fields = ["index", "uuid", "name", "memory.used", "memory.total", driver]
    argv = build_query_gpu_argv(fields, None)
    _stdin, out, err = _exec(client, " ".join(shlex.quote(a) for a in argv), "", options.timeout_s)
    text, error = out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace")
    query = {"rc": out.channel.recv_exit_status(), "out": text, "err": error}
    record = {"step": "nvidia_smi", "fields": fields, "query": query, "table": {}, "apps": {}}
    yield from judge(record, findings)
    for key in ("torch", "cuda_match", "cuda_available", "matmul", "bf16_speed", "disk"):
        yield CheckStep(key, step_title(key), Status.SKIP, _("Needs python3 on the host."))


def run_selfcheck(
    host: Host,
    connect: Callable[[Host], Any],
    options: SelfCheckOptions | None = None,
    cancel_event: threading.Event | None = None,
) -> Iterator[CheckStep]:
    """Connect with `connect(host)` (a paramiko SSHClient factory), run the probe, and yield one
    step per finding as it arrives. Setting `cancel_event` stops it within POLL_S; the client is
    closed when the generator ends or is closed."""
    options = options or SelfCheckOptions()
    expected = options.expected_gpus if options.expected_gpus is not None else host.gpu_count
    findings = Findings(expected or None, options.gpu, options.min_free_gb)
    try:
        client = connect(host)
    except Exception as exc:  # ConnectionProblem, paramiko.SSHException, OSError: all for the user
        yield _connect_step(host, exc)
        return
    try:
        yield CheckStep(
            "connect",
            step_title("connect"),
            Status.PASS,
            _("Logged in as {user} on {where}.").format(
                user=host.user, where=f"{host.hostname}:{host.port}"
            ),
        )
        yield from _run_probe(client, findings, options, cancel_event or threading.Event())
    finally:
        client.close()


def _lines(channel: Any, deadline: float, cancel: threading.Event) -> Iterator[str]:
    """stdout lines as they arrive; waits in POLL_S slices so a cancel is noticed quickly."""
    channel.settimeout(POLL_S)
    buffer = b""
    while not cancel.is_set():
        if time.monotonic() > deadline:
            raise TimeoutError
        try:
            chunk = channel.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            break
        *lines, buffer = (buffer + chunk).split(b"\n")
        yield from (line.decode("utf-8", "replace") for line in lines)
    if buffer and not cancel.is_set():
        yield buffer.decode("utf-8", "replace")


def _run_probe(
    client: Any, findings: Findings, options: SelfCheckOptions, cancel: threading.Event
) -> Iterator[CheckStep]:
    try:
        _stdin, out, err = _exec(
            client, build_probe_command(options), probe_source(), options.timeout_s
        )
        records = 0
        for line in _lines(out.channel, time.monotonic() + options.timeout_s, cancel):
            try:
                record = json.loads(line) if line.startswith("{") else None
            except json.JSONDecodeError:
                record = None
            if record is None:
                continue
            records += 1
            if record.get("step") == "done":
                return
            yield from judge(record, findings)
        if cancel.is_set():
            return
        status = out.channel.recv_exit_status()
        error_text = err.read().decode("utf-8", "replace").strip()
    except TimeoutError:
        yield CheckStep(
            "probe",
            _("Self-check probe"),
            Status.FAIL,
            _("The host did not finish the checks within {seconds} s.").format(
                seconds=f"{options.timeout_s:g}"
            ),
            _("The host may be overloaded or the disk very slow; run the self-check again."),
        )
        return
    if records == 0 and status == 127:
        yield CheckStep(
            "python",
            step_title("python"),
            Status.FAIL,
            _("{python} is not on the host's PATH ({said}).").format(
                python=options.python, said=error_text or _("exit status 127")
            ),
            _(
                "Choose a PyTorch/CUDA image (they ship Python), or install it: "
                "apt-get install -y python3 python3-pip."
            ),
        )
        yield from _without_python(client, findings, options)
        return
    tail = (
        error_text.splitlines()[-3:]
        if error_text
        else [_("exit status {status}").format(status=status)]
    )
    yield CheckStep(
        "probe",
        _("Self-check probe"),
        Status.FAIL,
        _("The probe stopped before it finished: {tail}").format(tail=" | ".join(tail)),
        _("Run the self-check again; if it stops at the same place, that step is what is broken."),
    )


def format_steps(steps: list[CheckStep]) -> str:
    """Plain text for a terminal, a log or a support request."""
    lines = []
    for step in steps:
        lines.append(f"[{step.status.value.upper():4}] {step.title}: {step.evidence}")
        if step.hint:
            lines.append(f"       → {step.hint}")
    return "\n".join(lines)
