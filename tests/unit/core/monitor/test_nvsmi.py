"""nvidia-smi CSV and error parsing, on small samples written for these tests."""

from __future__ import annotations

from datetime import datetime

import pytest

from gpu_companion.core.common.errors import UserError
from gpu_companion.core.monitor.nvsmi import (
    DEFAULT_COMPUTE_APPS_FIELDS,
    DEFAULT_FIELDS,
    MAX_BAD_LINE_TEXTS,
    NO_VALUE,
    ComputeApp,
    GpuSample,
    NvsmiParseError,
    build_query_compute_apps_argv,
    build_query_gpu_argv,
    canonical_field,
    choose_fields,
    detect_gpu_error,
    is_no_value,
    parse_compute_apps_csv,
    parse_compute_apps_line,
    parse_help_query_gpu,
    parse_number,
    parse_query_gpu_csv,
    parse_query_gpu_line,
    split_header,
)

# A 2-GPU box queried with the monitor's fields, once with units and once with nounits.
WITH_UNITS = (
    "2024/03/09 14:05:01.250, 0, GPU-aaaa, NVIDIA A40, 91 %, 40 %, 30211 MiB, 46068 MiB, 71, "
    "287.40 W, 300.00 W, 1740 MHz, P0, 64 %"
)
NO_UNITS = (
    "2024/03/09 14:05:01.250, 0, GPU-aaaa, NVIDIA A40, 91, 40, 30211, 46068, 71, "
    "287.40, 300.00, 1740, P0, 64"
)
HEADER = (
    "timestamp, index, uuid, name, utilization.gpu [%], utilization.memory [%], "
    "memory.used [MiB], memory.total [MiB], temperature.gpu, power.draw [W], power.limit [W], "
    "clocks.current.sm [MHz], pstate, fan.speed [%]"
)
SECOND_GPU = (
    "2024/03/09 14:05:01.252, 1, GPU-bbbb, NVIDIA A40, 0 %, 0 %, 4 MiB, 46068 MiB, 33, "
    "22.10 W, 300.00 W, 210 MHz, P8, 30 %"
)
EXPECTED_FIRST = GpuSample(
    timestamp=datetime(2024, 3, 9, 14, 5, 1, 250000),
    index=0,
    uuid="GPU-aaaa",
    name="NVIDIA A40",
    utilization_gpu=91,
    utilization_memory=40,
    memory_used_mib=30211,
    memory_total_mib=46068,
    temperature_c=71,
    power_draw_w=287.40,
    power_limit_w=300.00,
    clocks_sm_mhz=1740,
    pstate="P0",
    fan_speed_pct=64,
)


# --- values -----------------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", sorted(NO_VALUE))
def test_every_no_value_spelling_reads_as_none(spelling: str) -> None:
    assert is_no_value(spelling)
    assert parse_number(spelling) is None
    fields = ("name", "power.draw", "fan.speed", "pstate", "ecc.mode.current")
    sample = parse_query_gpu_line(", ".join(["Tesla T4"] + [spelling] * 4), fields)
    assert sample.power_draw_w is None
    assert sample.fan_speed_pct is None
    assert sample.pstate is None
    assert sample.extra == {"ecc.mode.current": None}


def test_the_listed_spellings_are_all_there() -> None:
    assert {
        "[N/A]",
        "N/A",
        "[Not Supported]",
        "[Unknown Error]",
        "[Insufficient Permissions]",
        "[Requested functionality has been deprecated]",
        "[Function Not Found]",
        "[GPU is lost]",
        "[GPU requires reset]",
        "[Not Found]",
        "",
    } <= NO_VALUE


def test_a_real_zero_stays_zero_and_missing_is_none() -> None:
    sample = parse_query_gpu_line("0, [N/A], 0.00", ("utilization.gpu", "fan.speed", "power.draw"))
    assert sample.utilization_gpu == 0
    assert sample.power_draw_w == 0.0
    assert sample.fan_speed_pct is None


def test_an_unknown_bracketed_status_in_a_number_column_is_none() -> None:
    assert parse_number("[Some Future Status]") is None


@pytest.mark.parametrize(
    ("text", "number"),
    [("819 MiB", 819.0), ("38 %", 38.0), ("111.50 W", 111.5), ("1746 MHz", 1746.0),
     ("12 us", 12.0), ("3.50 W/s", 3.5), ("7", 7.0), (" 42 ", 42.0)],
)  # fmt: skip
def test_numbers_with_and_without_units(text: str, number: float) -> None:
    assert parse_number(text) == number


