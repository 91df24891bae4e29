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

from gpu_companion.core.common.i18n import N_, _, ngettext
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

# English (N_): shown through _() (`step_title`)
STEP_TITLES = {
    "connect": N_("SSH connection"),
    "python": N_("Python and pip"),
    "nvidia_smi": N_("nvidia-smi answers"),
    "gpus": N_("Expected GPUs, free, no one else's processes"),
    "torch": N_("PyTorch installed"),
    "cuda_match": N_("Driver CUDA vs the torch build"),
    "cuda_available": "torch.cuda.is_available()",
    "matmul": N_("A matmul on the GPU"),
    "bf16_speed": N_("BF16 matmul speed"),
    "disk": N_("Data disk: free space and read speed"),
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


def _sentences(parts: list[str]) -> str:
    """Sentences one after another: a space after an English one, none after a Chinese one."""
    out = ""
    for part in parts:
        out += part if not out or out.endswith(("。", "！", "？", "）")) else " " + part
    return out


def step_title(key: str) -> str:
    """The step's title in the current language."""
    return _(STEP_TITLES[key])


def _step(key: str, status: Status, evidence: str, hint: str = "") -> CheckStep:
    return CheckStep(key, step_title(key), status, evidence, hint)


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
    evidence = _("Python {version} at {path}").format(
        version=version, path=r.get("executable", "?")
    )
    if r.get("pip_rc") != 0:
        yield _step(
            "python",
            Status.WARN,
            _("{evidence}; pip is missing ({said}).").format(
                evidence=evidence, said=r.get("pip", "")
            ),
            _("Install pip: `apt-get install -y python3-pip` or `python3 -m ensurepip --upgrade`."),
        )
    elif parts < OLDEST_PYTHON:
        yield _step(
            "python",
            Status.WARN,
            f"{evidence}; {r.get('pip', '')}.",
            _("Current PyTorch needs Python 3.9 or newer: use a newer image or a conda env."),
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
        yield _step("gpus", Status.SKIP, _("nvidia-smi gave no readings."))
        return
    if query.get("rc") != 0:
        detail = (str(query.get("err", "")) or str(query.get("out", ""))).strip()[:300]
        yield _step(
            "nvidia_smi",
            Status.FAIL,
            _("nvidia-smi exited with {code}: {detail}").format(
                code=query.get("rc"), detail=detail
            ),
            _(
                "Run `nvidia-smi` on the host to see the message in full; reboot if the driver "
                "hangs."
            ),
        )
        yield _step("gpus", Status.SKIP, _("nvidia-smi gave no readings."))
        return
    gpus = parse_query_gpu_csv(str(query.get("out", "")), fields).samples
    f.gpu_names = [g.name or "?" for g in gpus]
    driver = _driver(gpus[0]) if gpus else None
    cuda_text = f", CUDA {f.driver_cuda[0]}.{f.driver_cuda[1]}" if f.driver_cuda else ""
    yield _step(
        "nvidia_smi",
        Status.PASS,
        ngettext(
            "Driver {driver}{cuda}; {n} GPU(s).", "Driver {driver}{cuda}; {n} GPU(s).", len(gpus)
        ).format(driver=driver or "?", cuda=cuda_text, n=len(gpus)),
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
    names = _("; ").join(b.text for b in bad)
    yield _step(
        "nvidia_smi",
        Status.FAIL,
        ngettext(
            "{broken}. Driver {driver}{cuda}; the other {n} GPU(s) answer.",
            "{broken}. Driver {driver}{cuda}; the other {n} GPU(s) answer.",
            len(good),
        ).format(broken=names, driver=driver or "?", cuda=cuda_text, n=len(good)),
        _(
            "Do not train on {gpus}: ask the provider to reset or "
            "replace it (a reset needs root and no process on that GPU, `nvidia-smi -r -i N`), or "
            "rent another instance. The results below are for the GPUs that answer."
        ).format(gpus=_(" or ").join(b.name for b in bad)),
    )
    yield from _judge_gpus(good, apps_text, f, broken=len(bad))


def _judge_gpus(
    gpus: list[Any], apps_text: str, f: Findings, broken: int = 0
) -> Iterator[CheckStep]:
    if not gpus:
        yield _step(
            "gpus",
            Status.FAIL,
            _("nvidia-smi lists no GPU."),
            _(
                "The instance has no GPU attached, or the container was started without GPU "
                "access. Check the instance type with the provider."
            ),
        )
        return
    names = ", ".join(sorted(set(f.gpu_names)))
    problems, hints = [], []
    if f.expected_gpus and len(gpus) + broken != f.expected_gpus:
        problems.append(
            ngettext(
                "{n} GPU(s) instead of the {expected} you rented",
                "{n} GPU(s) instead of the {expected} you rented",
                len(gpus),
            ).format(n=len(gpus), expected=f.expected_gpus)
        )
        hints.append(_("Ask the provider why GPUs are missing before you pay for more hours."))
    if f.card is not None and card_for_gpu_name(gpus[0].name or "") != f.card:
        problems.append(
            _("you chose the {card}, the host has {names}").format(card=f.card.name, names=names)
        )
        hints.append(_("Check that the instance type is the card you meant to pay for."))
    busy = [g for g in gpus if (g.memory_used_mib or 0) > BUSY_MEMORY_MIB]
    if busy:
        used = ", ".join(f"GPU {g.index}: {g.memory_used_mib:,} MiB" for g in busy)
        problems.append(_("memory already in use ({used})").format(used=used))
    procs = parse_compute_apps_csv(apps_text, APP_FIELDS).samples
    if procs:
        listed = ", ".join(
            f"pid {p.pid} {p.process_name} {p.used_memory_mib or '?'} MiB" for p in procs[:5]
        )
        problems.append(_("processes on the GPU: {listed}").format(listed=listed))
    if busy or procs:
        hints.append(
            _(
                "A fresh instance should have no GPU processes: stop your own leftovers, or ask "
                "the provider for another machine if they belong to someone else."
            )
        )
    free = ", ".join(
        _("{mib} MiB free").format(mib=f"{(g.memory_total_mib or 0) - (g.memory_used_mib or 0):,}")
        for g in gpus[:8]
    )
    evidence = f"{len(gpus)} × {names} ({free})"
    if problems:
        yield _step(
            "gpus",
            Status.FAIL,
            _("{evidence}: {problems}.").format(
                evidence=evidence, problems=_("; ").join(problems)
            ),
            _sentences(hints),
        )
    else:
        yield _step(
            "gpus", Status.PASS, _("{evidence}, no other processes.").format(evidence=evidence)
        )


def _judge_torch(r: dict[str, Any], f: Findings) -> Iterator[CheckStep]:
    if not r.get("imported"):
        yield _step(
            "torch",
            Status.FAIL,
            _("import torch failed: {error}").format(error=r.get("error", "")),
            _("PyTorch is not installed for this python3. {fix}").format(
                fix=wheel_hint(f.driver_cuda)
            ),
        )
        for key in ("cuda_match", "cuda_available"):
            yield _step(key, Status.SKIP, _("Needs PyTorch."))
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
            (
                _(
                    "torch {version} is a CPU-only build (torch.version.cuda is None); the "
                    "driver supports CUDA {cuda}."
                )
                if drv
                else _("torch {version} is a CPU-only build (torch.version.cuda is None).")
            ).format(version=f.torch_version, cuda=drv),
            wheel_hint(f.driver_cuda, f.torch_version),
        )
    built = f"{f.torch_cuda[0]}.{f.torch_cuda[1]}"
    if f.driver_cuda is None:
        return _step(
            "cuda_match",
            Status.SKIP,
            _(
                "torch is built for CUDA {built}; the driver's CUDA "
                "version is unknown (nvidia-smi did not report it)."
            ).format(built=built),
        )
    if f.torch_cuda[0] > f.driver_cuda[0]:
        return _step(
            "cuda_match",
            Status.FAIL,
            _("torch is built for CUDA {built}, the driver supports only up to {cuda}.").format(
                built=built, cuda=drv
            ),
            wheel_hint(f.driver_cuda, f.torch_version),
        )
    if f.torch_cuda > f.driver_cuda:
        return _step(
            "cuda_match",
            Status.WARN,
            _(
                "torch is built for CUDA {built}, the driver reports {cuda}: this usually works "
                "through CUDA minor-version compatibility, but some kernels may fail to load."
            ).format(built=built, cuda=drv),
            wheel_hint(f.driver_cuda, f.torch_version),
        )
    return _step(
        "cuda_match",
        Status.PASS,
        _("torch is built for CUDA {built}; the driver supports up to {cuda}.").format(
            built=built, cuda=drv
        ),
    )


def _judge_available(r: dict[str, Any], f: Findings) -> CheckStep:
    if r.get("available"):
        devices = ", ".join(r.get("devices") or [])
        return _step("cuda_available", Status.PASS, f"True: {r.get('device_count')} × {devices}")
    said = "; ".join([str(r.get("error") or ""), *(r.get("warnings") or [])]).strip("; ")
    evidence = "False" + (f" ({said})" if said else "")
    if f.gpu_error is not None:
        hint = _sentences([f.gpu_error.message, f.gpu_error.hint])
    elif not f.gpu_names and f.driver_cuda is None:
        hint = _(
            "No GPU is visible on this host (nvidia-smi gave no GPU): check the instance type, or "
            "that the container was started with GPU access (docker --gpus all)."
        )
    elif f.torch_cuda is None:
        hint = _("This torch has no CUDA support (CPU-only build). {fix}").format(
            fix=wheel_hint(f.driver_cuda, f.torch_version)
        )
    elif f.driver_cuda is not None and f.torch_cuda > f.driver_cuda:
        hint = _("The torch build needs a newer driver. {fix}").format(
            fix=wheel_hint(f.driver_cuda, f.torch_version)
        )
    else:
        hint = _(
            "Check that CUDA_VISIBLE_DEVICES is not empty and that the container has GPU access "
            "(docker --gpus all); a reboot helps when the driver was just updated."
        )
    return _step("cuda_available", Status.FAIL, evidence, hint)


def _judge_matmul(r: dict[str, Any]) -> CheckStep:
    if "skipped" in r:
        return _step("matmul", Status.SKIP, _("Skipped: {reason}.").format(reason=r["skipped"]))
    if "error" in r:
        return _step(
            "matmul",
            Status.FAIL,
            _("The matmul failed: {error}").format(error=r["error"]),
            _("CUDA is visible but cannot run work: reboot the instance or ask for another one."),
        )
    n, err = r.get("n"), float(r.get("max_error", 0.0))
    if not str(r.get("device", "cuda")).startswith("cuda"):  # checked on the CPU proves nothing
        return _step(
            "matmul",
            Status.FAIL,
            _("The test matmul ran on {device}, not on the GPU.").format(device=r.get("device")),
            _("Update the app on this computer: its self-check probe is out of date."),
        )
    if err == 0:
        return _step(
            "matmul",
            Status.PASS,
            _("{n}×{n} fp32 matmul on {device} matches the CPU exactly.").format(
                n=n, device=r.get("device")
            ),
        )
    return _step(
        "matmul",
        Status.FAIL,
        _("{n}×{n} matmul on {device} is off by up to {error}.").format(
            n=n, device=r.get("device"), error=f"{err:g}"
        ),
        _(
            "Wrong results mean faulty GPU memory or a broken driver: do not train here, ask the "
            "provider for another machine."
        ),
    )


def _judge_bf16(r: dict[str, Any], f: Findings) -> CheckStep:
    if "skipped" in r:
        return _step(
            "bf16_speed", Status.SKIP, _("Skipped: {reason}.").format(reason=r["skipped"])
        )
    if "error" in r:
        return _step(
            "bf16_speed", Status.FAIL, _("The timing failed: {error}").format(error=r["error"])
        )
    tflops = float(r.get("tflops", 0.0))
    measured = _("{n}² BF16 matmul: {tflops} TFLOPS over {seconds} s").format(
        n=r.get("n"), tflops=f"{tflops:,.0f}", seconds=f"{float(r.get('seconds', 0)):.1f}"
    )
    card = f.card or (card_for_gpu_name(f.gpu_names[0]) if f.gpu_names else None)
    if card is None:
        return _step(
            "bf16_speed",
            Status.PASS,
            _("{measured}; no catalogue figure for this card.").format(measured=measured),
        )
    rated, label = card.matmul_tflops("bf16")
    share = tflops / rated
    if share >= BF16_GOOD:
        return _step(
            "bf16_speed",
            Status.PASS,
            _(
                "{measured}: reached {share} of the {card}'s rated {label} — expected for a "
                "short test."
            ).format(measured=measured, share=f"{share:.0%}", card=card.name, label=label),
        )
    hint = _(
        "Look for another process on the GPU, power or thermal throttling "
        "(`nvidia-smi -q -d PERFORMANCE`), a MIG slice, or a different card than ordered."
    )
    status = Status.WARN if share >= BF16_POOR else Status.FAIL
    if status is Status.WARN:
        said = _("{measured}: {share} of the {card}'s rated {label} — lower than usual.")
    else:
        said = _("{measured}: {share} of the {card}'s rated {label} — something is wrong.")
    return _step(
        "bf16_speed",
        status,
        said.format(measured=measured, share=f"{share:.0%}", card=card.name, label=label),
        hint,
    )


def _judge_disk(r: dict[str, Any], f: Findings) -> CheckStep:
    path = r.get("path", "?")
    if "free_bytes" not in r:
        return _step(
            "disk",
            Status.FAIL,
            f"{path}: {r['error'] if 'error' in r else _('no reading')}",
            _("Check the data directory exists and is writable."),
        )
    free_gb, total_gb = r["free_bytes"] / 1e9, r["total_bytes"] / 1e9
    evidence = _("{path}: {free} GB free of {total} GB").format(
        path=path, free=f"{free_gb:,.1f}", total=f"{total_gb:,.1f}"
    )
    if "read_mb_s" in r:
        evidence = _(
            "{evidence}; read {read} MB/s, write {write} MB/s ({size} MB test file)"
        ).format(
            evidence=evidence,
            read=f"{r['read_mb_s']:,.0f}",
            write=f"{r['write_mb_s']:,.0f}",
            size=r.get("size_mb"),
        )
    if "error" in r:
        return _step(
            "disk",
            Status.FAIL,
            f"{evidence}; {r['error']}",
            _("The data directory is not writable: pick another one or fix its permissions."),
        )
    if free_gb < f.min_free_gb:
        return _step(
            "disk",
            Status.FAIL,
            evidence,
            _(
                "Less than {gb} GB free: attach or enlarge the data disk before "
                "uploading datasets and checkpoints."
            ).format(gb=f"{f.min_free_gb:g}"),
        )
    if r.get("read_mb_s", SLOW_READ_MB_S) < SLOW_READ_MB_S:
        return _step(
            "disk",
            Status.WARN,
            evidence,
            _("A slow disk starves the GPU: copy the dataset to local NVMe before training."),
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
