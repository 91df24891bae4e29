"""The nvidia-smi parsers against real captured outputs in ../shared/fixtures/nvidia-smi.

Values asserted here are the ones a person reads in each file. Files captured with `noheader` carry
no field list; the lists below come from the commands quoted in the fixtures' SOURCES.md.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from gpu_companion.core.hosts.registry import LOCAL_HOST
from gpu_companion.core.monitor.collector import CollectorConfig, HostCollector, HostState
from gpu_companion.core.monitor.collector_errors import classify_failure, gpu_problem_from_output
from gpu_companion.core.monitor.nvsmi import (
    ComputeApp,
    GpuSample,
    ParseResult,
    detect_gpu_error,
    parse_compute_apps_csv,
    parse_query_gpu_csv,
)
from tests.integration.recorder import Recorder

MEGAMINER_FIELDS = (
    "gpu_name,utilization.gpu,utilization.memory,temperature.gpu,power.draw,power.limit,"
    "fan.speed,pstate,clocks.current.graphics,clocks.current.memory,power.max_limit,"
    "power.default_limit"
).split(",")
I3PYSTATUS_FIELDS = (
    "memory.total,memory.free,memory.used,temperature.gpu,fan.speed,utilization.gpu,"
    "utilization.memory"
).split(",")
RICKSLAB_RTX2080_FIELDS = (
    "power.limit,power.min_limit,power.max_limit,memory.total,vbios_version,driver_version,name,"
    "gpu_uuid,power.draw,temperature.gpu,temperature.memory,clocks.current.graphics,clocks.sm,"
    "clocks.mem,utilization.gpu,utilization.memory,fan.speed,pcie.link.width.current,pstate"
).split(",")

# Field lists of the files captured without a header; every other file starts with its header.
NOHEADER_QUERY_GPU: dict[str, list[str]] = {
    "issue-akash91-h100nvl-name-deviceid-noheader.csv": ["name", "pci.device_id"],
    "issue-i3pystatus776-new-driver-na.csv": I3PYSTATUS_FIELDS,
    "issue-i3pystatus776-old-driver-not-supported.csv": I3PYSTATUS_FIELDS,
    "issue-megaminer235-gtx770-not-supported-noheader.csv": MEGAMINER_FIELDS,
    "issue-megaminer376-gtx1080ti-x8-unknown-error-noheader.csv": MEGAMINER_FIELDS,
    "issue-nvsmi2-fan-speed-laptop-na.csv": ["fan.speed"],
    "issue-rickslab83-power-draw-x3-noheader-nounits.csv": ["power.draw"],
    "issue-rickslab83-rtx2080-noheader-nounits-unbracketed-NA.csv": RICKSLAB_RTX2080_FIELDS,
    "issue-zabbix9-fan-speed-datacenter-not-supported.csv": ["fan.speed"],
}
NOHEADER_COMPUTE_APPS: dict[str, list[str]] = {
    "uoz-test-mig-in-container-insufficient-permissions-row.csv": [
        "gpu_uuid",
        "pid",
        "process_name",
        "used_gpu_memory",
    ],
}
MASKED_UUID = "GPU-00000000-0000-0000-0000-000000000000"  # the exporter zeroes UUIDs


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _gpus(shared_fixtures: Path, name: str) -> ParseResult[GpuSample]:
    result = parse_query_gpu_csv(
        _read(shared_fixtures / "nvidia-smi" / "query-gpu" / name), NOHEADER_QUERY_GPU.get(name)
    )
    assert result.bad_lines == 0, result.bad_line_texts
    return result


def _apps(shared_fixtures: Path, name: str) -> list[ComputeApp]:
    result = parse_compute_apps_csv(
        _read(shared_fixtures / "nvidia-smi" / "compute-apps" / name),
        NOHEADER_COMPUTE_APPS.get(name),
    )
    assert result.bad_lines == 0, result.bad_line_texts
    return result.samples


# --- every file -------------------------------------------------------------------------------


def test_every_query_gpu_file_parses_cleanly(shared_fixtures: Path) -> None:
    files = sorted((shared_fixtures / "nvidia-smi" / "query-gpu").iterdir())
    assert len(files) >= 15
    for path in files:
        result = _gpus(shared_fixtures, path.name)
        assert result.samples, path.name
        assert result.error is None, path.name


def test_every_compute_apps_file_parses_cleanly(shared_fixtures: Path) -> None:
    files = sorted((shared_fixtures / "nvidia-smi" / "compute-apps").iterdir())
    assert len(files) >= 6
    for path in files:
        for app in _apps(shared_fixtures, path.name):
            assert app.gpu_uuid is not None and app.gpu_uuid.startswith("GPU-"), path.name


def test_every_error_file_is_a_lost_or_unreachable_gpu(shared_fixtures: Path) -> None:
    """ "Unknown Error" after "Unable to determine the device handle" is a GPU the driver cannot
    reach at all, like "GPU is lost": same kind, different wording in the message."""
    expected = {
        "issue-darknet86-windows-gpu-is-lost-wrapped.txt": ("0000:03:00.0", "is lost"),
        "issue-marian251-gpu-is-lost-double-space.txt": ("0000:03:00.0", "is lost"),
        "issue-owod81-gpu-is-lost.txt": ("0000:02:00.0", "is lost"),
        "issue-pdbear22-unknown-error-no-space.txt": ("0000:07:00.0", "unknown error"),
        "issue-xxd3vin19-unknown-error.txt": ("0000:0B:00.0", "unknown error"),
    }
    files = sorted((shared_fixtures / "nvidia-smi" / "errors").iterdir())
    assert {p.name for p in files} >= set(expected)
    for path in files:
        error = detect_gpu_error(_read(path))
        assert error is not None, path.name
        assert error.kind == "gpu_lost", path.name
        if path.name in expected:
            bus_id, words = expected[path.name]
            assert error.bus_ids == (bus_id,), path.name
            assert words in error.message.lower(), path.name
        # The same text arriving where a CSV was expected is reported, not raised.
        assert parse_query_gpu_csv(_read(path)).error == error
        # ... and the monitor shows the host as "GPU lost", with the message and what to do.
        failure = classify_failure(gpu_problem_from_output(15, _read(path)))  # type: ignore[arg-type]
        assert (failure.state, failure.message) == (HostState.GPU_LOST, error.message)
        assert failure.retry and "reboot" in failure.hint.lower()


def test_a_captured_dead_gpu_output_puts_the_collector_in_gpu_lost(
    shared_fixtures: Path, standin, monkeypatch
):  # type: ignore[no-untyped-def]
    """The stand-in replays a real error output as this computer's nvidia-smi."""
    for key, value in standin.env.items():
        monkeypatch.setenv(key, value)
    name = "issue-darknet86-windows-gpu-is-lost-wrapped.txt"
    path = shared_fixtures / "nvidia-smi" / "errors" / name
    standin.configure(mode="error_file", error_file=str(path))
    rec = Recorder()
    collector = HostCollector(LOCAL_HOST, None, rec, CollectorConfig(interval_ms=200),
                              local_nvidia_smi=str(standin.bin_dir / "nvidia-smi"))  # fmt: skip
    collector.start()
    try:
        rec.wait(lambda: collector.status.state == HostState.GPU_LOST)
        assert "0000:03:00.0 is lost" in collector.status.message
    finally:
        collector.stop()