@pytest.mark.parametrize("text", ["fast", "12 34", "MiB", "1.2.3"])
def test_garbage_number_raises(text: str) -> None:
    with pytest.raises(NvsmiParseError):
        parse_number(text)


# --- header and one line ----------------------------------------------------------------------


def test_split_header_drops_units() -> None:
    assert split_header(HEADER + "\r\n") == [
        "timestamp",
        "index",
        "uuid",
        "name",
        "utilization.gpu",
        "utilization.memory",
        "memory.used",
        "memory.total",
        "temperature.gpu",
        "power.draw",
        "power.limit",
        "clocks.current.sm",
        "pstate",
        "fan.speed",
    ]
    assert split_header("bbx.time_run [seconds], x.rate [W/s], y.delay [us]") == [
        "bbx.time_run",
        "x.rate",
        "y.delay",
    ]


def test_line_with_units_and_nounits_give_the_same_sample() -> None:
    assert parse_query_gpu_line(WITH_UNITS, DEFAULT_FIELDS) == EXPECTED_FIRST
    assert parse_query_gpu_line(NO_UNITS, DEFAULT_FIELDS) == EXPECTED_FIRST


def test_header_names_with_units_work_as_fields() -> None:
    assert parse_query_gpu_line(WITH_UNITS, split_header(HEADER)) == EXPECTED_FIRST
    assert parse_query_gpu_line(WITH_UNITS, HEADER.split(", ")) == EXPECTED_FIRST


def test_aliases_fill_the_same_attributes() -> None:
    sample = parse_query_gpu_line(
        "RTX A5000, GPU-cccc, 1500", ("gpu_name", "gpu_uuid", "clocks.sm")
    )
    assert (sample.name, sample.uuid, sample.clocks_sm_mhz) == ("RTX A5000", "GPU-cccc", 1500)
    assert canonical_field("clocks_throttle_reasons.hw_slowdown") == (
        "clocks_event_reasons.hw_slowdown"
    )


def test_other_fields_land_in_extra_as_text() -> None:
    sample = parse_query_gpu_line(
        "L4, 0x27B810DE, Disabled, N/A, 0 MiB",
        (
            "name",
            "pci.device_id",
            "mig.mode.current",
            "temperature.memory",
            "protected_memory.used",
        ),
    )
    assert sample.extra == {
        "pci.device_id": "0x27B810DE",
        "mig.mode.current": "Disabled",
        "temperature.memory": None,
        "protected_memory.used": "0 MiB",
    }


def test_mig_enabled_gpu_has_no_utilisation_but_memory() -> None:
    fields = ("index", "utilization.gpu", "utilization.memory", "memory.used", "mig.mode.current")
    sample = parse_query_gpu_line("0, [N/A], [N/A], 5120 MiB, Enabled", fields)
    assert sample.utilization_gpu is None
    assert sample.utilization_memory is None
    assert sample.memory_used_mib == 5120
    assert sample.extra["mig.mode.current"] == "Enabled"


def test_timestamp_forms() -> None:
    fields = ("timestamp",)
    assert parse_query_gpu_line("2023/12/31 23:59:59.009", fields).timestamp == datetime(
        2023, 12, 31, 23, 59, 59, 9000
    )
    assert parse_query_gpu_line("2023/12/31 23:59:59", fields).timestamp == datetime(
        2023, 12, 31, 23, 59, 59
    )
    with pytest.raises(NvsmiParseError):
        parse_query_gpu_line("yesterday at noon", fields)


@pytest.mark.parametrize(
    "line",
    [
        "",
        "   ",
        "2024/03/09 14:05:01.250, 0, GPU-aaaa, NVIDIA A40, 91 %",  # cut off mid-row
        WITH_UNITS + ", 12 %",  # one column too many
        "Killed",
        "2024/03/09 14:05:01.250, zero, GPU-aaaa, NVIDIA A40, 91 %, 40 %, 30211 MiB, 46068 MiB, "
        "71, 287.40 W, 300.00 W, 1740 MHz, P0, 64 %",  # index is not a number
    ],
)
def test_bad_lines_raise_a_value_error(line: str) -> None:
    with pytest.raises(NvsmiParseError) as caught:
        parse_query_gpu_line(line, DEFAULT_FIELDS)
    assert isinstance(caught.value, ValueError)
    assert caught.value.line == line


def test_samples_are_hashable_despite_extra() -> None:
    assert len({EXPECTED_FIRST, EXPECTED_FIRST}) == 1


# --- whole CSV --------------------------------------------------------------------------------


