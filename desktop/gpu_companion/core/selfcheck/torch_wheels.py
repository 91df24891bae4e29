"""Which PyTorch build a host's NVIDIA driver can run: the driver reports the newest CUDA version
it supports (top right of `nvidia-smi`), and PyTorch publishes one wheel index per CUDA version.
"""

from __future__ import annotations

import re

from gpu_companion.core.common.i18n import _

# PyTorch's CUDA wheel indexes, oldest first: the newest one the driver supports is the one to use.
WHEEL_CUDA = ((11, 8), (12, 1), (12, 4), (12, 6), (12, 8), (12, 9), (13, 0))
WHEEL_INDEX = "https://download.pytorch.org/whl/cu{}{}"


def wheel_hint(driver_cuda: tuple[int, int] | None, torch_version: str = "") -> str:
    """The pip line that installs a PyTorch build this driver can run."""
    if driver_cuda is None:
        return _(
            "Find the driver's CUDA version (top right of `nvidia-smi`) and install the matching "
            "build from https://pytorch.org/get-started/locally/."
        )
    fitting = [c for c in WHEEL_CUDA if c <= driver_cuda]
    if not fitting:
        return _(
            "The driver supports only CUDA {cuda}, older than any "
            "current PyTorch build: choose an image with a newer NVIDIA driver."
        ).format(cuda=f"{driver_cuda[0]}.{driver_cuda[1]}")
    cuda = fitting[-1]
    version = torch_version.split("+")[0]
    pin = f"torch=={version}" if version else "torch"
    return _(
        "The driver supports CUDA up to {cuda}: install the "
        "CUDA {build} build with `{command}` (or pick a PyTorch image for this driver)."
    ).format(
        cuda=f"{driver_cuda[0]}.{driver_cuda[1]}",
        build=f"{cuda[0]}.{cuda[1]}",
        command=f"pip install --force-reinstall {pin} --index-url {WHEEL_INDEX.format(*cuda)}",
    )


def parse_cuda_version(text: str | None) -> tuple[int, int] | None:
    """(12, 4) from "12.4" or "12.4.1"; None for a CPU build (torch.version.cuda is None)."""
    match = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(match.group(1)), int(match.group(2))) if match else None