# --- values read in the files -----------------------------------------------------------------


def test_h100_under_load(shared_fixtures: Path) -> None:
    (gpu,) = _gpus(shared_fixtures, "uoz-h100-80gb-590.48.01-load.csv").samples
    assert gpu.timestamp == datetime(2026, 7, 14, 8, 12, 53, 353000)
    assert (gpu.index, gpu.uuid, gpu.name) == (0, MASKED_UUID, "NVIDIA H100 80GB HBM3")
    assert (gpu.utilization_gpu, gpu.utilization_memory) == (100, 11)
    assert (gpu.memory_used_mib, gpu.memory_total_mib) == (19818, 81559)
    assert (gpu.temperature_c, gpu.power_draw_w, gpu.power_limit_w) == (59, 631.95, 700.0)
    assert (gpu.clocks_sm_mhz, gpu.pstate, gpu.fan_speed_pct) == (1980, "P0", None)
    assert gpu.extra["driver_version"] == "590.48.01"
    assert gpu.extra["power.draw.instant"] == "625.68 W"
    assert gpu.extra["display_mode"] is None  # [Requested functionality has been deprecated]
    assert gpu.extra["fabric.health.summary"] is None  # bare N/A
    assert "kmd_version" not in gpu.extra  # 590 does not know it
    assert len(gpu.extra) == 212 - 14


