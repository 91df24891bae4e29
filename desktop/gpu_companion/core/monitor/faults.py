"""One GPU of a host that stopped answering while the others stream (lost, needs a reset).

nvidia-smi reports such a GPU inside the stream: an "Unable to determine the device handle for GPU
<bus id>: GPU is lost" line in place of its row, or its row with `[GPU requires reset]` values. The
host stays live for the good GPUs; the fault is shown on its own row, named by index when known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpu_companion.core.common.i18n import _
from gpu_companion.core.monitor.nvsmi import GpuSample, detect_gpu_error

_FAULT_VALUES = ("[gpu requires reset]", "[gpu is lost]")
_BUS_RE = re.compile(r"^([0-9a-f]{4,8}):([0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f])$", re.IGNORECASE)


@dataclass(frozen=True)
class GpuFault:
    """A GPU the driver cannot read; `index` is None when only its bus id is known."""

    index: int | None
    bus_id: str | None
    message: str
    hint: str
    name: str | None = None

    @property
    def key(self) -> tuple[str, object]:
        """What identifies the GPU within one tick of the stream."""
        if self.index is not None:
            return ("index", self.index)
        return ("bus", self.bus_id)

    @property
    def label(self) -> str:
        if self.index is not None:
            return _("GPU {index}").format(index=self.index)
        return _("GPU at {bus}").format(bus=self.bus_id) if self.bus_id else _("A GPU")

    @property
    def short(self) -> str:
        """The state word of the GPU's row (a translated message holds the translated word)."""
        reset = "reset" in self.message or _("needs a reset") in self.message
        return _("needs a reset") if reset else _("lost")


def normal_bus_id(value: str | None) -> str | None:
    """`00000000:1B:00.0` (query output) and `0000:1b:00.0` (error lines) as one spelling."""
    if not value:
        return None
    match = _BUS_RE.match(value.strip())
    if match is None:
        return value.strip().lower()
    return f"{int(match.group(1), 16):04x}:{match.group(2).lower()}"


def fault_in_row(line: str, sample: GpuSample) -> GpuFault | None:
    """A parsed row whose values say the GPU is gone (`[GPU requires reset]`, `[GPU is lost]`)."""
    folded = line.casefold()
    if not any(v in folded for v in _FAULT_VALUES):
        return None
    error = detect_gpu_error(line)
    message = error.message if error is not None else _("The GPU has stopped working.")
    hint = error.hint if error is not None else ""
    where = _("GPU {index}").format(index=sample.index) if sample.index is not None else _("A GPU")
    message = message.replace(_("A GPU on this host"), where, 1)  # the same words in the message
    bus = normal_bus_id(sample.extra.get("pci.bus_id"))
    return GpuFault(sample.index, bus, message, hint, sample.name)


def fault_from_error_line(line: str, index_of_bus: dict[str, int]) -> GpuFault | None:
    """An error line naming one GPU by bus id, placed on its index when an earlier row told it."""
    error = detect_gpu_error(line)
    if error is None or error.kind != "gpu_lost":
        return None
    bus = normal_bus_id(error.bus_id)
    index = index_of_bus.get(bus) if bus is not None else None
    message = error.message
    if index is not None and error.bus_id:
        message = message.replace(
            _("The GPU at {bus}").format(bus=error.bus_id),
            _("GPU {index} ({bus})").format(index=index, bus=error.bus_id),
        )
    return GpuFault(index, bus, message, error.hint)
