"""How the self-check judges what its probe reports: pass/warn/fail, the evidence in words, and the
fix for each failure (which PyTorch wheel index matches the driver, what a lost GPU means, ...).

Records arrive in the probe's order (python, nvidia_smi, torch, matmul, bf16, disk); `Findings`
keeps what later judgements need from earlier ones (the driver's CUDA version, a GPU error).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from gpu_companion.core.monitor.nvsmi import (
    GpuError,
    detect_gpu_error,
    parse_compute_apps_csv,
    parse_query_gpu_csv,
)
from gpu_companion.core.planning.catalogue import GpuCatalogue, GpuSpec, load_catalogue
from gpu_companion.core.selfcheck.bad_gpus import BadGpu, split_bad_gpus
from gpu_companion.core.selfcheck.torch_wheels import parse_cuda_version, wheel_hint

QUERY_FIELDS = ("index", "uuid", "name", "memory.used", "memory.total", "driver_version")
APP_FIELDS = ("gpu_uuid", "pid", "process_name", "used_gpu_memory")
BUSY_MEMORY_MIB = 1024  # more than this in use on a fresh instance is someone else's
BF16_GOOD, BF16_POOR = 0.35, 0.20  # share of the rated dense figure a 1-second test reaches
SLOW_READ_MB_S = 150.0
OLDEST_PYTHON = (3, 9)  # what current PyTorch releases need

STEP_TITLES = {
    "connect": "SSH connection",
    "python": "Python and pip",
    "nvidia_smi": "nvidia-smi answers",
    "gpus": "Expected GPUs, free, no one else's processes",
    "torch": "PyTorch installed",
    "cuda_match": "Driver CUDA vs the torch build",
    "cuda_available": "torch.cuda.is_available()",
    "matmul": "A matmul on the GPU",
    "bf16_speed": "BF16 matmul speed",
    "disk": "Data disk: free space and read speed",
}
# The table header's CUDA version: "CUDA Version: 12.4" (R470 to R59x), "CUDA UMD Version: 13.3"
# (R610, next to "KMD Version:" where "Driver Version:" was).
_CUDA_RE = re.compile(r"CUDA(?: UMD)? Version\s*:\s*(\d+)\.(\d+)", re.IGNORECASE)
DRIVER_FIELDS = ("kmd_version", "driver_version")  # R610 deprecates driver_version for kmd_version
# nvidia-smi names (normalised: lower case, letters and digits) → catalogue ids, first match wins.
_CARD_PATTERNS = (
    (r"h200", "h200-sxm"),
    (r"h100.*pcie", "h100-pcie"),
    (r"h100", "h100-sxm"),
    (r"a100.*80gb", "a100-80gb-sxm"),
    (r"a100", "a100-40gb-sxm"),
    (r"l40s", "l40s"),
    (r"^l4$", "l4"),
    (r"^a10$", "a10"),
    (r"v100", "v100-sxm2-32gb"),
    (r"^t4$", "t4"),
    (r"rtx6000ada", "rtx-6000-ada"),
    (r"rtxa6000", "rtx-a6000"),
    (r"rtx4090", "rtx-4090"),
    (r"rtx3090", "rtx-3090"),
    (r"rtx5090", "rtx-5090"),
)


class Status(str, Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"


@dataclass(frozen=True)
class CheckStep:
    """One finding: what was checked, the verdict, what was seen, and what to do about it."""

    key: str
    title: str
    status: Status
    evidence: str
    hint: str = ""


@dataclass
class Findings:
    """What the judgements share: expectations, and facts from earlier records."""

    expected_gpus: int | None = None
    card: GpuSpec | None = None
    min_free_gb: float = 20.0
    driver_cuda: tuple[int, int] | None = None
    gpu_error: GpuError | None = None
    gpu_names: list[str] = field(default_factory=list)
    torch_cuda: tuple[int, int] | None = None
    torch_version: str = ""


def _step(key: str, status: Status, evidence: str, hint: str = "") -> CheckStep:
    return CheckStep(key, STEP_TITLES[key], status, evidence, hint)


def card_for_gpu_name(name: str, catalogue: GpuCatalogue | None = None) -> GpuSpec | None:
    """The catalogue card an nvidia-smi name ("NVIDIA H100 80GB HBM3") is, if it is one."""
    key = re.sub(
        r"[^a-z0-9]",
        "",
        name.lower().replace("nvidia", "").replace("geforce", "").replace("tesla", ""),
    )
    for pattern, card_id in _CARD_PATTERNS:
        if re.search(pattern, key):
            return (catalogue or load_catalogue()).get(card_id)
    return None


def _judge_python(r: dict[str, Any]) -> Iterator[CheckStep]:
    version = str(r.get("version", "?"))
    parts = tuple(int(p) for p in re.findall(r"\d+", version)[:2])
    evidence = f"Python {version} at {r.get('executable', '?')}"
    if r.get("pip_rc") != 0:
        yield _step(
            "python",
            Status.WARN,
            f"{evidence}; pip is missing ({r.get('pip', '')}).",
            "Install pip: `apt-get install -y python3-pip` or `python3 -m ensurepip --upgrade`.",
        )
    elif parts < OLDEST_PYTHON:
        yield _step(
            "python",
            Status.WARN,
            f"{evidence}; {r.get('pip', '')}.",
            "Current PyTorch needs Python 3.9 or newer: use a newer image or a conda env.",
        )
    else:
        yield _step(
            "python", Status.PASS, f"{evidence}; {str(r.get('pip', '')).split(' from ')[0]}."
        )


def _judge_nvidia_smi(r: dict[str, Any], f: Findings) -> Iterator[CheckStep]:
    table, query, apps = (r.get(k) or {} for k in ("table", "query", "apps"))
    text = "\n".join(str(x.get(k, "")) for x in (table, query, apps) for k in ("out", "err"))
    cuda = _CUDA_RE.search(str(table.get("out", "")))
    f.driver_cuda = (int(cuda.group(1)), int(cuda.group(2))) if cuda else None
    fields = query_fields(r)
    good, bad = split_bad_gpus(str(query.get("out", "")), fields)
    if good and bad:  # one broken GPU among good ones: name it, judge the others
        yield from _judge_some_broken(good, bad, str(apps.get("out", "")), f)
        return
    f.gpu_error = detect_gpu_error(text)
    if f.gpu_error is not None:
        yield _step("nvidia_smi", Status.FAIL, f.gpu_error.message, f.gpu_error.hint)
        yield _step("gpus", Status.SKIP, "nvidia-smi gave no readings.")
        return
    if query.get("rc") != 0:
        detail = (str(query.get("err", "")) or str(query.get("out", ""))).strip()[:300]
        yield _step(
            "nvidia_smi",
            Status.FAIL,
            f"nvidia-smi exited with {query.get('rc')}: {detail}",
            "Run `nvidia-smi` on the host to see the message in full; reboot if the driver hangs.",
        )
        yield _step("gpus", Status.SKIP, "nvidia-smi gave no readings.")
        return
    gpus = parse_query_gpu_csv(str(query.get("out", "")), fields).samples
    f.gpu_names = [g.name or "?" for g in gpus]
    driver = _driver(gpus[0]) if gpus else None
    cuda_text = f", CUDA {f.driver_cuda[0]}.{f.driver_cuda[1]}" if f.driver_cuda else ""
    yield _step(
        "nvidia_smi", Status.PASS, f"Driver {driver or '?'}{cuda_text}; {len(gpus)} GPU(s)."
    )
    yield from _judge_gpus(gpus, str(apps.get("out", "")), f)


def query_fields(record: dict[str, Any]) -> tuple[str, ...]:
    """The --query-gpu fields the probe asked for: the driver's version as `kmd_version` where
    `--help-query-gpu` lists it (R595+), else `driver_version` (older probes say nothing)."""
    fields = record.get("fields")
    if isinstance(fields, list) and fields and all(isinstance(x, str) for x in fields):
        return tuple(fields)
    return QUERY_FIELDS


def _driver(gpu: Any) -> Any:
    for name in DRIVER_FIELDS:
        value = gpu.extra.get(name)
        if value:
            return value
    return None


def _judge_some_broken(
    good: list[Any], bad: list[BadGpu], apps_text: str, f: Findings
) -> Iterator[CheckStep]:
    f.gpu_names = [g.name or "?" for g in good]
    driver = _driver(good[0])
    cuda_text = f", CUDA {f.driver_cuda[0]}.{f.driver_cuda[1]}" if f.driver_cuda else ""
    names = "; ".join(b.text for b in bad)
    yield _step(
        "nvidia_smi",
        Status.FAIL,
        f"{names}. Driver {driver or '?'}{cuda_text}; the other {len(good)} GPU(s) answer.",
        f"Do not train on {' or '.join(b.name for b in bad)}: ask the provider to reset or "
        "replace it (a reset needs root and no process on that GPU, `nvidia-smi -r -i N`), or "
        "rent another instance. The results below are for the GPUs that answer.",
    )
    yield from _judge_gpus(good, apps_text, f, broken=len(bad))


def _judge_gpus(
    gpus: list[Any], apps_text: str, f: Findings, broken: int = 0
) -> Iterator[CheckStep]:
    if not gpus:
        yield _step(
            "gpus",
            Status.FAIL,
            "nvidia-smi lists no GPU.",
            "The instance has no GPU attached, or the container was started without GPU access. "
            "Check the instance type with the provider.",
        )
        return
    names = ", ".join(sorted(set(f.gpu_names)))
    problems, hints = [], []
    if f.expected_gpus and len(gpus) + broken != f.expected_gpus:
        problems.append(f"{len(gpus)} GPU(s) instead of the {f.expected_gpus} you rented")
        hints.append("Ask the provider why GPUs are missing before you pay for more hours.")
    if f.card is not None and card_for_gpu_name(gpus[0].name or "") != f.card:
        problems.append(f"you chose the {f.card.name}, the host has {names}")
        hints.append("Check that the instance type is the card you meant to pay for.")
    busy = [g for g in gpus if (g.memory_used_mib or 0) > BUSY_MEMORY_MIB]
    if busy:
        used = ", ".join(f"GPU {g.index}: {g.memory_used_mib:,} MiB" for g in busy)
        problems.append(f"memory already in use ({used})")
    procs = parse_compute_apps_csv(apps_text, APP_FIELDS).samples
    if procs:
        listed = ", ".join(
            f"pid {p.pid} {p.process_name} {p.used_memory_mib or '?'} MiB" for p in procs[:5]
        )
        problems.append(f"processes on the GPU: {listed}")
    if busy or procs:
        hints.append(
            "A fresh instance should have no GPU processes: stop your own leftovers, or ask the "
            "provider for another machine if they belong to someone else."
        )
    free = ", ".join(
        f"{(g.memory_total_mib or 0) - (g.memory_used_mib or 0):,} MiB free" for g in gpus[:8]
    )
    evidence = f"{len(gpus)} × {names} ({free})"
    if problems:
        yield _step(
            "gpus", Status.FAIL, f"{evidence}: " + "; ".join(problems) + ".", " ".join(hints)
        )
    else:
        yield _step("gpus", Status.PASS, evidence + ", no other processes.")


def _judge_torch(r: dict[str, Any], f: Findings) -> Iterator[CheckStep]:
    if not r.get("imported"):
        yield _step(
            "torch",
            Status.FAIL,
            f"import torch failed: {r.get('error', '')}",
            "PyTorch is not installed for this python3. " + wheel_hint(f.driver_cuda),
        )
        for key in ("cuda_match", "cuda_available"):
            yield _step(key, Status.SKIP, "Needs PyTorch.")
        return
    f.torch_version, f.torch_cuda = str(r.get("version", "")), parse_cuda_version(r.get("cuda"))
    yield _step("torch", Status.PASS, f"torch {f.torch_version}")
    yield _judge_cuda_match(f)
    yield _judge_available(r, f)


def _judge_cuda_match(f: Findings) -> CheckStep:
    drv = f"{f.driver_cuda[0]}.{f.driver_cuda[1]}" if f.driver_cuda else None
    if f.torch_cuda is None:
        return _step(
            "cuda_match",
            Status.FAIL,
            f"torch {f.torch_version} is a CPU-only build (torch.version.cuda is None)"
            + (f"; the driver supports CUDA {drv}." if drv else "."),
            wheel_hint(f.driver_cuda, f.torch_version),
        )
    built = f"{f.torch_cuda[0]}.{f.torch_cuda[1]}"
    if f.driver_cuda is None:
        return _step(
            "cuda_match",
            Status.SKIP,
            f"torch is built for CUDA {built}; the driver's CUDA "
            "version is unknown (nvidia-smi did not report it).",
        )
    if f.torch_cuda[0] > f.driver_cuda[0]:
        return _step(
            "cuda_match",
            Status.FAIL,
            f"torch is built for CUDA {built}, the driver supports only up to {drv}.",
            wheel_hint(f.driver_cuda, f.torch_version),
        )
    if f.torch_cuda > f.driver_cuda:
        return _step(
            "cuda_match",
            Status.WARN,
            f"torch is built for CUDA {built}, the driver reports {drv}: this usually works "
            "through CUDA minor-version compatibility, but some kernels may fail to load.",
            wheel_hint(f.driver_cuda, f.torch_version),
        )
    return _step(
        "cuda_match",
        Status.PASS,
        f"torch is built for CUDA {built}; the driver supports up to {drv}.",
    )


def _judge_available(r: dict[str, Any], f: Findings) -> CheckStep:
    if r.get("available"):
        devices = ", ".join(r.get("devices") or [])
        return _step("cuda_available", Status.PASS, f"True: {r.get('device_count')} × {devices}")
    said = "; ".join([str(r.get("error") or ""), *(r.get("warnings") or [])]).strip("; ")
    evidence = "False" + (f" ({said})" if said else "")
    if f.gpu_error is not None:
        hint = f"{f.gpu_error.message} {f.gpu_error.hint}"
    elif not f.gpu_names and f.driver_cuda is None:
        hint = (
            "No GPU is visible on this host (nvidia-smi gave no GPU): check the instance type, or "
            "that the container was started with GPU access (docker --gpus all)."
        )
    elif f.torch_cuda is None:
        hint = "This torch has no CUDA support (CPU-only build). "
        hint += wheel_hint(f.driver_cuda, f.torch_version)
    elif f.driver_cuda is not None and f.torch_cuda > f.driver_cuda:
        hint = "The torch build needs a newer driver. "
        hint += wheel_hint(f.driver_cuda, f.torch_version)
    else:
        hint = (
            "Check that CUDA_VISIBLE_DEVICES is not empty and that the container has GPU access "
            "(docker --gpus all); a reboot helps when the driver was just updated."
        )
    return _step("cuda_available", Status.FAIL, evidence, hint)


def _judge_matmul(r: dict[str, Any]) -> CheckStep:
    if "skipped" in r:
        return _step("matmul", Status.SKIP, f"Skipped: {r['skipped']}.")
    if "error" in r:
        return _step(
            "matmul",
            Status.FAIL,
            f"The matmul failed: {r['error']}",
            "CUDA is visible but cannot run work: reboot the instance or ask for another one.",
        )
    n, err = r.get("n"), float(r.get("max_error", 0.0))
    if not str(r.get("device", "cuda")).startswith("cuda"):  # checked on the CPU proves nothing
        return _step(
            "matmul",
            Status.FAIL,
            f"The test matmul ran on {r.get('device')}, not on the GPU.",
            "Update the app on this computer: its self-check probe is out of date.",
        )
    if err == 0:
        return _step(
            "matmul",
            Status.PASS,
            f"{n}×{n} fp32 matmul on {r.get('device')} matches the CPU exactly.",
        )
    return _step(
        "matmul",
        Status.FAIL,
        f"{n}×{n} matmul on {r.get('device')} is off by up to {err:g}.",
        "Wrong results mean faulty GPU memory or a broken driver: do not train here, ask the "
        "provider for another machine.",
    )


def _judge_bf16(r: dict[str, Any], f: Findings) -> CheckStep:
    if "skipped" in r:
        return _step("bf16_speed", Status.SKIP, f"Skipped: {r['skipped']}.")
    if "error" in r:
        return _step("bf16_speed", Status.FAIL, f"The timing failed: {r['error']}")
    tflops = float(r.get("tflops", 0.0))
    measured = (
        f"{r.get('n')}² BF16 matmul: {tflops:,.0f} TFLOPS over {float(r.get('seconds', 0)):.1f} s"
    )
    card = f.card or (card_for_gpu_name(f.gpu_names[0]) if f.gpu_names else None)
    if card is None:
        return _step("bf16_speed", Status.PASS, f"{measured}; no catalogue figure for this card.")
    rated, label = card.matmul_tflops("bf16")
    share = tflops / rated
    if share >= BF16_GOOD:
        return _step(
            "bf16_speed",
            Status.PASS,
            f"{measured}: reached {share:.0%} of the {card.name}'s rated {label} — expected for a "
            "short test.",
        )
    hint = (
        "Look for another process on the GPU, power or thermal throttling "
        "(`nvidia-smi -q -d PERFORMANCE`), a MIG slice, or a different card than ordered."
    )
    status = Status.WARN if share >= BF16_POOR else Status.FAIL
    tail = "lower than usual" if status is Status.WARN else "something is wrong"
    return _step(
        "bf16_speed",
        status,
        f"{measured}: {share:.0%} of the {card.name}'s rated {label} — {tail}.",
        hint,
    )


def _judge_disk(r: dict[str, Any], f: Findings) -> CheckStep:
    path = r.get("path", "?")
    if "free_bytes" not in r:
        return _step(
            "disk",
            Status.FAIL,
            f"{path}: {r.get('error', 'no reading')}",
            "Check the data directory exists and is writable.",
        )
    free_gb, total_gb = r["free_bytes"] / 1e9, r["total_bytes"] / 1e9
    evidence = f"{path}: {free_gb:,.1f} GB free of {total_gb:,.1f} GB"
    if "read_mb_s" in r:
        evidence += (
            f"; read {r['read_mb_s']:,.0f} MB/s, write {r['write_mb_s']:,.0f} MB/s "
            f"({r.get('size_mb')} MB test file)"
        )
    if "error" in r:
        return _step(
            "disk",
            Status.FAIL,
            f"{evidence}; {r['error']}",
            "The data directory is not writable: pick another one or fix its permissions.",
        )
    if free_gb < f.min_free_gb:
        return _step(
            "disk",
            Status.FAIL,
            evidence,
            f"Less than {f.min_free_gb:g} GB free: attach or enlarge the data disk before "
            "uploading datasets and checkpoints.",
        )
    if r.get("read_mb_s", SLOW_READ_MB_S) < SLOW_READ_MB_S:
        return _step(
            "disk",
            Status.WARN,
            evidence,
            "A slow disk starves the GPU: copy the dataset to local NVMe before training.",
        )
    return _step("disk", Status.PASS, evidence)


def judge(record: dict[str, Any], findings: Findings) -> Iterator[CheckStep]:
    """The steps one probe record decides, in order; unknown records are ignored."""
    kind = record.get("step")
    if kind == "python":
        yield from _judge_python(record)
    elif kind == "nvidia_smi":
        yield from _judge_nvidia_smi(record, findings)
    elif kind == "torch":
        yield from _judge_torch(record, findings)
    elif kind == "matmul":
        yield _judge_matmul(record)
    elif kind == "bf16":
        yield _judge_bf16(record, findings)
    elif kind == "disk":
        yield _judge_disk(record, findings)