def test_mig_h100_has_no_utilisation(shared_fixtures: Path) -> None:
    (gpu,) = _gpus(shared_fixtures, "uoz-h100-mig-590.48.01-load.csv").samples
    assert gpu.extra["mig.mode.current"] == "Enabled"
    assert gpu.utilization_gpu is None
    assert gpu.utilization_memory is None
    assert (gpu.memory_used_mib, gpu.memory_total_mib) == (11125, 81559)
    assert (gpu.temperature_c, gpu.power_draw_w) == (53, 433.78)


def test_windows_rtx_2080_super(shared_fixtures: Path) -> None:
    (gpu,) = _gpus(shared_fixtures, "uoz-rtx2080super-windows-610.62-load.csv").samples
    assert gpu.name == "NVIDIA GeForce RTX 2080 SUPER"
    assert (gpu.fan_speed_pct, gpu.pstate, gpu.temperature_c) == (38, "P2", 44)
    assert (gpu.memory_used_mib, gpu.memory_total_mib) == (1366, 8192)
    assert (gpu.utilization_gpu, gpu.power_draw_w, gpu.power_limit_w) == (7, 97.99, 250.0)
    assert gpu.clocks_sm_mhz == 2040
    assert gpu.extra["driver_model.current"] == "WDDM"
    assert gpu.extra["kmd_version"] == "610.62"
    assert gpu.extra["power.draw.average"] is None  # Turing: only the instant reading
    assert gpu.extra["temperature.memory"] is None  # bare N/A
    assert gpu.extra["bbx.time_run"] is None  # [Function Not Found], header unit [seconds]


def test_rtx_4080_super_fan_at_zero_is_zero(shared_fixtures: Path) -> None:
    (gpu,) = _gpus(shared_fixtures, "uoz-rtx4080super-595.71.05-load.csv").samples
    assert gpu.fan_speed_pct == 0
    assert (gpu.power_draw_w, gpu.power_limit_w, gpu.clocks_sm_mhz) == (84.24, 320.0, 2805)


def test_megaminer_eight_gpu_rig(shared_fixtures: Path) -> None:
    gpus = _gpus(shared_fixtures, "issue-megaminer376-gtx1080ti-x8-unknown-error-noheader.csv")
    rig = gpus.samples
    assert len(rig) == 8
    assert [g.name for g in rig] == ["GeForce GTX 1080 Ti"] * 7 + ["GeForce GTX 1080"]
    assert rig[0].fan_speed_pct is None  # [Unknown Error]
    assert [g.fan_speed_pct for g in rig[1:]] == [60, 83, 65, 77, 71, 83, 71]
    assert (rig[0].utilization_gpu, rig[0].temperature_c, rig[0].power_draw_w) == (53, 84, 123.0)
    assert (rig[5].power_draw_w, rig[5].power_limit_w) == (294.91, 262.5)  # above the limit
    assert rig[7].extra["clocks.current.memory"] == "4513 MHz"
    assert all(g.pstate == "P2" for g in rig)


def test_p100_nounits_header_keeps_units(shared_fixtures: Path) -> None:
    (gpu,) = _gpus(shared_fixtures, "netdata-tesla-p100-csv-nounits.csv").samples
    assert (gpu.name, gpu.uuid) == (
        "Tesla P100-PCIE-16GB",
        "GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6",
    )
    assert (gpu.fan_speed_pct, gpu.pstate) == (None, "P0")
    assert (gpu.memory_used_mib, gpu.utilization_gpu, gpu.temperature_c) == (0, 0, 37)
    assert (gpu.power_draw_w, gpu.clocks_sm_mhz) == (28.16, 405)
    assert gpu.extra["memory.reserved"] == "103"
    assert gpu.extra["memory.free"] == "16280"