def test_csv_with_header() -> None:
    result = parse_query_gpu_csv(f"{HEADER}\n{WITH_UNITS}\n{SECOND_GPU}\n")
    assert result.bad_lines == 0
    assert result.error is None
    assert result.samples[0] == EXPECTED_FIRST
    assert [s.index for s in result.samples] == [0, 1]
    assert result.samples[1].utilization_gpu == 0


def test_csv_noheader_needs_fields() -> None:
    result = parse_query_gpu_csv(f"{NO_UNITS}\n", DEFAULT_FIELDS)
    assert result.samples == [EXPECTED_FIRST]
    with pytest.raises(NvsmiParseError):
        parse_query_gpu_csv(f"{NO_UNITS}\n")


def test_csv_header_is_skipped_when_fields_are_given_too() -> None:
    text = f"{HEADER}\n{WITH_UNITS}\n{HEADER}\n{SECOND_GPU}\n"  # a header may repeat in a stream
    result = parse_query_gpu_csv(text, DEFAULT_FIELDS)
    assert len(result.samples) == 2
    assert result.bad_lines == 0


def test_csv_crlf_and_blank_lines() -> None:
    text = f"\r\n{HEADER}\r\n\r\n{WITH_UNITS}\r\n   \r\n{SECOND_GPU}"
    result = parse_query_gpu_csv(text)
    assert result.samples[0] == EXPECTED_FIRST
    assert result.samples[1].fan_speed_pct == 30
    assert result.samples[1].pstate == "P8"
    assert result.bad_lines == 0


def test_csv_garbage_and_partial_lines_are_counted_not_fatal() -> None:
    torn = SECOND_GPU[:40]
    text = f"{WITH_UNITS}\n{torn}\nsegmentation fault\n{SECOND_GPU}\n"
    result = parse_query_gpu_csv(text, DEFAULT_FIELDS)
    assert [s.index for s in result.samples] == [0, 1]
    assert result.bad_lines == 2
    assert result.bad_line_texts == [torn, "segmentation fault"]
    assert result.error is None


def test_csv_bad_line_texts_are_capped_but_all_counted() -> None:
    result = parse_query_gpu_csv("junk\n" * (MAX_BAD_LINE_TEXTS + 5), ("power.draw",))
    assert result.bad_lines == MAX_BAD_LINE_TEXTS + 5
    assert len(result.bad_line_texts) == MAX_BAD_LINE_TEXTS


def test_csv_empty_output() -> None:
    assert parse_query_gpu_csv("").samples == []
    assert parse_query_gpu_csv("\n\n", DEFAULT_FIELDS).samples == []


def test_csv_that_is_an_error_message_reports_the_error() -> None:
    text = "Unable to determine the device handle for GPU 0000:41:00.0: GPU is lost.  Reboot..\n"
    for fields in (None, DEFAULT_FIELDS):
        result = parse_query_gpu_csv(text, fields)
        assert result.samples == []
        assert result.bad_lines == 1
        assert result.error is not None
        assert result.error.kind == "gpu_lost"
        assert result.error.bus_id == "0000:41:00.0"


def test_csv_row_with_a_lost_gpu_value_reports_it() -> None:
    text = "0, 61 %\n1, [GPU is lost]\n"
    result = parse_query_gpu_csv(text, ("index", "utilization.gpu"))
    assert [s.utilization_gpu for s in result.samples] == [61, None]
    assert result.error is not None
    assert result.error.kind == "gpu_lost"


# --- compute apps -----------------------------------------------------------------------------

APPS_HEADER = "gpu_uuid, pid, process_name, used_gpu_memory [MiB]"


@pytest.mark.parametrize(
    "name",
    [
        "python train.py",
        "/opt/run, then stop",
        "/x/a, b, c, d",
        'serve "fast" mode',
        "/home/zoë/模型/推理",
        "/data/what? now",
        "ends with comma,",
        ", starts with separator",
    ],
)
def test_process_names_keep_commas_quotes_and_unicode(name: str) -> None:
    line = f"GPU-dddd, 4242, {name}, 2048 MiB"
    app = parse_compute_apps_line(line, ("gpu_uuid", "pid", "process_name", "used_gpu_memory"))
    assert app == ComputeApp(gpu_uuid="GPU-dddd", pid=4242, process_name=name, used_memory_mib=2048)


