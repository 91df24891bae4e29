"""What nvidia-smi prints instead of readings when a GPU, the driver or the tool itself is gone.

Kept apart from the CSV parsers: these messages arrive on any command (the table, a query, -L) and
the self-check needs them without parsing anything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.common.i18n import N_, _

_BUS_ID_RE = re.compile(
    r"devicehandleforGPU([0-9A-F]{4,8}:[0-9A-F]{2}:[0-9A-F]{2}\.[0-9A-F])", re.IGNORECASE
)


GpuErrorKind = Literal["gpu_lost", "no_driver", "no_devices"]


@dataclass(frozen=True)
class GpuError:
    """nvidia-smi's way of saying no reading will come; `message`/`hint` are for the user."""

    kind: GpuErrorKind
    message: str
    hint: str
    bus_ids: tuple[str, ...] = ()

    @property
    def bus_id(self) -> str | None:
        """The first GPU named in the message, if any."""
        return self.bus_ids[0] if self.bus_ids else None

    def as_user_error(self) -> UserError:
        """The same text as the exception the UI shows for errors a user can meet."""
        return UserError(self.message, hint=self.hint)


_LOST_HINT = N_(
    "Save what you can, then reboot the instance. If the GPU is still missing after a reboot, "
    "ask the provider to move you to another machine; you may be billed until you release it."
)
_NO_DRIVER_TEXT: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (
        ("driver/libraryversionmismatch",),
        N_("The NVIDIA driver and its library on this host have different versions."),
        N_("This happens after a driver update without a reboot: reboot the instance."),
    ),
    (
        ("couldn'tcommunicatewiththenvidiadriver", "nvidia-smihasfailed"),
        N_("nvidia-smi cannot talk to the NVIDIA driver on this host."),
        N_("The driver is not loaded. Reboot the instance, or choose an image with the driver."),
    ),
    (
        ("failedtoinitializenvml",),
        N_("nvidia-smi cannot reach the NVIDIA driver from this container."),
        N_("Restart the container; if that does not help, reboot the instance."),
    ),
    (
        (
            "nvidia-smi:commandnotfound",
            "commandnotfound:nvidia-smi",
            "nvidia-smi:notfound",
            "'nvidia-smi'isnotrecognized",
            "nvidia-smi:nosuchfileordirectory",
        ),
        N_("nvidia-smi is not installed on this host."),
        N_("The image has no NVIDIA driver tools: choose a GPU image, or install the driver."),
    ),
)


def detect_gpu_error(text: str) -> GpuError | None:
    """Recognise the messages nvidia-smi prints instead of readings, even hard-wrapped.

    Both "GPU is lost" and "Unknown Error" after "Unable to determine the device handle" mean the
    driver cannot reach that GPU at all, so both are kind `gpu_lost`; only the wording differs.
    """
    squashed = re.sub(r"\s+", "", text)  # console wrapping may insert breaks anywhere
    folded = squashed.casefold()
    if "devicehandlefor" in folded or "[gpuislost]" in folded or "[gpurequiresreset]" in folded:
        bus_ids = tuple(dict.fromkeys(m.group(1) for m in _BUS_ID_RE.finditer(squashed)))
        # faults.py puts the GPU's index in place of these words: the same msgids there
        where = (
            _("The GPU at {bus}").format(bus=", ".join(bus_ids))
            if bus_ids
            else _("A GPU on this host")
        )
        if "gpuislost" in folded:
            message = _("{where} is lost: the driver can no longer reach it.").format(where=where)
        elif "requiresreset" in folded:
            message = _("{where} has stopped working and needs a reset.").format(where=where)
        else:
            message = _("{where} cannot be reached: nvidia-smi reports an unknown error.").format(
                where=where
            )
        return GpuError("gpu_lost", message, _(_LOST_HINT), bus_ids)
    for needles, message, hint in _NO_DRIVER_TEXT:
        if any(needle in folded for needle in needles):
            return GpuError("no_driver", _(message), _(hint))
    if "nodeviceswerefound" in folded:
        return GpuError(
            "no_devices",
            _("nvidia-smi finds no GPU on this host."),
            _(
                "The instance may have no GPU attached, or the container was started without GPU "
                "access (docker --gpus all). Check the instance type with your provider."
            ),
        )
    return None