def test_mindminer_nounits_with_unknown_error(shared_fixtures: Path) -> None:
    name = "issue-mindminer627-rtx2080ti-nounits-header-unknown-error.csv"
    (gpu,) = _gpus(shared_fixtures, name).samples
    assert gpu.name == "GeForce RTX 2080 Ti"
    assert (gpu.utilization_gpu, gpu.utilization_memory, gpu.temperature_c) == (100, 37, 56)
    assert (gpu.power_draw_w, gpu.power_limit_w, gpu.fan_speed_pct) == (228.82, 210.0, 56)
    assert gpu.extra["power.default_limit"] is None


def test_gtx_770_mostly_not_supported(shared_fixtures: Path) -> None:
    (gpu,) = _gpus(shared_fixtures, "issue-megaminer235-gtx770-not-supported-noheader.csv").samples
    assert gpu.name == "GeForce GTX 770"
    assert (gpu.utilization_gpu, gpu.power_draw_w, gpu.power_limit_w) == (None, None, None)
    assert (gpu.temperature_c, gpu.fan_speed_pct, gpu.pstate) == (52, 52, "P0")


@pytest.mark.parametrize(
    "name",
    ["issue-i3pystatus776-new-driver-na.csv", "issue-i3pystatus776-old-driver-not-supported.csv"],
)
def test_fan_speed_spelling_changed_between_drivers(shared_fixtures: Path, name: str) -> None:
    (gpu,) = _gpus(shared_fixtures, name).samples
    assert (gpu.memory_total_mib, gpu.memory_used_mib, gpu.temperature_c) == (2004, 0, 44)
    assert gpu.fan_speed_pct is None


def test_rtx_2080_unbracketed_na(shared_fixtures: Path) -> None:
    name = "issue-rickslab83-rtx2080-noheader-nounits-unbracketed-NA.csv"
    (gpu,) = _gpus(shared_fixtures, name).samples
    assert (gpu.name, gpu.uuid) == ("GeForce RTX 2080", "GPU-22b2c6ac-2d49-4863-197c-9c469071178a")
    assert (gpu.power_limit_w, gpu.power_draw_w, gpu.memory_total_mib) == (200.0, 176.98, 7979)
    assert (gpu.temperature_c, gpu.clocks_sm_mhz, gpu.fan_speed_pct) == (45, 1965, 100)
    assert (gpu.utilization_gpu, gpu.utilization_memory, gpu.pstate) == (86, 55, "P2")
    assert gpu.extra["temperature.memory"] is None
    assert gpu.extra["vbios_version"] == "90.04.23.00.5F"
    assert gpu.extra["clocks.current.memory"] == "7199"  # queried as clocks.mem


def test_single_field_queries(shared_fixtures: Path) -> None:
    power = _gpus(shared_fixtures, "issue-rickslab83-power-draw-x3-noheader-nounits.csv")
    assert [g.power_draw_w for g in power.samples] == [133.91, 189.84, 104.34]
    for name in ("issue-nvsmi2-fan-speed-laptop-na.csv",
                 "issue-zabbix9-fan-speed-datacenter-not-supported.csv"):  # fmt: skip
        assert [g.fan_speed_pct for g in _gpus(shared_fixtures, name).samples] == [None]
    nvl = _gpus(shared_fixtures, "issue-akash91-h100nvl-name-deviceid-noheader.csv").samples
    assert [(g.name, g.extra["pci.device_id"]) for g in nvl] == [("NVIDIA H100 NVL", "0x232110DE")]


# --- compute apps -----------------------------------------------------------------------------


def test_h100_processes(shared_fixtures: Path) -> None:
    apps = _apps(shared_fixtures, "uoz-h100-590.48.01-load.csv")
    assert [(a.pid, a.process_name, a.used_memory_mib) for a in apps] == [
        (11327, "/root/tools/memhog", 2566),
        (11328, "/root/tools/memhog", 1542),
        (11345, "./gpu_burn", 15690),
    ]
    assert apps[0].timestamp == datetime(2026, 7, 14, 8, 12, 53, 500000)
    assert (apps[0].gpu_name, apps[0].gpu_bus_id) == ("NVIDIA H100 80GB HBM3", "00000000:00:09.0")
    mig = _apps(shared_fixtures, "uoz-h100-mig-590.48.01-load.csv")
    assert [a.used_memory_mib for a in mig] == [2296, 1272, 7484]