def test_compute_apps_csv_with_header_and_default_fields() -> None:
    text = (
        "timestamp, gpu_uuid, gpu_name, gpu_bus_id, pid, process_name, used_gpu_memory [MiB]\n"
        "2024/05/01 08:00:00.100, GPU-eeee, NVIDIA L40S, 00000000:81:00.0, 77, vllm, serve, "
        "40960 MiB\n"
    )
    for fields in (None, DEFAULT_COMPUTE_APPS_FIELDS):
        result = parse_compute_apps_csv(text, fields)
        assert result.bad_lines == 0
        assert result.samples == [
            ComputeApp(
                timestamp=datetime(2024, 5, 1, 8, 0, 0, 100000),
                gpu_uuid="GPU-eeee",
                gpu_name="NVIDIA L40S",
                gpu_bus_id="00000000:81:00.0",
                pid=77,
                process_name="vllm, serve",
                used_memory_mib=40960,
            )
        ]


def test_compute_apps_header_only_means_no_rows() -> None:
    result = parse_compute_apps_csv(APPS_HEADER + "\n")
    assert result.samples == []
    assert result.bad_lines == 0


def test_compute_apps_hidden_and_windows_rows() -> None:
    text = (
        "GPU-ffff, [Insufficient Permissions], [Insufficient Permissions], "
        "[Insufficient Permissions]\r\n"
        "GPU-ffff, 9001, C:\\Program Files (x86)\\Some App\\app.exe, [N/A]\r\n"
    )
    result = parse_compute_apps_csv(text, split_header(APPS_HEADER))
    hidden, windows = result.samples
    assert (hidden.pid, hidden.process_name, hidden.used_memory_mib) == (None, None, None)
    assert windows.pid == 9001
    assert windows.process_name == "C:\\Program Files (x86)\\Some App\\app.exe"
    assert windows.used_memory_mib is None


def test_compute_apps_bad_rows_are_counted() -> None:
    text = f"{APPS_HEADER}\nGPU-ffff, 12\nGPU-ffff, twelve, x, 1 MiB\nGPU-ffff, 13, ok, 1 MiB\n"
    result = parse_compute_apps_csv(text)
    assert [a.pid for a in result.samples] == [13]
    assert result.bad_lines == 2


def test_compute_apps_extra_and_alias() -> None:
    app = parse_compute_apps_line(
        "GPU-1, [N/A], 5, a, b, 3 MiB", ("gpu_uuid", "gpu_serial", "pid", "name", "used_memory")
    )
    assert app.process_name == "a, b"
    assert app.used_memory_mib == 3
    assert app.extra == {"gpu_serial": None}


# --- argv -------------------------------------------------------------------------------------


def test_stream_argv_for_the_default_fields() -> None:
    assert build_query_gpu_argv(DEFAULT_FIELDS, 1000) == [
        "nvidia-smi",
        "--query-gpu=timestamp,index,uuid,name,utilization.gpu,utilization.memory,memory.used,"
        "memory.total,temperature.gpu,power.draw,power.limit,clocks.sm,pstate,fan.speed",
        "--format=csv,noheader,nounits",
        "-lms",
        "1000",
    ]


def test_one_shot_argv() -> None:
    assert build_query_gpu_argv(["name"], None) == [
        "nvidia-smi",
        "--query-gpu=name",
        "--format=csv,noheader,nounits",
    ]
    assert build_query_compute_apps_argv() == [
        "nvidia-smi",
        "--query-compute-apps=timestamp,gpu_uuid,gpu_name,gpu_bus_id,pid,process_name,"
        "used_gpu_memory",
        "--format=csv,noheader,nounits",
    ]


@pytest.mark.parametrize("interval", [0, -5, True])
def test_argv_rejects_bad_intervals(interval: int) -> None:
    with pytest.raises(ValueError):
        build_query_gpu_argv(DEFAULT_FIELDS, interval)


@pytest.mark.parametrize("fields", [[], ["name", "a b"], ["name;reboot"], ["--help"], [""]])
def test_argv_rejects_bad_field_names(fields: list[str]) -> None:
    with pytest.raises(ValueError):
        build_query_gpu_argv(fields, 500)


# --- --help-query-gpu -------------------------------------------------------------------------

HELP = """\
Fields you may pass to the "--query-gpu" option, one after another:

"index"
Position of the card as the driver counts it, starting at 0.

"name" or "gpu_name"
What the card calls itself, e.g. "NVIDIA L4".

    "fan.speed"
    How hard the fan spins, in percent.

Section about clocks_throttle_reasons properties
Reasons why clocks are held down.

"clocks_throttle_reasons.hw_slowdown" or "clocks_event_reasons.hw_slowdown"
The hardware is slowing the clocks.

"clocks.current.sm" or "clocks.sm"
Current SM clock.
"""


