"""A GPU that cannot be read, in the words nvidia-smi uses for it (project's own small samples)."""

from __future__ import annotations

from gpu_companion.core.monitor.faults import (
    fault_from_error_line,
    fault_in_row,
    normal_bus_id,
)
from gpu_companion.core.monitor.nvsmi import parse_query_gpu_line

FIELDS = ("index", "name", "utilization.gpu", "pci.bus_id")


def test_bus_ids_from_rows_and_error_lines_read_the_same():
    assert normal_bus_id("00000000:1B:00.0") == normal_bus_id("0000:1b:00.0") == "0000:1b:00.0"
    assert normal_bus_id(None) is None and normal_bus_id("") is None


def test_an_error_line_is_placed_on_the_index_an_earlier_row_gave_its_bus():
    line = "Unable to determine the device handle for GPU 0000:1B:00.0: GPU is lost.  Reboot"
    fault = fault_from_error_line(line, {"0000:1b:00.0": 3})
    assert fault is not None and (fault.index, fault.short, fault.label) == (3, "lost", "GPU 3")
    assert fault.message.startswith("GPU 3 (0000:1B:00.0) is lost")
    unknown = fault_from_error_line(line, {})
    assert unknown is not None and unknown.index is None and unknown.label == "GPU at 0000:1b:00.0"
    assert fault_from_error_line("garbage, line", {}) is None
    no_driver = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
    assert fault_from_error_line(no_driver, {}) is None  # the host's problem, not one GPU's


def test_a_row_of_reset_values_is_a_fault_and_a_row_of_na_is_not():
    line = "2, NVIDIA H100, [GPU requires reset], 00000000:1A:00.0"
    fault = fault_in_row(line, parse_query_gpu_line(line, FIELDS))
    assert fault is not None
    assert (fault.index, fault.name, fault.short) == (2, "NVIDIA H100", "needs a reset")
    assert fault.message == "GPU 2 has stopped working and needs a reset."
    assert fault.bus_id == "0000:1a:00.0"
    fine = "1, NVIDIA H100, [N/A], 00000000:19:00.0"
    assert fault_in_row(fine, parse_query_gpu_line(fine, FIELDS)) is None
