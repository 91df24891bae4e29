"""One broken GPU among good ones: nvidia-smi prints "[GPU requires reset]" (or "[GPU is lost]")
in that GPU's row, or an "Unable to determine the device handle" line for it, and real readings
for the others. The self-check names the broken GPU and keeps judging the rest, instead of
treating the whole host as unreadable."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from gpu_companion.core.common.i18n import N_, _
from gpu_companion.core.monitor.nvsmi import GpuSample, parse_query_gpu_csv

_ROW_STATES = (("[gpu requires reset]", N_("needs a reset")), ("[gpu is lost]", N_("is lost")))
_HANDLE_RE = re.compile(r"device handle for GPU\s*([0-9A-Fa-f:.]+?):?\s+(.*)", re.IGNORECASE)


@dataclass(frozen=True)
class BadGpu:
    name: str  # "GPU 3", "GPU 0000:1B:00.0"
    state: str  # "needs a reset", "is lost", "cannot be reached" (in the current language)

    @property
    def text(self) -> str:
        return f"{self.name} {self.state}"


def split_bad_gpus(out: str, fields: Sequence[str]) -> tuple[list[GpuSample], list[BadGpu]]:
    """The readings of the GPUs that answered, and the GPUs that did not (in output order)."""
    good: list[str] = []
    bad: list[BadGpu] = []
    for row, line in enumerate(ln for ln in out.splitlines() if ln.strip()):
        folded = line.casefold()
        state = next((s for needle, s in _ROW_STATES if needle in folded), None)
        if state is not None:
            bad.append(BadGpu(_row_name(line, fields, row), _(state)))
            continue
        handle = _HANDLE_RE.search(line)
        if handle is not None:
            lost = "gpu is lost" in handle.group(2).casefold()
            state = _("is lost") if lost else _("cannot be reached")
            bad.append(BadGpu(f"GPU {handle.group(1)}", state))
            continue
        good.append(line)
    samples = parse_query_gpu_csv("\n".join(good), fields).samples if good else []
    return samples, bad


def _row_name(line: str, fields: Sequence[str], row: int) -> str:
    values = dict(zip(fields, (v.strip() for v in line.split(", ")), strict=False))
    index = values.get("index", "")
    if index.isdigit():
        return f"GPU {index}"
    for key in ("pci.bus_id", "uuid"):
        value = values.get(key, "")
        if value and not value.startswith("["):
            return f"GPU {value}"
    return _("the GPU on line {number}").format(number=row + 1)
