"""One broken GPU among good ones is named, by index, bus id or line, and the rest are read."""

from gpu_companion.core.selfcheck.bad_gpus import split_bad_gpus
from gpu_companion.core.selfcheck.rules import QUERY_FIELDS, Findings, Status, judge

ROW = "{i}, GPU-{i}, NVIDIA A100-SXM4-80GB, 3, 81920, 550.54.15"
RESET = "3, [GPU requires reset], [GPU requires reset], [GPU requires reset], [GPU requires " \
    "reset], [GPU requires reset]"  # fmt: skip


def _out(bad_line: str) -> str:
    return "\n".join(bad_line if i == 3 else ROW.format(i=i) for i in range(8)) + "\n"


def test_a_row_saying_requires_reset_names_that_gpu():
    good, bad = split_bad_gpus(_out(RESET), QUERY_FIELDS)
    assert [g.index for g in good] == [0, 1, 2, 4, 5, 6, 7]
    assert [b.text for b in bad] == ["GPU 3 needs a reset"]


def test_lost_rows_and_device_handle_lines_are_named_too():
    lost = "[GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], [GPU is lost], [N/A]"
    _, bad = split_bad_gpus(_out(lost), QUERY_FIELDS)
    assert [b.text for b in bad] == ["the GPU on line 4 is lost"]
    line = "Unable to determine the device handle for GPU 0000:1B:00.0: Unknown Error"
    good, bad = split_bad_gpus(_out(line), QUERY_FIELDS)
    assert len(good) == 7 and [b.text for b in bad] == ["GPU 0000:1B:00.0 cannot be reached"]


def test_judge_keeps_the_good_gpus_and_fails_only_the_broken_one():
    record = {
        "step": "nvidia_smi",
        "table": {
            "rc": 0,
            "out": "| NVIDIA-SMI 550.54.15  Driver Version: 550.54.15  CUDA Version: 12.4 |",
            "err": "",
        },  # fmt: skip
        "query": {"rc": 0, "out": _out(RESET), "err": ""},
        "apps": {"rc": 0, "out": "", "err": ""},
    }
    steps = {s.key: s for s in judge(record, Findings(expected_gpus=8))}
    assert steps["nvidia_smi"].status is Status.FAIL
    assert steps["nvidia_smi"].evidence == (
        "GPU 3 needs a reset. Driver 550.54.15, CUDA 12.4; the other 7 GPU(s) answer."
    )
    assert steps["gpus"].status is Status.PASS
    assert steps["gpus"].evidence.startswith("7 × NVIDIA A100-SXM4-80GB (81,917 MiB free")


def test_all_good_rows_are_not_broken():
    good, bad = split_bad_gpus(ROW.format(i=0) + "\n", QUERY_FIELDS)
    assert len(good) == 1 and bad == []