def test_help_lists_every_alias_and_no_prose() -> None:
    assert parse_help_query_gpu(HELP) == {
        "index",
        "name",
        "gpu_name",
        "fan.speed",
        "clocks_throttle_reasons.hw_slowdown",
        "clocks_event_reasons.hw_slowdown",
        "clocks.current.sm",
        "clocks.sm",
    }
    assert parse_help_query_gpu("") == set()


def test_choose_fields_keeps_order_and_drops_unknown() -> None:
    known = parse_help_query_gpu(HELP)
    assert choose_fields(["index", "power.draw", "name", "clocks.sm"], known) == (
        "index",
        "name",
        "clocks.sm",
    )


def test_choose_fields_uses_an_alias_the_driver_knows() -> None:
    old_driver = {"index", "clocks_throttle_reasons.sw_power_cap", "clocks.current.sm"}
    assert choose_fields(
        ["clocks_event_reasons.sw_power_cap", "clocks.sm", "gpu_name"], old_driver
    ) == ("clocks_throttle_reasons.sw_power_cap", "clocks.current.sm")


def test_choose_fields_dedupes_and_trusts_an_empty_help() -> None:
    assert choose_fields(["name", "gpu_name", "index"], {"name", "gpu_name", "index"}) == (
        "name",
        "index",
    )
    assert choose_fields(DEFAULT_FIELDS, set()) == DEFAULT_FIELDS


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "bus_id", "words"),
    [
        (
            "Unable to determine the device handle for GPU 0000:21:00.0: GPU is lost. "
            "Reboot the system to recover this GPU\n",
            "0000:21:00.0",
            "is lost",
        ),
        (
            "$ nvidia-smi\nUnable to determine the device handle for GPU 0000:C1:00.0: GPU is "
            "lost.  Reboot the system to recover this GPU",
            "0000:C1:00.0",
            "is lost",
        ),
        (
            "Unable to determine the device handle for GPU0000:E2:00.0: Unknown Error",
            "0000:E2:00.0",
            "unknown error",
        ),
        (  # a console that wraps at a fixed width, even inside words
            "   Unable to determine the device handle for GPU 0000:05:00.0: GPU is lost.  Reb\r\n"
            "   oot the system to recover this GPU\r\n",
            "0000:05:00.0",
            "is lost",
        ),
        ("0, GPU-abc, [GPU requires reset]", None, "needs a reset"),
    ],
)
def test_dead_gpu_messages(text: str, bus_id: str | None, words: str) -> None:
    error = detect_gpu_error(text)
    assert error is not None
    assert error.kind == "gpu_lost"
    assert error.bus_id == bus_id
    assert words in error.message.lower()
    assert "reboot" in error.hint.lower()


def test_several_lost_gpus_are_all_named() -> None:
    text = (
        "Unable to determine the device handle for GPU 0000:1A:00.0: GPU is lost.\n"
        "Unable to determine the device handle for GPU 0000:1B:00.0: GPU is lost.\n"
    )
    error = detect_gpu_error(text)
    assert error is not None
    assert error.bus_ids == ("0000:1A:00.0", "0000:1B:00.0")
    assert "0000:1A:00.0" in error.message and "0000:1B:00.0" in error.message


@pytest.mark.parametrize(
    ("text", "kind", "words"),
    [
        (
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
            "Make sure that the latest NVIDIA driver is installed and running.",
            "no_driver",
            "cannot talk to the nvidia driver",
        ),
        ("bash: nvidia-smi: command not found", "no_driver", "not installed"),
        ("sh: 1: nvidia-smi: not found", "no_driver", "not installed"),
        ("zsh: command not found: nvidia-smi", "no_driver", "not installed"),
        (
            "'nvidia-smi' is not recognized as an internal or external command,",
            "no_driver",
            "not installed",
        ),
        (
            "Failed to initialize NVML: Driver/library version mismatch",
            "no_driver",
            "different versions",
        ),
        ("Failed to initialize NVML: Unknown Error", "no_driver", "container"),
        ("No devices were found", "no_devices", "no gpu"),
    ],
)
def test_driver_and_device_messages(text: str, kind: str, words: str) -> None:
    error = detect_gpu_error(text)
    assert error is not None
    assert error.kind == kind
    assert error.bus_id is None
    assert words in error.message.lower()


def test_ordinary_output_is_no_error() -> None:
    assert detect_gpu_error(f"{HEADER}\n{WITH_UNITS}\n") is None
    assert detect_gpu_error("") is None


def test_gpu_error_becomes_a_user_error() -> None:
    error = detect_gpu_error("No devices were found")
    assert error is not None
    user_error = error.as_user_error()
    assert isinstance(user_error, UserError)
    assert user_error.message == error.message
    assert user_error.hint == error.hint