def test_idle_gpu_has_no_processes(shared_fixtures: Path) -> None:
    assert _apps(shared_fixtures, "uoz-h100-590.48.01-idle-header-only.csv") == []


def test_windows_processes_have_no_memory_figure(shared_fixtures: Path) -> None:
    apps = _apps(shared_fixtures, "uoz-rtx2080super-windows-wddm-610.62-load.csv")
    assert len(apps) == 21
    assert all(a.used_memory_mib is None for a in apps)
    assert apps[0].pid == 2140
    assert apps[0].process_name == "C:\\Windows\\System32\\dwm.exe"
    assert "C:\\Program Files\\NVIDIA Corporation\\NVIDIA App\\CEF\\NVIDIA Overlay.exe" in {
        a.process_name for a in apps
    }
    assert apps[0].extra == {"gpu_serial": None}


def test_odd_process_names(shared_fixtures: Path) -> None:
    apps = _apps(shared_fixtures, "uoz-test-h200-odd-process-names.csv")
    assert [(a.pid, a.process_name, a.used_memory_mib) for a in apps] == [
        (10525, "/root/tools/memhog", 1542),
        (10529, "/root/tools/memh\u00f6g \u00fcn\u00efcode", 818),
        (10526, "/root/tools/mem? hog", 818),
        (10528, '/root/tools/mem "q" hog', 818),
        (10550, "./gpu_burn", 14410),
    ]


def test_insufficient_permissions_row(shared_fixtures: Path) -> None:
    name = "uoz-test-mig-in-container-insufficient-permissions-row.csv"
    (app,) = _apps(shared_fixtures, name)
    assert app.gpu_uuid == "GPU-ae3738d5-9aa2-e1c9-53be-65b6d373d3d9"
    assert (app.pid, app.process_name, app.used_memory_mib) == (None, None, None)


# --- the self-check reads the driver's CUDA version from every captured table -------------------


@pytest.mark.parametrize(
    ("name", "cuda"),
    [
        ("issue-miniweather12-a100-old-format-515-PARTIAL.txt", "11.7"),
        ("thamada-a100-sxm4-80gb-x4-555.42.02.txt", "12.5"),
        ("uoz-h100-590.48.01-load.txt", "13.1"),
        ("uoz-rtx2080super-610.57.04-kmd-version-header.txt", "13.3"),  # "CUDA UMD Version"
        ("uoz-rtx2080super-windows-wddm-610.62-load.txt", "13.3"),
    ],
)
def test_the_selfcheck_passes_its_cuda_check_on_each_table(
    shared_fixtures: Path, name: str, cuda: str
) -> None:
    from gpu_companion.core.selfcheck.rules import Findings, Status, judge

    table = _read(shared_fixtures / "nvidia-smi" / "table" / name)
    smi = {
        "step": "nvidia_smi",
        "fields": ["index", "uuid", "name", "memory.used", "memory.total", "kmd_version"],
        "table": {"rc": 0, "out": table},
        "query": {"rc": 0, "out": "0, GPU-1, NVIDIA GeForce RTX 2080 SUPER, 815, 8192, 610.57\n"},
        "apps": {"rc": 0, "out": ""},
    }
    torch = {"step": "torch", "imported": True, "version": "2.5.1", "cuda": cuda,
             "available": True, "device_count": 1,
             "devices": ["NVIDIA GeForce RTX 2080 SUPER"]}  # fmt: skip
    findings = Findings()
    steps = {s.key: s for r in (smi, torch) for s in judge(r, findings)}
    assert f"CUDA {cuda}" in steps["nvidia_smi"].evidence
    assert findings.driver_cuda == tuple(map(int, cuda.split(".")))
    assert steps["cuda_match"].status is Status.PASS, steps["cuda_match"].evidence
